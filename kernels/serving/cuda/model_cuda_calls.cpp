// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::serving::cuda {

std::unique_ptr<ModelBackend> make_model(const ModelShape& shape, const WeightPointers& weights, int layers, int slots,
                                         int max_rows) {
  return cuda_kernels().serving.make_model(shape, weights, layers, slots, max_rows);
}

}  // namespace dlsys::serving::cuda
