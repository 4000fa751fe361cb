#pragma once
// ZeRO stages 0-3 (sharded_training.h) on GPUs, for code that never includes a CUDA header (plain C++17). Without
// the CUDA library each call (cuda/zero_cuda_calls.cpp) throws RunFailure saying why.
//
// Each rank keeps in device memory what the CPU rank keeps, under the same tags, with real 2-byte storage for the
// 16-bit weights and gradients (__nv_bfloat16 / __half, rounded to nearest even as the CPU's conversions do): its
// "weights", "gradients", "optimizer" (fp32 master weights and Adam's moments), "activations", "comm" (one layer's
// fp32 bucket, or at stage 3 the layer just all-gathered) and "workspace" (one layer widened to fp32, one layer's fp32
// gradient). Every cudaMalloc is counted in the rank's ledger by tag, so weights + gradients + optimizer equal the
// paper's formulas to the byte, as on the CPU. Device buffers outside those tags: the rank's rows of the batch
// ("data"), the ring's landing chunk ("links") and the loss (8 bytes, "data").
//
// One host thread enqueues every rank's work on that rank's stream layer by layer, each collective for all ranks at
// once: NCCL with one GPU per rank, else the lab's ring between streams (collectives/cuda/stream_ring.h), ranks
// emulated on GPU 0. Shards follow the GPU ring: rank r owns chunk r of every layer. The GEMMs are cuBLAS's (fp32, no
// TF32), so the weights are close to the CPU's, not bit-identical; among GPU stages, as on the CPU, every gradient is
// summed in the same order (an all-reduce is the ring's reduce-scatter then its all-gather), so stages 1-3 end
// bit-identical to GPU stage 0. Times come from CUDA events on each rank's stream: each step's, and the last step's
// spans (forward and backward per layer, each collective with the conversions around it, the optimizer), every rank's
// relative to its own step start (events on different GPUs cannot be subtracted).
#include <cstdint>

#include "kernels/collectives/gpu_ring_plan.h"
#include "kernels/zero/zero_types.h"

namespace dlsys::zero::cuda {

// How this machine would place n ranks. Throws RunFailure when no device answers.
collectives::GpuPlacement place_ranks(int ranks);

// Device bytes one rank allocates (model states, activations and backward scratch, comm, workspace, its rows, the
// landing chunk, the loss), and what GPU 0 must hold for the placement, with a margin per rank on it for its cuBLAS
// handle and workspace.
std::int64_t gpu_rank_bytes(const ZeroConfig& config);
std::int64_t gpu0_bytes_needed(const ZeroConfig& config, const collectives::GpuPlacement& placement);
inline constexpr std::int64_t kGpuRankMarginBytes = 64ll << 20;

struct GpuZeroTraining {
  ZeroTraining training;  // spans: each rank's relative to its own step start
  collectives::GpuPlacement placement;
};

// Trains `config.steps` steps on the same seeded batch as train_sharded. Throws std::invalid_argument when the stack
// does not shard evenly or the stage is outside 0-3.
GpuZeroTraining train_sharded_gpu(const ZeroConfig& config);

}  // namespace dlsys::zero::cuda
