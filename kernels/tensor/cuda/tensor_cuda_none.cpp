// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/tensor/tensor_cuda.h"

namespace dlsys::tensor::cuda {

struct GpuTensorLayer::Impl {};

GpuPlacement place_ranks(int) { throw RunFailure(cuda_status().reason); }

GpuTensorLayer::GpuTensorLayer(const LayerShape&) { throw RunFailure(cuda_status().reason); }
GpuTensorLayer::~GpuTensorLayer() = default;
const LayerShape& GpuTensorLayer::shape() const { throw RunFailure(cuda_status().reason); }
const GpuPlacement& GpuTensorLayer::placement() const { throw RunFailure(cuda_status().reason); }
std::vector<RankStepTimes> GpuTensorLayer::step() { throw RunFailure(cuda_status().reason); }
std::int64_t GpuTensorLayer::activation_bytes(int) const { throw RunFailure(cuda_status().reason); }
std::vector<HostRankCopy> GpuTensorLayer::results() const { throw RunFailure(cuda_status().reason); }

}  // namespace dlsys::tensor::cuda
