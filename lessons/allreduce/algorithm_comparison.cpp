#include "lessons/allreduce/algorithm_comparison.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/units.h"
#include "kernels/collectives/collective_algorithms.h"
#include "kernels/collectives/cost_model.h"
#include "kernels/collectives/step_record.h"

namespace dlsys::allreduce {

namespace {

using collectives::Algorithm;
using collectives::Op;

double gbps(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; }

AlgorithmRun run_of(int n, const AlgorithmPoints& points) {
  AlgorithmRun run;
  run.algo = collectives::algorithm_name(points.algorithm);
  const double largest = points.sweep.empty() ? 0.0 : points.sweep.back().bytes;
  const collectives::CollectiveCost at_largest =
      collectives::collective_cost(Op::AllReduce, points.algorithm, n, largest);
  run.steps = at_largest.steps;
  run.messages_sent = at_largest.messages_sent;
  run.bytes_sent_per_rank = at_largest.bytes_sent_per_rank;
  if (!points.sweep.empty()) run.bytes_sent_counted = points.sweep.back().bytes_sent_max_rank;
  const double factor = collectives::busbw_factor(Op::AllReduce, n);
  std::vector<collectives::CollectiveCost> costs;
  std::vector<double> times;
  for (const SizePoint& p : points.sweep) {
    SweepRow row{.bytes = p.bytes,
                 .count = p.bytes / 4,
                 .time_us = p.time.median_us,
                 .time_min_us = p.time.min_us,
                 .time_max_us = p.time.max_us,
                 .algbw_gbps = gbps(p.bytes, p.time.median_us),
                 .busbw_gbps = factor * gbps(p.bytes, p.time.median_us),
                 .ceiling_gbps = 0,
                 .wrong = p.wrong};
    run.sweep.push_back(row);
    run.wrong += p.wrong;
    costs.push_back(collectives::collective_cost(Op::AllReduce, points.algorithm, n, p.bytes));
    times.push_back(p.time.median_us);
  }
  const collectives::AlphaBetaFit fit = collectives::fit_alpha_beta(costs, times);
  if (fit.valid) {
    run.alpha_us = fit.alpha_us;
    run.beta_gbps = fit.beta_gbps;
  }
  return run;
}

const AlgorithmRun* find(const AlgorithmComparison& c, const char* algo) {
  for (const AlgorithmRun& a : c.algorithms)
    if (a.algo == algo) return &a;
  return nullptr;
}

std::string crossover_sentence(const AlgorithmComparison& c, int n) {
  const AlgorithmRun* ring = find(c, "ring");
  const AlgorithmRun* rd = find(c, "recursive_doubling");
  if (ring == nullptr || rd == nullptr || ring->sweep.empty()) return "";
  std::string predicted;
  if (!ring->alpha_us || !ring->beta_gbps)
    predicted = "no prediction (the ring's times gave no alpha-beta fit)";
  else if (c.crossover_predicted_bytes)
    predicted = fmt::format(
        "predicted at {} (ring = recursive doubling with the ring's fitted alpha {:.1f} us and "
        "beta {:.2f} GB/s)",
        format_bytes_binary(*c.crossover_predicted_bytes), *ring->alpha_us, *ring->beta_gbps);
  else
    predicted =
        fmt::format("predicted never (at N = {} recursive doubling sends no more than the ring in fewer steps)", n);
  const std::string measured =
      c.crossover_measured_bytes
          ? fmt::format("measured at {} (the first swept size from which on the ring was faster)",
                        format_bytes_binary(*c.crossover_measured_bytes))
          : fmt::format("measured never (the ring was not faster at any swept size up to {})",
                        format_bytes_binary(ring->sweep.back().bytes));
  return fmt::format("Ring overtakes recursive doubling: {}; {}.", predicted, measured);
}

}  // namespace

AlgorithmComparison summarize_comparison(int n, const std::vector<AlgorithmPoints>& runs) {
  AlgorithmComparison c;
  for (const AlgorithmPoints& points : runs) c.algorithms.push_back(run_of(n, points));
  const AlgorithmRun* ring = find(c, "ring");
  const AlgorithmRun* rd = find(c, "recursive_doubling");
  if (ring && rd) {
    if (ring->alpha_us && ring->beta_gbps)
      c.crossover_predicted_bytes = collectives::crossover_bytes(
          Op::AllReduce, Algorithm::Ring, Algorithm::RecursiveDoubling, n, *ring->alpha_us, *ring->beta_gbps);
    // The first size from which on the ring is faster at every larger swept size: one noisy small size where the
    // ring happens to win does not count as the crossover.
    const std::size_t sizes = std::min(ring->sweep.size(), rd->sweep.size());
    for (std::size_t i = sizes; i-- > 0;) {
      if (!(ring->sweep[i].time_us < rd->sweep[i].time_us)) break;
      c.crossover_measured_bytes = ring->sweep[i].bytes;
    }
  }
  c.crossover_sentence = crossover_sentence(c, n);
  return c;
}

std::vector<Series> comparison_series(const AlgorithmComparison& c, int n_ranks) {
  std::vector<Series> out;
  // The model of the two algorithms whose crossover the step predicts, both with the ring's fitted alpha and beta:
  // the dashed curves cross where the predicted line stands.
  const AlgorithmRun* ring = find(c, "ring");
  if (ring && ring->alpha_us && ring->beta_gbps)
    for (Algorithm a : {Algorithm::Ring, Algorithm::RecursiveDoubling}) {
      const std::string name = collectives::algorithm_name(a);
      Series s{"busbw_model_" + name,
               name + " (alpha-beta, the ring's fit)",
               "theory",
               "message size",
               "bytes",
               "bus bandwidth",
               "GB/s",
               {}};
      const double factor = collectives::busbw_factor(Op::AllReduce, n_ranks);
      for (const SweepRow& row : ring->sweep) {
        const double t = collectives::model_time_us(collectives::collective_cost(Op::AllReduce, a, n_ranks, row.bytes),
                                                    *ring->alpha_us, *ring->beta_gbps);
        const double b = factor * gbps(row.bytes, t);
        s.points.push_back({row.bytes, b, b, b});
      }
      out.push_back(std::move(s));
    }
  for (const AlgorithmRun& a : c.algorithms) {
    Series s{"busbw_algo_" + a.algo, a.algo, "measured", "message size", "bytes", "bus bandwidth", "GB/s", {}};
    const double factor = a.sweep.empty() || a.sweep.front().algbw_gbps <= 0
                              ? 0.0
                              : a.sweep.front().busbw_gbps / a.sweep.front().algbw_gbps;
    for (const SweepRow& row : a.sweep)
      s.points.push_back({row.bytes, row.busbw_gbps, factor * gbps(row.bytes, row.time_max_us),
                          factor * gbps(row.bytes, row.time_min_us)});
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> algorithms_headers() { return {"algorithm", "steps", "msgs", "bytes sent", "logged"}; }

std::vector<std::vector<std::string>> algorithms_rows(int n, double bytes) {
  struct Row {
    Algorithm algorithm;
    const char* steps;
    const char* bytes;
  };
  static const Row rows[] = {
      {Algorithm::Ring, "2(N-1)", "2(N-1)/N x S"},
      {Algorithm::RecursiveDoubling, "log2 N", "log2 N x S"},
      {Algorithm::Rabenseifner, "2 log2 N", "2(N-1)/N x S"},
      {Algorithm::Direct, "2(N-1)", "2(N-1)/N x S"},
      {Algorithm::Naive, "2(N-1)", "(N-1) x S"},
  };
  const bool folded = collectives::power_of_two_below(n) != n;
  std::vector<std::vector<std::string>> out;
  for (const Row& r : rows) {
    const collectives::CollectiveCost c = collectives::collective_cost(Op::AllReduce, r.algorithm, n, bytes);
    const bool power_of_two_only =
        r.algorithm == Algorithm::RecursiveDoubling || r.algorithm == Algorithm::Rabenseifner;
    std::string logged = "-";
    if (n <= kComparisonMaxRanks) {
      // A small real run of the same code the lesson times, counting its own steps.
      if (r.algorithm == Algorithm::Ring)
        logged = std::to_string(collectives::record_ring_allreduce(n, n).steps.size() - 1);  // less the start row
      else
        logged =
            std::to_string(collectives::log_allreduce(r.algorithm, collectives::demo_inputs(n, 2 * n)).max_steps());
    }
    // N not a power of two: the power-of-two part runs on p ranks, and the fold-in adds 2 steps and S.
    const bool fold = power_of_two_only && folded;
    const auto on_p = [&](std::string formula) {
      if (fold)
        for (char& ch : formula)
          if (ch == 'N') ch = 'p';
      return formula;
    };
    out.push_back(
        {collectives::algorithm_name(r.algorithm), fmt::format("{}{} = {}", on_p(r.steps), fold ? " + 2" : "", c.steps),
         std::to_string(c.messages_sent),
         fmt::format("{}{} = {}", on_p(r.bytes), fold ? " + S" : "", format_bytes_decimal(c.bytes_sent_per_rank)),
         logged});
  }
  return out;
}

}  // namespace dlsys::allreduce
