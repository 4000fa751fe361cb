// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::moe::cuda {

std::unique_ptr<GpuExperts> make_gpu_experts(const Experts& experts, int ranks, std::int64_t max_rows, int devices) {
  return cuda_kernels().moe.make_gpu_experts(experts, ranks, max_rows, devices);
}

}  // namespace dlsys::moe::cuda
