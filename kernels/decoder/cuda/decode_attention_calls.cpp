// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::decoder::cuda {

TimingStats attention_row(const Shape& shape, const float* q, const float* k, const float* v, std::int64_t n,
                          float* out, const MeasureOptions& options) {
  return cuda_kernels().decoder.attention_row(shape, q, k, v, n, out, options);
}

}  // namespace dlsys::decoder::cuda
