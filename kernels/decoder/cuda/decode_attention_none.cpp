// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/decoder/decoder_cuda.h"

namespace dlsys::decoder::cuda {

TimingStats attention_row(const Shape&, const float*, const float*, const float*, std::int64_t, float*,
                          const MeasureOptions&) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::decoder::cuda
