#pragma once
// What every way of training data-parallel ranks shares (DDP on a rank group in ddp_ranks.cpp, DataParallel on rank
// threads in data_parallel.cpp): a rank's replica and buffers, its forward and backward
// with their spans, the step's summary, and DDP's communication side (buckets all-reduced as backward frees them).
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "engine/ledger.h"
#include "engine/thread_start.h"
#include "kernels/ddp/buckets.h"
#include "kernels/ddp/train_types.h"
#include "kernels/ddp/wire.h"
#include "kernels/training/mlp_stack.h"

namespace dlsys::ddp {

using Clock = std::chrono::steady_clock;

inline double us_since(Clock::time_point origin) {
  return std::chrono::duration<double, std::micro>(Clock::now() - origin).count();
}

// One rank's model and buffers, recorded in the ledger under the rank's tags. Everything is allocated before any
// thread starts.
struct Replica {
  Replica(const TrainConfig& c, int rank, MemoryLedger& ledger);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  int rank;
  MemoryLedger& ledger;
  std::vector<std::pair<std::string, std::int64_t>> tags;
  std::vector<float> weights, grads;
  std::vector<std::uint16_t> wire;  // the 16-bit copy of grads that travels (wire formats only)
  training::Activations acts;
  std::vector<float> inputs, targets;  // DataParallel workers: the rows the master scattered to them
  std::vector<OpSpan> compute_spans, comm_spans;
  double step_start_us = 0, backward_start_us = 0, backward_end_us = 0;
  std::atomic<std::int64_t> ready{0};  // DDP: gradient elements final so far, counted over all steps
  std::atomic<int> comm_done{0};       // DDP: steps whose buckets are all reduced
};

// Thrown on a rank that gives up because a peer failed; the peer's own error is the one reported.
struct PeerAbandoned : RunFailure {
  PeerAbandoned() : RunFailure("a peer rank of the data-parallel run failed") {}
};

void sgd(std::vector<float>& weights, const std::vector<float>& grads, float lr);

// The step's times from the replica's spans; `ddp`: its communication spans count as hidden while backward ran.
RankStep summarize(const Replica& rep, double step_end_us, bool ddp);

// Forward and backward of one micro-step on `inputs`/`targets`, recording spans; `on_ready(layer)` after each
// layer's backward. `last_micro` marks where the step's backward starts and ends.
void forward_backward(const TrainConfig& c, Replica& rep, const float* inputs, const float* targets,
                      Clock::time_point origin, bool last_micro, const std::function<void(int layer)>& on_ready);

// Rank `rank`'s forward and backward passes of step `step` (every micro-step), announcing each layer's gradient as
// ready on the last one (before it, no_sync: gradients accumulate locally), then waiting until its communication
// side has all-reduced every bucket of the step (or, with `abandoned` given, until the run is abandoned:
// PeerAbandoned).
void compute_step(const TrainConfig& c, const training::DataSet& data, Replica& rep, int rank, int step,
                  Clock::time_point origin, const std::atomic<bool>* abandoned = nullptr);

void optimizer_step(const TrainConfig& c, Replica& rep, Clock::time_point origin);

// DDP's communication side for one rank and one step: each bucket in reduction order, as soon as backward has
// finished its layers, all-reduced by `all_reduce` and recorded as a span; then the step is marked done (comm_done).
// Returns false, the step unfinished, when `stopped()` turns true while it waits.
bool all_reduce_buckets_of_step(const std::vector<Bucket>& buckets, int step, Replica& rep, Clock::time_point origin,
                                const std::function<void(const Bucket&)>& all_reduce,
                                const std::function<bool()>& stopped);

// Every rank's spans of the last step, from the earliest rank's step start.
void keep_last_step(TrainResult& out, const std::vector<std::unique_ptr<Replica>>& reps);

// Runs body(rank) on one thread per rank and joins them; the first exception is rethrown here. `abandon()` must make
// every rank return without waiting for its peers: it is called when a rank thread cannot be started or one throws,
// since the others would otherwise wait for it forever.
template <typename Body, typename Abandon>
void on_rank_threads(int n, Body body, Abandon abandon) {
  FirstError error;
  std::vector<std::thread> threads;
  auto guarded = [&](int r) {
    try {
      body(r);
    } catch (...) {
      error.capture();
      abandon();
    }
  };
  start_threads(threads, 0, n, guarded, abandon, "rank threads of the data-parallel run");
  for (std::thread& t : threads) t.join();
  error.rethrow_if_any();
}

// DataParallel on rank threads of this process (data_parallel.cpp).
TrainResult train_data_parallel(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger);

// Refuses a data set too small or of the wrong width for `c`.
void check_data(const TrainConfig& c, const training::DataSet& data);

}  // namespace dlsys::ddp
