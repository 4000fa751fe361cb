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
