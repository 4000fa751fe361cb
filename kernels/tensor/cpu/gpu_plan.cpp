#include "kernels/tensor/gpu_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/collectives/ring_schedule.h"
#include "kernels/tensor/rank_layer.h"

namespace dlsys::tensor {

std::int64_t gpu_landing_floats(const LayerShape& shape) {
  if (shape.ranks < 2) return 1;
  const std::int64_t largest = std::max<std::int64_t>(shape.tokens(), 4) * shape.hidden;
  return collectives::chunk_size(largest, shape.ranks, 0);  // chunk 0 is never smaller than another
}

std::int64_t gpu_rank_device_bytes(const LayerShape& shape) {
  return rank_buffer_counts(shape).bytes(4) + 4 * gpu_landing_floats(shape) + 4 * 2 * shape.local_tokens();
}

std::int64_t gpu0_bytes_needed(const LayerShape& shape, const GpuPlacement& placement) {
  const std::int64_t ranks_on_gpu0 = placement.emulated ? placement.ranks : 1;
  return ranks_on_gpu0 * (gpu_rank_device_bytes(shape) + kGpuRankMarginBytes);
}

}  // namespace dlsys::tensor
