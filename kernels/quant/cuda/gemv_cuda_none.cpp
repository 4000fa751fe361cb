// Built when the CUDA backend is not: the quant lesson then never chooses it, and a direct call says why.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/quant/gemv_cuda.h"

namespace dlsys::quant::cuda {

TimingStats gemv_fp32(const float*, std::int64_t, std::int64_t, const float*, float*, const MeasureOptions&) {
  throw RunFailure(cuda_status().reason);
}
TimingStats gemv_fp16(const std::uint16_t*, std::int64_t, std::int64_t, const std::uint16_t*, float*,
                      const MeasureOptions&) {
  throw RunFailure(cuda_status().reason);
}
TimingStats gemv_quantized(const QuantizedMatrix&, const float*, float*, const MeasureOptions&, int) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::quant::cuda
