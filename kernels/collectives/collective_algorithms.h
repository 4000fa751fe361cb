#pragma once
// Three more ways to all-reduce on CPU ranks, from [EXT] Thakur, Rabenseifner and Gropp 2005, "Optimization of
// Collective Communication Operations in MPICH", IJHPCA 19(1). Each needs a link between every pair of ranks
// (CommOptions::full_mesh) and runs all-reduce only. S = bytes per rank.
//   recursive doubling - log2 N steps; at step k rank r swaps its whole partial sum with rank r xor 2^k and adds:
//                        few steps (latency), but S per step (bandwidth).
//   rabenseifner       - recursive halving reduce-scatter (log2 N steps, the half a rank keeps shrinks each step)
//                        then recursive doubling all-gather (log2 N steps, the gathered half grows): 2 log2 N steps and
//                        2(N-1)/N x S per rank, the ring's bytes in far fewer steps.
//   direct             - reduce-scatter then all-gather over the crossbar: rank r sends chunk q straight to rank q
//                        (N-1 messages), which sums the N copies; then sends its summed chunk to every peer. A rank
//                        sends one message at a time here (one port, as the paper's model assumes), so each phase is
//                        N-1 steps: 2(N-1) steps, 2(N-1)/N x S per rank.
// N not a power of two (recursive doubling and rabenseifner): the paper's fold-in. With p the largest power of two
// below N and e = N - p, each even rank r < 2e first sends its whole buffer to rank r+1, which adds it; the p ranks
// left run the power-of-two algorithm; then each odd rank r < 2e sends the result back to rank r-1: 2 steps and S
// bytes more on the critical path.
//
// Two ranks that exchange at once (recursive doubling, halving, direct's pairs) both send and receive: messages go one
// segment each way in turn (exchange() in cpu/exchange.h), so neither waits on a full link while the other does.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/collectives.h"

namespace dlsys::collectives {

// What one rank did at one of its steps, counted by the algorithm as it runs (one entry per step, whole messages:
// the segments a message travels in are not steps).
struct MessageStep {
  std::string phase;  // "fold_in", "exchange", "reduce_scatter", "all_gather", "fold_out"; naive: "reduce", "broadcast"
  int sent_to = -1;   // -1: nothing sent at this step
  std::int64_t sent_bytes = 0;
  int received_from = -1;  // -1: nothing received
  std::int64_t received_bytes = 0;
  bool reduced = false;  // the received data was added (else copied)
};

// Per rank, its steps in order. Each rank appends only to its own list, on its own thread: no lock.
class MessageLog {
 public:
  explicit MessageLog(int n_ranks) : ranks_(static_cast<std::size_t>(n_ranks)) {}
  void add(int rank, MessageStep step) { ranks_[static_cast<std::size_t>(rank)].push_back(std::move(step)); }
  const std::vector<std::vector<MessageStep>>& ranks() const { return ranks_; }
  int max_steps() const;                // the busiest rank's steps: the critical path's length
  std::int64_t max_bytes_sent() const;  // the busiest rank's bytes sent
  int max_messages_sent() const;        // the busiest rank's messages sent
  std::int64_t bytes_sent(int rank) const;

 private:
  std::vector<std::vector<MessageStep>> ranks_;
};

// The largest power of two that is at most n (n >= 1).
int power_of_two_below(int n);

// Runs all-reduce with `algorithm` (any of the five) on all ranks; `log` (optional; not for the ring, which keeps its
// own record) gets every rank's steps. Throws std::invalid_argument for a communicator without every pair's link when
// the algorithm needs it.
void run_logged(Communicator& comm, Algorithm algorithm, const RankBuffers& buffers, MessageLog* log);

void recursive_doubling_rank(Communicator& comm, int rank, const RankBuffers& buffers, MessageLog* log);
void rabenseifner_rank(Communicator& comm, int rank, const RankBuffers& buffers, MessageLog* log);
void direct_rank(Communicator& comm, int rank, const RankBuffers& buffers, MessageLog* log);

// Runs `algorithm`'s all-reduce on `inputs` ((n_ranks, count)) with a log, for tests and the lesson's table; returns
// the log, and the results in `outputs` when given. n_ranks from 1 to 16, count at most 1 << 16.
MessageLog log_allreduce(Algorithm algorithm, const std::vector<std::vector<float>>& inputs,
                         std::vector<std::vector<float>>* outputs = nullptr, std::int64_t segment_bytes = 256);

}  // namespace dlsys::collectives
