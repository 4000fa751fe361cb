#pragma once
// The host-side decisions of the CUDA tensor-parallel layer (tensor_cuda.h), kept apart so they are tested on the CPU:
// where t ranks go on the GPUs there are, which collectives they use, what each rank allocates in device memory, and
// what the ring's landing buffer holds. Plain C++17: the CUDA file includes it.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/gpu_ring_plan.h"
#include "kernels/collectives/op.h"
#include "kernels/tensor/layer_shape.h"

namespace dlsys::tensor {

// Placement and the ring's plan are shared with the other GPU paths that have ranks (kernels/collectives).
using collectives::gpu_collectives_name;
using collectives::gpu_ring_bytes_sent;
using collectives::gpu_ring_steps;
using collectives::GpuCollectives;
using collectives::GpuPlacement;
using collectives::plan_gpu_placement;
using collectives::RingTransfer;

// Floats of the ring's landing buffer: the largest chunk of any collective of the layer (s b h, or the norms' 4h when
// s b < 4), 1 with one rank.
std::int64_t gpu_landing_floats(const LayerShape& shape);
// Device bytes one rank allocates: the CPU rank's buffers (rank_buffer_counts, fp32), the ring's landing buffer and
// two floats per local row for the layer norms' backward (mean, 1/std).
std::int64_t gpu_rank_device_bytes(const LayerShape& shape);
// What GPU 0 must hold for the whole group: every rank when they are emulated there, else one rank; plus a margin
// per rank on it for its cuBLAS handle and workspace.
std::int64_t gpu0_bytes_needed(const LayerShape& shape, const GpuPlacement& placement);
inline constexpr std::int64_t kGpuRankMarginBytes = 64ll << 20;

}  // namespace dlsys::tensor
