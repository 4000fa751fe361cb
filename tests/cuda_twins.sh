#!/usr/bin/env bash
# Every CUDA source has a CPU twin (the implementation its results are checked against, or the reason it has none)
# and a test that runs it on a GPU. The table below is the list; a .cu file without a row, or a row whose files are
# gone, fails this check, so a new kernel cannot arrive without its twin and its test.
set -u
root=${1:?usage: cuda_twins.sh PROJECT_ROOT}
cd "$root" || exit 1

# cuda source | CPU twin, or "none: why" | test that runs it on a GPU [| the source through which the test runs it]
table=$(
  cat <<'TABLE'
kernels/attention/cuda/attention_cuda.cu|kernels/attention/cpu/reference.cpp|tests/cuda/test_attention_cuda.cpp
kernels/attention/cuda/flash_general.cu|kernels/attention/cpu/v2_flash.cpp|tests/cuda/test_attention_cuda.cpp
kernels/attention/cuda/flash_registers.cu|kernels/attention/cpu/v2_flash.cpp|tests/cuda/test_attention_cuda.cpp
kernels/attention/cuda/flash_tensor.cu|kernels/attention/cpu/v2_flash.cpp|tests/cuda/test_attention_cuda.cpp
kernels/attention/cuda/softmax_rows.cu|kernels/attention/cpu/reference.cpp|tests/cuda/test_attention_cuda.cpp
kernels/collectives/cuda/collectives_cuda.cu|kernels/collectives/cpu/ring.cpp|tests/cuda/test_collectives_cuda.cpp
kernels/collectives/cuda/stream_ring.cu|kernels/collectives/cpu/ring.cpp|tests/cuda/test_collectives_cuda.cpp
kernels/collectives/cuda/ipc_link.cu|none: a transport between processes, checked through the ring that uses it|tests/cli/mpi_gpu.sh
kernels/collectives/cuda/ipc_ring_processes.cu|kernels/collectives/cpu/ring.cpp|tests/cli/mpi_gpu.sh
kernels/collectives/cuda/nccl_processes.cu|kernels/collectives/cpu/reference.cpp|tests/cli/mpi_gpu.sh
kernels/collectives/cuda/nccl_thread_ranks.cu|kernels/collectives/cpu/all_to_all.cpp|tests/cuda/test_collectives_cuda.cpp
kernels/common/cuda/cuda_check.cu|none: error checks and device arrays, used by every kernel|tests/cuda/test_roofline_cuda.cpp
kernels/common/cuda/device_buffer.cu|none: device memory and event timing, used by every kernel|tests/cuda/test_roofline_cuda.cpp
kernels/ddp/cuda/ddp_cuda.cu|kernels/ddp/cpu/trainer.cpp|tests/cuda/test_ddp_cuda.cpp
kernels/decoder/cuda/decode_attention.cu|kernels/decoder/cpu/decoder.cpp|tests/cuda/test_decoder_cuda.cpp
kernels/fusion/cuda/fusion_cuda.cu|kernels/fusion/cpu/pointwise.cpp|tests/cuda/test_fusion_cuda.cpp
kernels/hardware/cuda/gpu_probes.cu|kernels/hardware/cpu/pointer_chase.cpp|tests/cuda/test_hardware_cuda.cpp
kernels/lora/cuda/lora_cuda.cu|kernels/lora/cpu/lora.cpp|tests/cuda/test_lora_cuda.cpp
kernels/matmul/cuda/device_operands.cu|kernels/matmul/cpu/reference.cpp|tests/cuda/test_matmul_cuda.cpp
kernels/matmul/cuda/simt_kernels.cu|kernels/matmul/cpu/v2_tiled.cpp|tests/cuda/test_matmul_cuda.cpp
kernels/matmul/cuda/warptile.cu|kernels/matmul/cpu/v2_tiled.cpp|tests/cuda/test_matmul_cuda.cpp
kernels/matmul/cuda/tensor_core_kernels.cu|kernels/matmul/cpu/reference.cpp|tests/cuda/test_matmul_cuda.cpp
kernels/mesh/cuda/mesh_gemms_cuda.cu|kernels/pipeline/cpu/mlp_block.cpp|tests/cuda/test_mesh_cuda.cpp
kernels/moe/cuda/experts_cuda.cu|kernels/moe/cpu/experts.cpp|tests/cuda/test_moe_cuda.cpp
kernels/pipeline/cuda/executor_cuda.cu|kernels/pipeline/cpu/executor.cpp|tests/cuda/test_pipeline_cuda.cpp
kernels/precision/cuda/precision_cuda.cu|kernels/precision/cpu/float_format.cpp|tests/cuda/test_formats_cuda.cpp
kernels/quant/cuda/gemv_cuda.cu|kernels/quant/cpu/gemv.cpp|tests/cuda/test_quant_cuda.cpp
kernels/roofline/cuda/roofline_cuda.cu|kernels/roofline/cpu/stream.cpp|tests/cuda/test_roofline_cuda.cpp
kernels/serving/cuda/model_cuda.cu|kernels/serving/cpu/model.cpp|tests/cuda/test_serving_cuda.cpp
kernels/tensor/cuda/tensor_cuda.cu|kernels/tensor/cpu/rank_layer.cpp|tests/cuda/test_tensor_cuda.cpp
kernels/training/cuda/checkpointed_step_cuda.cu|kernels/training/cpu/checkpointed_step.cpp|tests/cuda/test_checkpointing_cuda.cpp
kernels/training/cuda/mlp_stack_cuda.cu|kernels/training/cpu/mlp_stack.cpp|tests/cuda/test_ddp_cuda.cpp|kernels/ddp/cuda/ddp_cuda.cu
kernels/zero/cuda/zero_cuda.cu|kernels/zero/cpu/sharded_training.cpp|tests/cuda/test_zero_cuda.cpp
TABLE
)

status=0
problem() {
  echo "$1"
  status=1
}
listed=$(cut -d'|' -f1 <<<"$table")
while IFS= read -r source; do
  grep -qxF "$source" <<<"$listed" || problem "$source has no row (add its CPU twin and its GPU test to tests/cuda_twins.sh)"
done < <(find kernels -name '*.cu' | sort)
while IFS='|' read -r source twin test through; do
  [[ -f $source ]] || problem "$source is listed but gone"
  [[ $twin == none:* || -f $twin ]] || problem "$source: its CPU twin $twin is gone"
  [[ -f $test ]] || problem "$source: its test $test is gone"
  # A doctest file includes a header of the op it tests (kernels/<op>/), of the source's own op or
  # of the source that runs it; a shell test runs the lab.
  op=$(cut -d/ -f2 <<<"$source")
  if [[ -n $through ]]; then
    grep -q "#include \"kernels/$op/" "$through" || problem "$source: $through does not include it"
    op=$(cut -d/ -f2 <<<"$through")
  fi
  if [[ $test == *.cpp ]] && ! grep -q "#include \"kernels/$op/" "$test"; then
    problem "$source: $test includes nothing of $op"
  fi
done <<<"$table"
[[ $status == 0 ]] && echo "every CUDA source has its CPU twin and its GPU test ($(wc -l <<<"$table") sources)"
exit $status
