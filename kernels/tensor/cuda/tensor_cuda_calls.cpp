// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::tensor::cuda {

GpuPlacement place_ranks(int ranks) { return cuda_kernels().tensor.place_ranks(ranks); }
std::unique_ptr<GpuTensorLayer> make_gpu_tensor_layer(const LayerShape& shape) {
  return cuda_kernels().tensor.make_gpu_tensor_layer(shape);
}

}  // namespace dlsys::tensor::cuda
