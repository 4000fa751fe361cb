// The host-side sizes of the GPU DDP trainer (see ddp_cuda.h), built with or without CUDA so they are tested on the
// CPU.
#include <algorithm>

#include "kernels/ddp/buckets.h"
#include "kernels/ddp/ddp_cuda.h"

namespace dlsys::ddp::cuda {

std::int64_t gpu_rank_bytes(const TrainConfig& c) {
  const std::int64_t params = training::parameter_count(c.shape), w = c.shape.width;
  const std::int64_t rows = c.rows_per_micro_step(), share = c.global_batch / c.ranks;
  const std::int64_t floats = 2 * params                               // weights, gradients
                              + (2ll * c.shape.layers + 1) * rows * w  // activations
                              + 3 * rows * w                           // backward's dy, dz, dx
                              + 2ll * c.steps * share * w              // its inputs and targets, every step
                              + collectives::gpu_ring_landing_elements(c.ranks, std::min(c.bucket_elements, params));
  return floats * std::int64_t(sizeof(float));
}

std::int64_t gpu0_bytes_needed(const TrainConfig& c, const collectives::GpuPlacement& placement) {
  const std::int64_t ranks_on_gpu0 = placement.emulated ? placement.ranks : 1;
  return ranks_on_gpu0 * (gpu_rank_bytes(c) + kGpuRankMarginBytes);
}

}  // namespace dlsys::ddp::cuda
