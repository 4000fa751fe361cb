#include "lessons/allreduce/allreduce_values.h"

namespace dlsys::allreduce {

void to_json(nlohmann::ordered_json& j, const AllreduceTheory& t) {
  j["steps"] = t.steps;
  j["bytes_sent_per_rank"] = t.bytes_sent_per_rank;
  j["busbw_factor"] = t.busbw_factor;
  j["model_bytes"] = t.model_bytes;
  j["count"] = t.count;
  j["chunk_bytes"] = t.chunk_bytes;
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
  j["alpha_us"] = m.fit ? nlohmann::ordered_json(m.fit->alpha_us) : nlohmann::ordered_json(nullptr);
  j["beta_gbps"] = m.fit ? nlohmann::ordered_json(m.fit->beta_gbps) : nlohmann::ordered_json(nullptr);
  j["sweep_wrong"] = m.sweep_wrong;
  if (m.bytes_sent_max_rank) j["bytes_sent_max_rank"] = *m.bytes_sent_max_rank;
  j["calls_per_sample"] = m.calls_per_sample;
  for (const auto& [key, value] : m.ceiling_figures) j[key] = value;
}

}  // namespace dlsys::allreduce
