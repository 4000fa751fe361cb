// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/attention/attention_cuda.h"

namespace dlsys::attention::cuda {

RunStats run(const Request&, const Problem&, const float*, const float*, const float*, float*, const MeasureOptions&) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::attention::cuda
