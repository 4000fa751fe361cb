#pragma once
// Every operation's CUDA entry points, one table per operation (declared beside its functions, in <op>/*_cuda.h),
// gathered into the one table the CUDA library hands the program (engine/cuda_plugin.h). The program calls the
// functions of <op>/*_cuda.h as before: <op>/cuda/*_calls.cpp forwards each call through this table.
#include "engine/cuda_plugin.h"
#include "kernels/attention/attention_cuda.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/ipc_ring_processes.h"
#include "kernels/collectives/nccl_processes.h"
#include "kernels/collectives/nccl_thread_ranks.h"
#include "kernels/common/device_buffer.h"
#include "kernels/ddp/ddp_cuda.h"
#include "kernels/decoder/decoder_cuda.h"
#include "kernels/fusion/fusion_cuda.h"
#include "kernels/hardware/hardware_cuda.h"
#include "kernels/lora/lora_cuda.h"
#include "kernels/matmul/matmul_cuda.h"
#include "kernels/mesh/mesh_gemms_cuda.h"
#include "kernels/moe/experts_cuda.h"
#include "kernels/pipeline/executor_cuda.h"
#include "kernels/precision/precision_cuda.h"
#include "kernels/quant/gemv_cuda.h"
#include "kernels/roofline/roofline_cuda.h"
#include "kernels/serving/model_cuda.h"
#include "kernels/tensor/tensor_cuda.h"
#include "kernels/training/checkpointed_step_cuda.h"
#include "kernels/zero/zero_cuda.h"

