#pragma once
// Data-parallel training of the residual MLP stack (kernels/training) on CPU rank threads, two ways:
//   DDP (DistributedDataParallel): every rank keeps its own replica; during backward a communication thread per rank
//     all-reduces each gradient bucket with the lab's ring as soon as the bucket is ready, concurrently with the rest
//     of backward; then every rank takes the same SGD step locally.
//   DataParallel (nn.DataParallel): rank 0 is the master: each step it copies the model to every worker and scatters
//     the batch, all ranks run forward and backward, then the master gathers every gradient, sums and steps alone.
// The loss is divided by the GLOBAL batch on every rank, so the ranks' gradients summed are the full batch's
// gradient: no averaging step is needed (PyTorch divides by the world size instead, since each rank's loss is a mean
// over its own rows; the result is the same).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/ddp/train_types.h"
#include "kernels/ddp/wire.h"
#include "kernels/training/mlp_stack.h"

namespace dlsys::ddp {

// Trains `config.steps` steps on `data` (at least steps x global_batch rows). Buffers are recorded in `ledger` under
// "weights rank r", "grads rank r", "activations rank r", "wire rank r" and the links' "comm". OpenBLAS runs one thread
// per call meanwhile: the ranks are the parallelism, as one GPU each would be. In DDP, when the compute threads would
// take every core, one core is kept for the communication threads (engine/core_placement.h), as a GPU's all-reduce
// has a stream and a link of its own; DataParallel's threads then compute on the same cores as DDP's.
TrainResult train(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger);

// DDP on the ranks of `ranks` (config.ranks of them), threads of this process or one process per rank (the MPI
// world's group, engine/mpi_world.h) alike: each local rank trains its own share of each batch on a compute thread,
// and the group's run_on_ranks all-reduces each bucket with the lab's ring as soon as backward has finished its
// layers. Between processes MPI is called from the communication side, and from the compute side (the barrier at each
// step's start) only while the communication side waits between steps: the session must provide
// MPI_THREAD_SERIALIZED, and the ring carries fp32 only. Every rank calls it. The result holds the local ranks:
// steps[s] has one RankStep each, last_step_spans their ops (times from the earliest local step start, which follows
// a barrier), weights the first local replica's, and the bytes the first local rank sent and received per step.
TrainResult train_ddp(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger,
                      collectives::RankGroup& ranks);

// The same steps on one rank over the whole batch at once: the reference every variant is held against.
std::vector<float> train_single_rank(const TrainConfig& config, const training::DataSet& data);

// max |a - b| / max |b|: the error of a variant's weights against the reference's.
double max_rel_err(const std::vector<float>& a, const std::vector<float>& b);

// Host bytes one `train` call allocates (weights, gradients, wire buffers, activations, backward scratch, links,
// the master's gather buffer), so a caller can refuse sizes that would not fit before allocating.
double train_bytes(const TrainConfig& config);

}  // namespace dlsys::ddp
