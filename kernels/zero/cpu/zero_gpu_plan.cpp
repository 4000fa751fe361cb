// The host-side sizes of the GPU ZeRO trainer (see zero_cuda.h), built with or without CUDA so they are tested on the
// CPU.
#include "kernels/training/mlp_stack.h"
#include "kernels/zero/zero_cuda.h"

namespace dlsys::zero::cuda {

std::int64_t gpu_rank_bytes(const ZeroConfig& c) {
  const std::int64_t psi = training::parameter_count(c.shape), layer = training::parameters_per_layer(c.shape);
  const std::int64_t shard = psi / c.ranks, rows = std::int64_t(c.rows_per_rank) * c.shape.width;
  const int stage = c.stage;
  const std::int64_t weights = 2 * (stage >= 3 ? shard : psi), gradients = 2 * (stage >= 2 ? shard : psi);
  const std::int64_t optimizer = 12 * (stage >= 1 ? shard : psi);
  const std::int64_t activations = 4 * ((2ll * c.shape.layers + 1) * rows + 3 * rows);
  const std::int64_t comm = 4 * layer, workspace = 4 * layer * (stage >= 3 ? 1 : 2);
  const std::int64_t data = 4 * 2 * rows + 8, links = 4 * collectives::gpu_ring_landing_elements(c.ranks, layer);
  return weights + gradients + optimizer + activations + comm + workspace + data + links;
}

std::int64_t gpu0_bytes_needed(const ZeroConfig& c, const collectives::GpuPlacement& placement) {
  const std::int64_t ranks_on_gpu0 = placement.emulated ? placement.ranks : 1;
  return ranks_on_gpu0 * (gpu_rank_bytes(c) + kGpuRankMarginBytes);
}

}  // namespace dlsys::zero::cuda
