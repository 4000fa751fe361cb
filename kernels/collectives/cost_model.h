#pragma once
// Closed forms for the collectives (exact, from the algorithms' definitions) and the alpha-beta model fitted to
// measurements. S = bytes per rank (the whole vector), N = ranks.
//   [EXT] Patarasuk & Yuan 2009 (ring all-reduce bandwidth); nccl-tests doc/PERFORMANCE.md (algbw, busbw):
//   ring all-reduce: 2(N-1) steps, each rank sends 2(N-1)/N x S; reduce-scatter or all-gather alone: N-1, (N-1)/N x S.
//   busbw = algbw x 2(N-1)/N for all-reduce and x (N-1)/N for reduce-scatter and all-gather, algbw = S / time.
//   The factor belongs to the operation, not the algorithm: a slower algorithm shows a lower busbw.
// Naive (through rank 0): rank 0 handles N-1 transfers in, then N-1 out, one after another.
// Recursive doubling, Rabenseifner and direct (all-reduce only): [EXT] Thakur, Rabenseifner and Gropp 2005,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), for N a power of two:
//   recursive doubling  log2 N x alpha + log2 N x S / beta
//   rabenseifner        2 log2 N x alpha + 2(N-1)/N x S / beta
//   direct              2(N-1) x alpha + 2(N-1)/N x S / beta   (a rank sends one message at a time: one port)
//   ring                2(N-1) x alpha + 2(N-1)/N x S / beta
// For N not a power of two, p = the largest power of two below N: the fold-in adds 2 steps and 2 x S on the critical
// path (S in to the odd rank, S back out), and the odd rank sends S more: log2 p or 2 log2 p steps, with p for N.
#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/collectives/collectives.h"

namespace dlsys::collectives {

struct CollectiveCost {
  int steps = 0;                   // communication steps on the critical path
  double bytes_sent_per_rank = 0;  // ring: every rank; naive: rank 0, the busiest
  double model_bytes = 0;          // bytes the alpha-beta model charges at 1/beta (the busiest rank, in series)
  double busbw_factor = 0;         // busbw = algbw x busbw_factor
  int messages_sent = 0;           // whole messages the busiest rank sends (segments not counted)
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

// The message size S* at which `a` and `b` take the same alpha-beta time for the same alpha and beta (both linear in
// S: steps_a alpha + m_a S / beta = steps_b alpha + m_b S / beta); none when one is as fast or faster at every size.
std::optional<double> crossover_bytes(Op op, Algorithm a, Algorithm b, int n_ranks, double alpha_us, double beta_gbps);

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
