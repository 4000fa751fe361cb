#pragma once
// DDP training (trainer.h) on GPUs, for code that never includes a CUDA header (plain C++17). Without CUDA in the
// build, or where the CUDA library cannot be loaded, each call (cuda/ddp_cuda_calls.cpp) throws RunFailure saying why.
//
// Each rank keeps its replica, gradients and activations in device memory and runs forward and backward on cuBLAS
// (training/cuda/mlp_stack_cuda.h) on its compute stream. After each layer's backward the compute stream records
// that layer's "gradient ready" event; the rank's communication stream waits on the event of the layer that completes
// a bucket and all-reduces the bucket at once, while the compute stream goes on with the layers below. The SGD step
// waits for the last bucket. Placement (collectives/gpu_ring_plan.h): one GPU per rank with NCCL (or the lab's ring
// over peer copies without it), or every rank as a pair of streams on GPU 0 with the lab's ring, emulated.
//
// Times come from CUDA events, each rank's relative to its own step-start event (events on different GPUs cannot be
// subtracted), so a timeline's ranks all start at 0. Only DDP with fp32 gradients runs here: DataParallel and 16-bit
// wires stay on the CPU backend.
#include <functional>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "kernels/collectives/gpu_ring_plan.h"
#include "kernels/ddp/train_types.h"

namespace dlsys::ddp::cuda {

// How this machine would place n ranks. Throws RunFailure when no device answers.
collectives::GpuPlacement place_ranks(int ranks);

// Device bytes one rank allocates for `config` (weights, gradients, activations, backward scratch, its rows of the
// data set for every step, the ring's landing buffer), and what GPU 0 must hold for the placement, with a margin per
// rank on it for its cuBLAS handle and workspace.
std::int64_t gpu_rank_bytes(const TrainConfig& config);
std::int64_t gpu0_bytes_needed(const TrainConfig& config, const collectives::GpuPlacement& placement);
inline constexpr std::int64_t kGpuRankMarginBytes = 64ll << 20;

// The rank whose bytes the closed form ring_bytes_sent(words, n, 0, ...) describes: the GPU ring seats rank r at
// ring position r - 1 (collectives/gpu_ring_plan.h), so position 0 is rank 1.
inline int gpu_ring_position0_rank(int ranks) { return ranks > 1 ? 1 : 0; }

struct GpuTrainResult {
  TrainResult result;  // as train()'s; bytes are those of gpu_ring_position0_rank
  collectives::GpuPlacement placement;
};

// Trains `config.steps` DDP steps (config.mode must be Ddp, config.wire Fp32) on `data`; device buffers recorded in
// `ledger` under the CPU trainer's tags ("weights rank r", ...). Every rank's weights are copied back at the end.
GpuTrainResult train_gpu(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger);

// Ranks as processes (the lesson's launcher=mpi): what crosses processes, through MPI in the lesson.
struct ProcessLinks {
  int rank = 0;        // this process's rank; config.ranks is the world size
  int local_rank = 0;  // among the processes on this host: the device is local_rank mod the GPUs seen
  // Sends these bytes to rank r+1 and returns rank r-1's.
  std::function<std::vector<unsigned char>(const std::vector<unsigned char>&)> shift_from_previous;
  // An empty message to rank r+1 and one from rank r-1, together (the IPC ring's token).
  std::function<void()> pass_token;
  std::function<void()> barrier;
  // Every rank reports how its part went (empty: fine); when any failed, every rank throws RunFailure saying which.
  std::function<void(const std::string& failure)> agree;
};

// DDP with this process as rank links.rank of config.ranks, all on one host: the rank trains its own share of each
// batch on its GPU as train_gpu's ranks do, and each bucket is all-reduced with the lab's ring over CUDA IPC
// (collectives/cuda/ipc_link.h: the rank reads rank r-1's gradients in place). Ranks may share a GPU. Every rank
// calls it. The result holds this rank alone (as train_ddp's over the MPI world's group): steps[s] has one RankStep,
// last_step_spans its ops, weights its replica, and the bytes its ring sent and received per step.
TrainResult train_gpu_process(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger,
                              const ProcessLinks& links);

}  // namespace dlsys::ddp::cuda
