// The CUDA library's one exported function: the table of every operation's entry points (kernels/common/
// cuda_kernels.h). Each row names the library's own function, so a signature that drifts from its table's field
// fails to compile here.
#include "engine/cuda_plugin.h"
#include "kernels/common/cuda/device_status.h"
#include "kernels/common/cuda_kernels.h"

namespace dlsys {

namespace {

namespace at = attention::cuda;
namespace co = collectives::cuda;
namespace dd = ddp::cuda;
namespace fu = fusion::cuda;
namespace hw = hardware::cuda;
namespace mm = matmul::cuda;
namespace pi = pipeline::cuda;
namespace pr = precision::cuda;
namespace qu = quant::cuda;
namespace ro = roofline::cuda;
namespace te = tensor::cuda;
namespace ze = zero::cuda;

CudaStatus probe_status() { return cuda::device_status(); }

const CudaKernels kKernels{
    .device = {&cuda::device_allocate, &cuda::device_free, &cuda::copy_to_device, &cuda::copy_to_host_bytes,
               &cuda::event_elapsed_us, &cuda::synchronize},
    .attention = {static_cast<decltype(at::Calls::run)>(&at::run)},
    .collectives = {&co::place_ranks, &co::nccl_compiled, &co::measure, &co::copy_bandwidth_gbps},
    .nccl_processes = {&co::make_nccl_process_rank},
    .nccl_threads = {&co::make_nccl_thread_ranks},
    .ipc_ring = {&co::make_ipc_ring_rank},
    .ddp = {&dd::place_ranks, &dd::train_gpu, &dd::train_gpu_process},
    .decoder = {&decoder::cuda::attention_row},
    .fusion = {&fu::add_bias, &fu::relu_pass, &fu::add_bias_relu, &fu::cos_pass, &fu::cos_cos, &fu::gelu_pass,
               &fu::chain_op, &fu::chain_fused, &fu::copy, &fu::empty_kernel},
    .hardware = {&hw::chase, &hw::read_blocks, &hw::read_sum, &hw::shared_read_threads, &hw::shared_read_bytes,
                 &hw::shared_read, &hw::sm_clock_mhz, &hw::pinned_allocate, &hw::pinned_free, &hw::peer_copy},
    .lora = {&lora::cuda::time_forward_gpu},
    .matmul = {&mm::make_device_operands},
    .mesh = {&mesh::cuda::make_gpu_rank_gemms},
    .moe = {&moe::cuda::make_gpu_experts},
    .pipeline = {&pi::place_devices, &pi::execute_schedule},
    .precision = {&pr::round_on_device, &pr::gemm},
    .quant = {&qu::gemv_fp32, &qu::gemv_fp16, &qu::gemv_quantized},
    .roofline = {&ro::stream_copy, &ro::stream_scale, &ro::stream_add, &ro::stream_triad, &ro::fma_peak_blocks,
                 &ro::fma_peak_chains, &ro::fma_peak_threads, &ro::fma_peak, &ro::fma_peak_flop, &ro::fma_family,
                 &ro::softmax_rows, &ro::gemv_bf16, &ro::scale_call_costs, &ro::empty_launch_and_wait_us},
    .serving = {&serving::cuda::make_model},
    .tensor = {&te::place_ranks, &te::make_gpu_tensor_layer},
    .training = {&training::cuda::make_gpu_stack},
    .zero = {&ze::place_ranks, &ze::train_sharded_gpu},
};

const CudaPlugin kPlugin{
    .interface_version = kCudaPluginInterfaceVersion, .probe_status = &probe_status, .kernels = &kKernels};

}  // namespace

}  // namespace dlsys

extern "C" __attribute__((visibility("default"))) const dlsys::CudaPlugin* dlsys_cuda_plugin() {
  return &dlsys::kPlugin;
}
