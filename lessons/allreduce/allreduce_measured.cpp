#include "lessons/allreduce/allreduce_measured.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/units.h"

namespace dlsys::allreduce {

namespace {

using collectives::CollectiveCost;

double algbw_gbps(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; }

CollectiveCost cost_at(const RunPoints& p, double bytes) {
  return collectives::collective_cost(p.op, p.model_algorithm, p.n_ranks, bytes);
}

// The alpha-beta model, fitted to the sweep and the chosen size; notes say when the fit is degenerate.
collectives::AlphaBetaFit fit_model(const RunPoints& p, std::vector<std::string>& notes) {
  std::vector<CollectiveCost> costs{cost_at(p, p.chosen.bytes)};
  std::vector<double> times{p.chosen.time.median_us};
  for (const SizePoint& point : p.sweep) {
    costs.push_back(cost_at(p, point.bytes));
    times.push_back(point.time.median_us);
  }
  const collectives::AlphaBetaFit fit = collectives::fit_alpha_beta(costs, times);
  if (!fit.valid)
    notes.push_back(
        "alpha-beta fit: the measured times do not grow with the bytes sent (at these sizes latency and timing "
        "noise dominate), so no model is fitted; sweep larger sizes to see the bandwidth term");
  if (fit.valid && fit.alpha_forced_zero)
    notes.push_back(
        "alpha-beta fit: the free fit gave a negative latency (or had one size only), so "
        "alpha is fixed at 0 and only beta is fitted");
  return fit;
}

SweepRow row_of(const SizePoint& point, double factor) {
  SweepRow row{.bytes = point.bytes,
               .count = point.bytes / 4,
               .time_us = point.time.median_us,
               .time_min_us = point.time.min_us,
               .time_max_us = point.time.max_us,
               .algbw_gbps = algbw_gbps(point.bytes, point.time.median_us),
               .busbw_gbps = factor * algbw_gbps(point.bytes, point.time.median_us),
               .ceiling_gbps = point.ceiling_gbps,
               .wrong = point.wrong};
  row.above_ceiling = factor > 0 && row.ceiling_gbps > 0 && row.busbw_gbps > row.ceiling_gbps;
  return row;
}

std::string size_list(const std::vector<double>& sizes) {
  std::string out;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    out += (i == 0 ? "" : i + 1 == sizes.size() ? " and " : ", ") + format_bytes_binary(sizes[i]);
  return out;
}

// What the measured step must say beside its numbers, in plain sentences.
std::vector<std::string> caveats_of(const RunPoints& p, const AllreduceMeasured& m, const SweepRow& chosen) {
  std::vector<std::string> caveats;
  if (m.oversubscribed)
    caveats.push_back(fmt::format(
        "oversubscribed: {} ranks share {} hardware threads, so ranks wait for a core as well as for data (the "
        "ceiling was probed the same way); real links would not slow down like this with N",
        p.n_ranks, p.hardware_threads));
  std::vector<double> above;
  for (const SweepRow& row : m.sweep)
    if (row.above_ceiling) above.push_back(row.bytes);
  if (chosen.above_ceiling && std::find(above.begin(), above.end(), chosen.bytes) == above.end())
    above.push_back(chosen.bytes);
  if (!above.empty())
    caveats.push_back(fmt::format(
        "busbw is above the copy ceiling at {} (starred): the probe copies as many bytes on the same threads, so "
        "its samples there were slowed, most likely by another process; read those points as noise",
        size_list(above)));
  int spread = 0;
  for (const SweepRow& row : m.sweep)
    if (row.time_max_us > 2 * row.time_min_us) ++spread;
  if (p.repeats >= 3 && 3 * spread >= static_cast<int>(m.sweep.size()) && spread > 0)
    caveats.push_back(fmt::format(
        "disturbed: at {} of {} sizes the slowest sample took over twice the fastest (the whiskers): another "
        "process was competing for the cores",
        spread, m.sweep.size()));
  if (m.fit && !m.sweep.empty() && m.sweep.back().ceiling_gbps > 0 && m.fit->beta_gbps > m.sweep.back().ceiling_gbps)
    caveats.push_back(fmt::format(
        "the fitted beta ({:.2f} GB/s) is above the largest size's ceiling ({:.2f} GB/s at {}): the fit weighs "
        "every size alike, and the middle sizes copy from the caches",
        m.fit->beta_gbps, m.sweep.back().ceiling_gbps, format_bytes_binary(m.sweep.back().bytes)));
  // Ranks on a GPU here are streams of one device: when the largest size takes less than twice the smallest, the
  // whole sweep pays per step, not per byte, and the view must say why rather than show a flat curve unexplained.
  if (p.hardware_threads == 0 && m.sweep.size() >= 2) {
    const auto [fastest, slowest] = std::minmax_element(
        m.sweep.begin(), m.sweep.end(), [](const SweepRow& a, const SweepRow& b) { return a.time_us < b.time_us; });
    if (m.sweep.back().time_us < 2 * m.sweep.front().time_us)
      caveats.push_back(fmt::format(
          "latency-bound: every size from {} to {} takes {:.0f} to {:.0f} us per call{}. The ranks are streams on one "
          "GPU, so every step is a chain of cross-stream event waits and kernel launches, which costs more than "
          "moving these bytes inside the GPU's memory",
          format_bytes_binary(m.sweep.front().bytes), format_bytes_binary(m.sweep.back().bytes), fastest->time_us,
          slowest->time_us, m.fit ? fmt::format(" (fitted alpha {:.0f} us per step)", m.fit->alpha_us) : ""));
  }
  return caveats;
}

Series make_series(const char* id, const char* name, const char* role, const char* y_label, const char* y_unit) {
  return Series{id, name, role, "message size", "bytes", y_label, y_unit, {}};
}

void add_point(Series& series, double x, double y, double y_min, double y_max) {
  series.points.push_back({x, y, y_min, y_max});
}

// Busbw against size (measured, whiskers from the fastest and slowest sample; points above their ceiling apart), the
// fitted model, the ceiling per size; time against size; wrong elements per size (the table's #wrong column).
std::vector<Series> sweep_series(const RunPoints& p, const AllreduceMeasured& m, double factor) {
  Series busbw_measured = make_series("busbw_measured", "busbw (measured)", "measured", "bus bandwidth", "GB/s");
  Series busbw_above =
      make_series("busbw_above_ceiling", "busbw above its ceiling (see the note)", "measured", "bus bandwidth", "GB/s");
  Series busbw_model = make_series("busbw_fit", "alpha-beta model (fit)", "theory", "bus bandwidth", "GB/s");
  // On GPUs one copy probe at S stands for every size (see the run's notes); on CPU ranks each size has its own.
  Series ceiling = make_series(
      "copy_ceiling",
      p.hardware_threads == 0 ? "copy ceiling (one probe at S, all sizes)" : "copy ceiling (measured at each size)",
      "measured", "bus bandwidth", "GB/s");
  Series time_measured = make_series("time_measured", "time (measured)", "measured", "time", "us");
  Series time_model = make_series("time_fit", "alpha-beta time (fit)", "theory", "time", "us");
  Series wrong = make_series("wrong_elements", "wrong elements (measured)", "measured", "wrong elements", "");
  for (const SweepRow& row : m.sweep) {
    const double x = row.bytes;
    add_point(row.above_ceiling ? busbw_above : busbw_measured, x, row.busbw_gbps,
              factor * algbw_gbps(x, row.time_max_us), factor * algbw_gbps(x, row.time_min_us));
    add_point(ceiling, x, row.ceiling_gbps, row.ceiling_gbps, row.ceiling_gbps);
    add_point(time_measured, x, row.time_us, row.time_min_us, row.time_max_us);
    add_point(wrong, x, double(row.wrong), double(row.wrong), double(row.wrong));
    if (m.fit) {
      const double t = collectives::model_time_us(cost_at(p, x), m.fit->alpha_us, m.fit->beta_gbps);
      const double b = factor * algbw_gbps(x, t);
      add_point(busbw_model, x, b, b, b);
      add_point(time_model, x, t, t, t);
    }
  }
  std::vector<Series> out;
  for (Series* s : {&busbw_measured, &busbw_above, &busbw_model, &ceiling, &time_measured, &time_model, &wrong})
    if (!s->points.empty()) out.push_back(std::move(*s));
  return out;
}

}  // namespace

RunSummary summarize_run(const RunPoints& p) {
  RunSummary summary;
  const double factor = collectives::busbw_factor(p.op, p.n_ranks);
  const SweepRow chosen = row_of(p.chosen, factor);
  AllreduceMeasured& m = summary.measured;
  m.time_us = chosen.time_us;
  m.time_min_us = chosen.time_min_us;
  m.time_max_us = chosen.time_max_us;
  m.algbw_gbps = chosen.algbw_gbps;
  m.busbw_gbps = chosen.busbw_gbps;
  m.wrong = chosen.wrong;
  m.ceiling_gbps = chosen.ceiling_gbps;
  m.busbw_fraction_of_ceiling = chosen.ceiling_gbps > 0 ? chosen.busbw_gbps / chosen.ceiling_gbps : 0.0;
  m.calls_per_sample = p.chosen.calls_per_sample;
  m.ceiling_figures = p.chosen.ceiling_figures;
  if (p.chosen.bytes_sent_max_rank >= 0) m.bytes_sent_max_rank = p.chosen.bytes_sent_max_rank;
  const collectives::AlphaBetaFit fit = fit_model(p, summary.notes);
  if (fit.valid) {
    const CollectiveCost at_chosen = cost_at(p, p.chosen.bytes);
    m.fit = AlphaBeta{.alpha_us = fit.alpha_us,
                      .beta_gbps = fit.beta_gbps,
                      .alpha_term_us = at_chosen.steps * fit.alpha_us,
                      .beta_term_us = at_chosen.model_bytes / (fit.beta_gbps * 1e3)};
  }
  for (const SizePoint& point : p.sweep) {
    m.sweep.push_back(row_of(point, factor));
    m.sweep_wrong += point.wrong;
  }
  m.hardware_threads = p.hardware_threads;
  m.oversubscribed = p.hardware_threads > 0 && p.n_ranks > p.hardware_threads;
  m.caveats = caveats_of(p, m, chosen);
  summary.series = sweep_series(p, m, factor);
  return summary;
}

}  // namespace dlsys::allreduce