namespace dlsys {

// One table per operation, a field per entry point, each typed by the function it stands for.
namespace cuda {
struct DeviceCalls {  // kernels/common/device_buffer.h
  decltype(&::dlsys::cuda::device_allocate) device_allocate;
  decltype(&::dlsys::cuda::device_free) device_free;
  decltype(&::dlsys::cuda::copy_to_device) copy_to_device;
  decltype(&::dlsys::cuda::copy_to_host_bytes) copy_to_host_bytes;
  decltype(&::dlsys::cuda::event_elapsed_us) event_elapsed_us;
  decltype(&::dlsys::cuda::synchronize) synchronize;
};
}  // namespace cuda

namespace attention::cuda {
struct Calls {  // kernels/attention/attention_cuda.h
  RunStats (*run)(const Request& request, const Problem& problem, const float* q, const float* k, const float* v,
                  float* o, const MeasureOptions& options);
};
}  // namespace attention::cuda

namespace collectives::cuda {
struct Calls {  // kernels/collectives/collectives_cuda.h
  decltype(&::dlsys::collectives::cuda::place_ranks) place_ranks;
  decltype(&::dlsys::collectives::cuda::nccl_compiled) nccl_compiled;
  decltype(&::dlsys::collectives::cuda::measure) measure;
  decltype(&::dlsys::collectives::cuda::copy_bandwidth_gbps) copy_bandwidth_gbps;
};
}  // namespace collectives::cuda

namespace collectives::cuda {
struct NcclProcessCalls {  // kernels/collectives/nccl_processes.h
  decltype(&::dlsys::collectives::cuda::make_nccl_process_rank) make_nccl_process_rank;
};
}  // namespace collectives::cuda

namespace collectives::cuda {
struct NcclThreadCalls {  // kernels/collectives/nccl_thread_ranks.h
  decltype(&::dlsys::collectives::cuda::make_nccl_thread_ranks) make_nccl_thread_ranks;
};
}  // namespace collectives::cuda

namespace collectives::cuda {
struct IpcRingCalls {  // kernels/collectives/ipc_ring_processes.h
  decltype(&::dlsys::collectives::cuda::make_ipc_ring_rank) make_ipc_ring_rank;
};
}  // namespace collectives::cuda

namespace ddp::cuda {
struct Calls {  // kernels/ddp/ddp_cuda.h
  decltype(&::dlsys::ddp::cuda::place_ranks) place_ranks;
  decltype(&::dlsys::ddp::cuda::train_gpu) train_gpu;
  decltype(&::dlsys::ddp::cuda::train_gpu_process) train_gpu_process;
};
}  // namespace ddp::cuda

namespace decoder::cuda {
struct Calls {  // kernels/decoder/decoder_cuda.h
  decltype(&::dlsys::decoder::cuda::attention_row) attention_row;
};
}  // namespace decoder::cuda

namespace fusion::cuda {
struct Calls {  // kernels/fusion/fusion_cuda.h
  decltype(&::dlsys::fusion::cuda::add_bias) add_bias;
  decltype(&::dlsys::fusion::cuda::relu_pass) relu_pass;
  decltype(&::dlsys::fusion::cuda::add_bias_relu) add_bias_relu;
  decltype(&::dlsys::fusion::cuda::cos_pass) cos_pass;
  decltype(&::dlsys::fusion::cuda::cos_cos) cos_cos;
  decltype(&::dlsys::fusion::cuda::gelu_pass) gelu_pass;
  decltype(&::dlsys::fusion::cuda::chain_op) chain_op;
  decltype(&::dlsys::fusion::cuda::chain_fused) chain_fused;
  decltype(&::dlsys::fusion::cuda::copy) copy;
  decltype(&::dlsys::fusion::cuda::empty_kernel) empty_kernel;
};
}  // namespace fusion::cuda

namespace hardware::cuda {
struct Calls {  // kernels/hardware/hardware_cuda.h
  decltype(&::dlsys::hardware::cuda::chase) chase;
  decltype(&::dlsys::hardware::cuda::read_blocks) read_blocks;
  decltype(&::dlsys::hardware::cuda::read_sum) read_sum;
  decltype(&::dlsys::hardware::cuda::shared_read_threads) shared_read_threads;
  decltype(&::dlsys::hardware::cuda::shared_read_bytes) shared_read_bytes;
  decltype(&::dlsys::hardware::cuda::shared_read) shared_read;
  decltype(&::dlsys::hardware::cuda::sm_clock_mhz) sm_clock_mhz;
  decltype(&::dlsys::hardware::cuda::pinned_allocate) pinned_allocate;
  decltype(&::dlsys::hardware::cuda::pinned_free) pinned_free;
  decltype(&::dlsys::hardware::cuda::peer_copy) peer_copy;
};
}  // namespace hardware::cuda

namespace lora::cuda {
struct Calls {  // kernels/lora/lora_cuda.h
  decltype(&::dlsys::lora::cuda::time_forward_gpu) time_forward_gpu;
};
}  // namespace lora::cuda

namespace matmul::cuda {
struct Calls {  // kernels/matmul/matmul_cuda.h
  decltype(&::dlsys::matmul::cuda::make_device_operands) make_device_operands;
};
}  // namespace matmul::cuda

namespace mesh::cuda {
struct Calls {  // kernels/mesh/mesh_gemms_cuda.h
  decltype(&::dlsys::mesh::cuda::make_gpu_rank_gemms) make_gpu_rank_gemms;
};
}  // namespace mesh::cuda

namespace moe::cuda {
struct Calls {  // kernels/moe/experts_cuda.h
  decltype(&::dlsys::moe::cuda::make_gpu_experts) make_gpu_experts;
};
}  // namespace moe::cuda

namespace pipeline::cuda {
struct Calls {  // kernels/pipeline/executor_cuda.h
  decltype(&::dlsys::pipeline::cuda::place_devices) place_devices;
  decltype(&::dlsys::pipeline::cuda::execute_schedule) execute_schedule;
};
}  // namespace pipeline::cuda

namespace precision::cuda {
struct Calls {  // kernels/precision/precision_cuda.h
  decltype(&::dlsys::precision::cuda::round_on_device) round_on_device;
  decltype(&::dlsys::precision::cuda::gemm) gemm;
};
}  // namespace precision::cuda

namespace quant::cuda {
struct Calls {  // kernels/quant/gemv_cuda.h
  decltype(&::dlsys::quant::cuda::gemv_fp32) gemv_fp32;
  decltype(&::dlsys::quant::cuda::gemv_fp16) gemv_fp16;
  decltype(&::dlsys::quant::cuda::gemv_quantized) gemv_quantized;
};
}  // namespace quant::cuda

namespace roofline::cuda {
struct Calls {  // kernels/roofline/roofline_cuda.h
  decltype(&::dlsys::roofline::cuda::stream_copy) stream_copy;
  decltype(&::dlsys::roofline::cuda::stream_scale) stream_scale;
  decltype(&::dlsys::roofline::cuda::stream_add) stream_add;
  decltype(&::dlsys::roofline::cuda::stream_triad) stream_triad;
  decltype(&::dlsys::roofline::cuda::fma_peak_blocks) fma_peak_blocks;
  decltype(&::dlsys::roofline::cuda::fma_peak_chains) fma_peak_chains;
  decltype(&::dlsys::roofline::cuda::fma_peak_threads) fma_peak_threads;
  decltype(&::dlsys::roofline::cuda::fma_peak) fma_peak;
  decltype(&::dlsys::roofline::cuda::fma_peak_flop) fma_peak_flop;
  decltype(&::dlsys::roofline::cuda::fma_family) fma_family;
  decltype(&::dlsys::roofline::cuda::softmax_rows) softmax_rows;
  decltype(&::dlsys::roofline::cuda::gemv_bf16) gemv_bf16;
  decltype(&::dlsys::roofline::cuda::scale_call_costs) scale_call_costs;
  decltype(&::dlsys::roofline::cuda::empty_launch_and_wait_us) empty_launch_and_wait_us;
};
}  // namespace roofline::cuda

namespace serving::cuda {
struct Calls {  // kernels/serving/model_cuda.h
  decltype(&::dlsys::serving::cuda::make_model) make_model;
};
}  // namespace serving::cuda

namespace tensor::cuda {
struct Calls {  // kernels/tensor/tensor_cuda.h
  decltype(&::dlsys::tensor::cuda::place_ranks) place_ranks;
  decltype(&::dlsys::tensor::cuda::make_gpu_tensor_layer) make_gpu_tensor_layer;
};
}  // namespace tensor::cuda

namespace training::cuda {
struct Calls {  // kernels/training/checkpointed_step_cuda.h
  decltype(&::dlsys::training::cuda::make_gpu_stack) make_gpu_stack;
};
}  // namespace training::cuda

namespace zero::cuda {
struct Calls {  // kernels/zero/zero_cuda.h
  decltype(&::dlsys::zero::cuda::place_ranks) place_ranks;
  decltype(&::dlsys::zero::cuda::train_sharded_gpu) train_sharded_gpu;
};
}  // namespace zero::cuda

struct CudaKernels {
  cuda::DeviceCalls device;
  attention::cuda::Calls attention;
  collectives::cuda::Calls collectives;
  collectives::cuda::NcclProcessCalls nccl_processes;
  collectives::cuda::NcclThreadCalls nccl_threads;
  collectives::cuda::IpcRingCalls ipc_ring;
  ddp::cuda::Calls ddp;
  decoder::cuda::Calls decoder;
  fusion::cuda::Calls fusion;
  hardware::cuda::Calls hardware;
  lora::cuda::Calls lora;
  matmul::cuda::Calls matmul;
  mesh::cuda::Calls mesh;
  moe::cuda::Calls moe;
  pipeline::cuda::Calls pipeline;
  precision::cuda::Calls precision;
  quant::cuda::Calls quant;
  roofline::cuda::Calls roofline;
  serving::cuda::Calls serving;
  tensor::cuda::Calls tensor;
  training::cuda::Calls training;
  zero::cuda::Calls zero;
};

// The loaded library's table. Throws RunFailure with cuda_status().reason where there is none (a build without
// CUDA, or a library that could not be opened).
const CudaKernels& cuda_kernels();

}  // namespace dlsys
