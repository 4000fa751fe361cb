#include "lessons/allreduce/allreduce_values.h"

#include "engine/json_read.h"

namespace dlsys::allreduce {

void to_json(nlohmann::ordered_json& j, const SweepRow& r) {
  j["bytes"] = r.bytes;
  j["count"] = r.count;
  j["time_us"] = r.time_us;
  j["time_min_us"] = r.time_min_us;
  j["time_max_us"] = r.time_max_us;
  j["algbw_gbps"] = r.algbw_gbps;
  j["busbw_gbps"] = r.busbw_gbps;
  j["ceiling_gbps"] = r.ceiling_gbps;
  j["wrong"] = r.wrong;
  j["above_ceiling"] = r.above_ceiling;
}

void to_json(nlohmann::ordered_json& j, const AllreduceTheory& t) {
  j["steps"] = t.steps;
  j["bytes_sent_per_rank"] = t.bytes_sent_per_rank;
  j["busbw_factor"] = t.busbw_factor;
  j["model_bytes"] = t.model_bytes;
  j["count"] = t.count;
  j["chunk_bytes"] = t.chunk_bytes;
}

namespace {
nlohmann::ordered_json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}
}  // namespace

void to_json(nlohmann::ordered_json& j, const AlgorithmRun& a) {
  j["algo"] = a.algo;
  j["steps"] = a.steps;
  j["messages_sent"] = a.messages_sent;
  j["bytes_sent_per_rank"] = a.bytes_sent_per_rank;
  j["bytes_sent_counted"] = a.bytes_sent_counted;
  j["alpha_us"] = optional_json(a.alpha_us);
  j["beta_gbps"] = optional_json(a.beta_gbps);
  j["wrong"] = a.wrong;
  j["sweep"] = nlohmann::ordered_json::array();
  for (const SweepRow& row : a.sweep) j["sweep"].push_back(row);
}

void to_json(nlohmann::ordered_json& j, const AlgorithmComparison& c) {
  j["algorithms"] = nlohmann::ordered_json::array();
  for (const AlgorithmRun& a : c.algorithms) j["algorithms"].push_back(a);
  j["crossover_predicted_bytes"] = optional_json(c.crossover_predicted_bytes);
  j["crossover_measured_bytes"] = optional_json(c.crossover_measured_bytes);
  j["crossover_sentence"] = c.crossover_sentence;
}

void to_json(nlohmann::ordered_json& j, const AllreduceMeasured& m) {
  j["time_us"] = m.time_us;
  j["time_min_us"] = m.time_min_us;
  j["time_max_us"] = m.time_max_us;
  j["algbw_gbps"] = m.algbw_gbps;
  j["busbw_gbps"] = m.busbw_gbps;
  j["wrong"] = m.wrong;
  j["ceiling_gbps"] = m.ceiling_gbps;
  j["busbw_fraction_of_ceiling"] = m.busbw_fraction_of_ceiling;
  // Written as null when there is no fit, so a script finds the key either way.
  const auto or_null = [&](double AlphaBeta::*field) {
    return m.fit ? nlohmann::ordered_json((*m.fit).*field) : nlohmann::ordered_json(nullptr);
  };
  j["alpha_us"] = or_null(&AlphaBeta::alpha_us);
  j["beta_gbps"] = or_null(&AlphaBeta::beta_gbps);
  j["alpha_term_us"] = or_null(&AlphaBeta::latency_term_us);
  j["beta_term_us"] = or_null(&AlphaBeta::bandwidth_term_us);
  j["sweep_wrong"] = m.sweep_wrong;
  if (m.bytes_sent_max_rank) j["bytes_sent_max_rank"] = *m.bytes_sent_max_rank;
  j["calls_per_sample"] = m.calls_per_sample;
  for (const auto& [key, value] : m.ceiling_figures) j[key] = value;
  j["hardware_threads"] = m.hardware_threads;
  j["oversubscribed"] = m.oversubscribed;
  j["caveats"] = m.caveats;
  j["sweep"] = nlohmann::ordered_json::array();
  for (const SweepRow& row : m.sweep) j["sweep"].push_back(row);
  if (m.comparison)
    j["comparison"] = *m.comparison;
  else
    j["comparison"] = nullptr;
  j["comparison_skipped"] = m.comparison_skipped;
}

