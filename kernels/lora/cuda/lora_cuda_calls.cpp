// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::lora::cuda {

GpuForwardTiming time_forward_gpu(const InferenceLayer& layer, const MeasureOptions& options,
                                  const std::function<void()>& between) {
  return cuda_kernels().lora.time_forward_gpu(layer, options, between);
}

}  // namespace dlsys::lora::cuda
