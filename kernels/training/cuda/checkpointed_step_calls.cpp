// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::training::cuda {

std::unique_ptr<GpuStack> make_gpu_stack(const StackShape& shape, const float* weights, const float* inputs,
                                         const float* targets, int rows, MemoryLedger& ledger) {
  return cuda_kernels().training.make_gpu_stack(shape, weights, inputs, targets, rows, ledger);
}

}  // namespace dlsys::training::cuda
