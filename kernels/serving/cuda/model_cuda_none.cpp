// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/serving/model_cuda.h"

namespace dlsys::serving::cuda {

std::unique_ptr<ModelBackend> make_model(const ModelShape&, const WeightPointers&, int, int, int) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::serving::cuda
