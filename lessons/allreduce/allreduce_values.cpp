#include "lessons/allreduce/allreduce_values.h"

namespace dlsys::allreduce {

namespace {
DLSYS_VALUES_PART(ChosenSize, AllreduceMeasured, time_us, time_min_us, time_max_us, algbw_gbps, busbw_gbps, wrong,
                  ceiling_gbps, busbw_fraction_of_ceiling)
// Written as null when there is no fit, so a script finds the keys either way.
DLSYS_VALUES_PART(FitKeys, AlphaBeta, alpha_us, beta_gbps, alpha_term_us, beta_term_us)
DLSYS_VALUES_PART(SweepCounts, AllreduceMeasured, sweep_wrong, bytes_sent_max_rank, calls_per_sample)
// The ceiling's figures come next, under their own names, up to hardware_threads.
DLSYS_VALUES_PART(Machine, AllreduceMeasured, hardware_threads, oversubscribed, caveats, sweep)
// Runs recorded before the comparison existed (tests/data's H100 run) lack both keys: they open without it.
DLSYS_VALUES_PART(Comparison, AllreduceMeasured, comparison, comparison_skipped)

void write_fit(nlohmann::ordered_json& j, const std::optional<AlphaBeta>& fit) {
  nlohmann::ordered_json keys;
  FitKeys::write(keys, fit.value_or(AlphaBeta{}));
  for (const auto& [key, value] : keys.items()) j[key] = fit ? value : nlohmann::ordered_json(nullptr);
}

void read_fit(const nlohmann::ordered_json& j, std::optional<AlphaBeta>& fit) {
  // The fit's keys are null together when there was no fit.
  fit.reset();
  if (j.is_object() && j.contains("alpha_us") && j["alpha_us"].is_null()) return;
  FitKeys::read(j, fit.emplace());
}

void read_ceiling_figures(const nlohmann::ordered_json& j, std::vector<std::pair<std::string, double>>& figures) {
  figures.clear();
  bool in_figures = false;
  for (const auto& [key, value] : j.items()) {
    if (key == "hardware_threads") break;
    if (in_figures) read_key(j, key, figures.emplace_back(key, 0).second);
    in_figures |= key == "calls_per_sample";
  }
}
}  // namespace

void to_json(nlohmann::ordered_json& j, const AllreduceMeasured& m) {
  ChosenSize::write(j, m);
  write_fit(j, m.fit);
  SweepCounts::write(j, m);
  for (const auto& [key, value] : m.ceiling_figures) j[key] = value;
  Machine::write(j, m);
  Comparison::write(j, m);
}

void from_json(const nlohmann::ordered_json& j, AllreduceMeasured& m) {
  ChosenSize::read(j, m);
  read_fit(j, m.fit);
  SweepCounts::read(j, m);
  read_ceiling_figures(j, m.ceiling_figures);
  Machine::read(j, m);
  Comparison::read_if_present(j, m);
}

}  // namespace dlsys::allreduce
