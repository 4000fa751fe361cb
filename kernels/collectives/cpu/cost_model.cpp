#include "kernels/collectives/cost_model.h"

#include <cmath>
#include <stdexcept>

namespace dlsys::collectives {

double busbw_factor(Op op, int n) {
  const double ratio = double(n - 1) / n;
  return op == Op::AllReduce ? 2.0 * ratio : ratio;
}

CollectiveCost collective_cost(Op op, Algorithm algorithm, int n, double bytes) {
  if (n < 1) throw std::invalid_argument("collective_cost: at least one rank");
  CollectiveCost c;
  c.busbw_factor = busbw_factor(op, n);
  const double share = bytes * (n - 1) / n;  // (N-1)/N x S: all chunks but one
  const double all_peers = bytes * (n - 1);  // (N-1) x S: one whole buffer per other rank
  if (algorithm == Algorithm::Ring) {
    const int phases = op == Op::AllReduce ? 2 : 1;
    c.steps = phases * (n - 1);
    c.messages_sent = c.steps;
    c.bytes_sent_per_rank = phases * share;
    c.model_bytes = c.bytes_sent_per_rank;  // full-duplex links: receiving overlaps sending
    return c;
  }
  if (algorithm != Algorithm::Naive) {
    if (op != Op::AllReduce) throw std::invalid_argument("collective_cost: this algorithm runs all-reduce only");
    if (algorithm == Algorithm::Direct) {
      c.steps = 2 * (n - 1);
      c.messages_sent = c.steps;
      c.bytes_sent_per_rank = 2 * share;
      c.model_bytes = c.bytes_sent_per_rank;
      return c;
    }
    int p = 1, log2p = 0;
    while (p * 2 <= n) {
      p *= 2;
      ++log2p;
    }
    const bool folded = p != n;
    const double core_bytes =
        algorithm == Algorithm::RecursiveDoubling ? log2p * bytes : 2.0 * (p - 1) / p * bytes;  // with p for N
    const int core_steps = algorithm == Algorithm::RecursiveDoubling ? log2p : 2 * log2p;
    c.steps = core_steps + (folded ? 2 : 0);
    c.messages_sent = core_steps + (folded ? 1 : 0);              // the odd rank also sends the result back
    c.bytes_sent_per_rank = core_bytes + (folded ? bytes : 0.0);  // the same odd rank
    c.model_bytes = core_bytes + (folded ? 2 * bytes : 0.0);      // S in, the core, S out: one after another
    return c;
  }
  c.steps = 2 * (n - 1);
  c.messages_sent = n - 1;  // rank 0: one message out to each peer
  switch (op) {
    case Op::AllReduce:  // in: N-1 whole buffers; out: N-1 whole buffers
      c.bytes_sent_per_rank = all_peers;
      c.model_bytes = 2 * all_peers;
      break;
    case Op::ReduceScatter:  // in: N-1 whole buffers; out: one chunk to each peer
      c.bytes_sent_per_rank = share;
      c.model_bytes = all_peers + share;
      break;
    case Op::AllGather:  // in: one chunk from each peer; out: N-1 whole buffers
      c.bytes_sent_per_rank = all_peers;
      c.model_bytes = share + all_peers;
      break;
  }
  return c;
}

WayCost all_reduce_way_cost(AllReduceWay way, int n, double bytes) {
  if (n < 1) throw std::invalid_argument("all_reduce_way_cost: at least one rank");
  const int pairs = n * (n - 1) / 2;
  switch (way) {
    case AllReduceWay::ThroughRoot:
      return {n - 1, 2 * (n - 1), (n - 1) * bytes};
    case AllReduceWay::FullExchange:
      return {pairs, n > 1 ? 1 : 0, (n - 1) * bytes};
    case AllReduceWay::DirectPairs:
      return {pairs, n > 1 ? 2 : 0, 2.0 * (n - 1) / n * bytes};
    case AllReduceWay::Ring:
      return {n > 2 ? n : n - 1, 2 * (n - 1), 2.0 * (n - 1) / n * bytes};
  }
  return {};
}

std::optional<double> crossover_bytes(Op op, Algorithm a, Algorithm b, int n, double alpha_us, double beta_gbps) {
  const CollectiveCost ca = collective_cost(op, a, n, 1.0), cb = collective_cost(op, b, n, 1.0);
  const double latency_gap_us = (cb.steps - ca.steps) * alpha_us;                        // what a saves in latency
  const double per_byte_gap_us = (ca.model_bytes - cb.model_bytes) / (beta_gbps * 1e3);  // what a pays per byte
  if (!(beta_gbps > 0) || per_byte_gap_us == 0) return std::nullopt;
  const double s = latency_gap_us / per_byte_gap_us;
  if (!(s > 0) || !std::isfinite(s)) return std::nullopt;
  return s;
}

double model_time_us(const CollectiveCost& cost, double alpha_us, double beta_gbps) {
  return cost.steps * alpha_us + cost.model_bytes / (beta_gbps * 1e3);  // GB/s = 1e3 bytes per us
}

AlphaBetaFit fit_alpha_beta(const std::vector<CollectiveCost>& costs, const std::vector<double>& times_us) {
  // Unknowns alpha and g = 1/beta (us per byte); row i: steps_i alpha + bytes_i g = t_i, weighted by 1/t_i.
  double sss = 0, ssb = 0, sbb = 0, sst = 0, sbt = 0;
  for (std::size_t i = 0; i < costs.size() && i < times_us.size(); ++i) {
    if (!(times_us[i] > 0)) continue;
    const double w = 1.0 / times_us[i];
    const double s = costs[i].steps * w, b = costs[i].model_bytes * w, t = times_us[i] * w;
    sss += s * s;
    ssb += s * b;
    sbb += b * b;
    sst += s * t;
    sbt += b * t;
  }
  AlphaBetaFit fit;
  if (sbb <= 0) return fit;  // no bytes cross a link: beta is undefined
  const double det = sss * sbb - ssb * ssb;
  double alpha = det > 1e-12 * sss * sbb ? (sst * sbb - ssb * sbt) / det : -1;  // -1: too few distinct sizes
  double g = 0;
  if (alpha >= 0) {
    g = (sss * sbt - ssb * sst) / det;
  } else {
    fit.alpha_forced_zero = true;
    alpha = 0;
    g = sbt / sbb;
  }
  if (!(g > 0)) return fit;
  fit.alpha_us = alpha;
  fit.beta_gbps = 1.0 / (g * 1e3);
  fit.valid = true;
  return fit;
}

}  // namespace dlsys::collectives
