// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/matmul/matmul_cuda.h"

namespace dlsys::matmul::cuda {

struct DeviceOperands::State {};

DeviceOperands::DeviceOperands(const Shape&, const float*, const float*) { throw RunFailure(cuda_status().reason); }
DeviceOperands::~DeviceOperands() = default;
TimingStats DeviceOperands::time(Rung, const MeasureOptions&, int) { throw RunFailure(cuda_status().reason); }
int DeviceOperands::best_warp_tile() { throw RunFailure(cuda_status().reason); }
void DeviceOperands::poison_output() { throw RunFailure(cuda_status().reason); }
void DeviceOperands::download_output(float*) { throw RunFailure(cuda_status().reason); }

TimingStats run(Variant, const Shape&, const float*, const float*, float*, const MeasureOptions&) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::matmul::cuda
