#pragma once
// Closed forms for the collectives (exact, from the algorithms' definitions) and the alpha-beta model fitted to
// measurements. S = bytes per rank (the whole vector), N = ranks.
//   [EXT] Patarasuk & Yuan 2009 (ring all-reduce bandwidth); nccl-tests doc/PERFORMANCE.md (algbw, busbw):
//   ring all-reduce: 2(N-1) steps, each rank sends 2(N-1)/N x S; reduce-scatter or all-gather alone: N-1, (N-1)/N x S.
//   busbw = algbw x 2(N-1)/N for all-reduce and x (N-1)/N for reduce-scatter and all-gather, algbw = S / time.
//   The factor belongs to the operation, not the algorithm: a slower algorithm shows a lower busbw.
// Naive (through rank 0): rank 0 handles N-1 transfers in, then N-1 out, one after another.
#include <cstdint>
#include <vector>

#include "kernels/collectives/collectives.h"

namespace dlsys::collectives {

struct CollectiveCost {
  int steps = 0;                   // communication steps on the critical path
  double bytes_sent_per_rank = 0;  // ring: every rank; naive: rank 0, the busiest
  double model_bytes = 0;          // bytes the alpha-beta model charges at 1/beta (the busiest rank, in series)
  double busbw_factor = 0;         // busbw = algbw x busbw_factor
};

double busbw_factor(Op op, int n_ranks);
CollectiveCost collective_cost(Op op, Algorithm algorithm, int n_ranks, double bytes);

// The ways to all-reduce that the lesson compares, told apart by the links they need. Each counts what the busiest
// rank sends (received bytes are the same or fewer for every way here) and the communication steps in a row, a step
// being one message per link, all links busy at once.
//   through rank 0 (a star, N-1 links): rank 0 takes N-1 whole buffers in, one after another, then sends the sum out
//     N-1 times: 2(N-1) steps, (N-1) x S sent by rank 0.
//   full exchange (a link per pair, N(N-1)/2): every rank sends its whole buffer to every other and sums what it gets:
//     1 step, (N-1) x S sent per rank.
//   direct reduce-scatter + all-gather (a link per pair): rank r sends chunk q of its buffer to rank q, which sums the
//     N copies of its chunk, then sends the sum to everyone: 2 steps, 2(N-1)/N x S per rank.
//   ring (N links): 2(N-1) steps, 2(N-1)/N x S per rank.
// The direct and ring ways send the same, minimal, bytes ([EXT] Thakur, Rabenseifner and Gropp 2005; Patarasuk and
// Yuan 2009): the ring trades steps (latency, 2(N-1) x alpha) for links (N instead of N(N-1)/2).
enum class AllReduceWay { ThroughRoot, FullExchange, DirectPairs, Ring };
struct WayCost {
  int links = 0;  // full-duplex links the way needs
  int steps = 0;
  double bytes_sent_busiest_rank = 0;
};
WayCost all_reduce_way_cost(AllReduceWay way, int n_ranks, double bytes);

// t = steps x alpha + model_bytes / beta, in microseconds (beta in GB/s, 1 GB = 1e9 bytes).
double model_time_us(const CollectiveCost& cost, double alpha_us, double beta_gbps);

struct AlphaBetaFit {
  double alpha_us = 0;
  double beta_gbps = 0;
  bool alpha_forced_zero = false;  // negative latency from the free fit, or one size only: alpha fixed at 0
  bool valid = false;              // false when nothing crosses a link (N = 1) or no point has bytes
};
// Least squares on relative error (each point weighted by 1 / t^2), so 1 KiB and 256 MiB points count alike:
// minimises sum ((t_i - steps_i alpha - bytes_i / beta) / t_i)^2 over alpha and 1/beta.
AlphaBetaFit fit_alpha_beta(const std::vector<CollectiveCost>& costs, const std::vector<double>& times_us);

}  // namespace dlsys::collectives