void from_json(const nlohmann::ordered_json& j, SweepRow& r) {
  read_key(j, "bytes", r.bytes);
  read_key(j, "count", r.count);
  read_key(j, "time_us", r.time_us);
  read_key(j, "time_min_us", r.time_min_us);
  read_key(j, "time_max_us", r.time_max_us);
  read_key(j, "algbw_gbps", r.algbw_gbps);
  read_key(j, "busbw_gbps", r.busbw_gbps);
  read_key(j, "ceiling_gbps", r.ceiling_gbps);
  read_key(j, "wrong", r.wrong);
  read_key(j, "above_ceiling", r.above_ceiling);
}

void from_json(const nlohmann::ordered_json& j, AllreduceTheory& t) {
  read_key(j, "steps", t.steps);
  read_key(j, "bytes_sent_per_rank", t.bytes_sent_per_rank);
  read_key(j, "busbw_factor", t.busbw_factor);
  read_key(j, "model_bytes", t.model_bytes);
  read_key(j, "count", t.count);
  read_key(j, "chunk_bytes", t.chunk_bytes);
}

void from_json(const nlohmann::ordered_json& j, AllreduceMeasured& m) {
  read_key(j, "time_us", m.time_us);
  read_key(j, "time_min_us", m.time_min_us);
  read_key(j, "time_max_us", m.time_max_us);
  read_key(j, "algbw_gbps", m.algbw_gbps);
  read_key(j, "busbw_gbps", m.busbw_gbps);
  read_key(j, "wrong", m.wrong);
  read_key(j, "ceiling_gbps", m.ceiling_gbps);
  read_key(j, "busbw_fraction_of_ceiling", m.busbw_fraction_of_ceiling);
  // The fit's four keys are null together when there was no fit.
  if (j.is_object() && j.contains("alpha_us") && j["alpha_us"].is_null()) {
    m.fit.reset();
  } else {
    AlphaBeta fit;
    read_key(j, "alpha_us", fit.alpha_us);
    read_key(j, "beta_gbps", fit.beta_gbps);
    read_key(j, "alpha_term_us", fit.latency_term_us);
    read_key(j, "beta_term_us", fit.bandwidth_term_us);
    m.fit = fit;
  }
  read_key(j, "sweep_wrong", m.sweep_wrong);
  read_key_if_present(j, "bytes_sent_max_rank", m.bytes_sent_max_rank);
  read_key(j, "calls_per_sample", m.calls_per_sample);
  // The ceiling's figures are written under their own names between calls_per_sample and hardware_threads.
  m.ceiling_figures.clear();
  bool in_figures = false;
  for (const auto& [key, value] : j.items()) {
    if (key == "hardware_threads") break;
    if (in_figures) {
      double figure = 0;
      read_key(j, key, figure);
      m.ceiling_figures.emplace_back(key, figure);
    }
    in_figures |= key == "calls_per_sample";
  }
  read_key(j, "hardware_threads", m.hardware_threads);
  read_key(j, "oversubscribed", m.oversubscribed);
  read_key(j, "caveats", m.caveats);
  read_key(j, "sweep", m.sweep);
  // Runs recorded before the comparison existed (tests/data's H100 run) lack both keys: they open without it.
  if (j.contains("comparison")) read_key(j, "comparison", m.comparison);
  if (j.contains("comparison_skipped")) read_key(j, "comparison_skipped", m.comparison_skipped);
}

void from_json(const nlohmann::ordered_json& j, AlgorithmRun& a) {
  read_key(j, "algo", a.algo);
  read_key(j, "steps", a.steps);
  read_key(j, "messages_sent", a.messages_sent);
  read_key(j, "bytes_sent_per_rank", a.bytes_sent_per_rank);
  read_key(j, "bytes_sent_counted", a.bytes_sent_counted);
  read_key(j, "alpha_us", a.alpha_us);
  read_key(j, "beta_gbps", a.beta_gbps);
  read_key(j, "wrong", a.wrong);
  read_key(j, "sweep", a.sweep);
}

void from_json(const nlohmann::ordered_json& j, AlgorithmComparison& c) {
  read_key(j, "algorithms", c.algorithms);
  check_not_empty("algorithms", c.algorithms.size());  // the view sizes its plot from the first algorithm's sweep
  read_key(j, "crossover_predicted_bytes", c.crossover_predicted_bytes);
  read_key(j, "crossover_measured_bytes", c.crossover_measured_bytes);
  read_key(j, "crossover_sentence", c.crossover_sentence);
}

}  // namespace dlsys::allreduce
