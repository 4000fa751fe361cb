#include "lessons/allreduce/mpi_values.h"

namespace dlsys::allreduce {

void to_json(nlohmann::ordered_json& j, const ProcessRow& r) {
  j["collective"] = r.collective;
  j["implementation"] = r.implementation;
  j["bytes"] = r.bytes;
  j["count"] = r.count;
  j["time_us"] = r.time_us;
  j["time_min_us"] = r.time_min_us;
  j["time_max_us"] = r.time_max_us;
  j["algbw_gbps"] = r.algbw_gbps;
  j["busbw_gbps"] = r.busbw_gbps;
  j["wrong"] = r.wrong;
  j["calls_per_sample"] = r.calls_per_sample;
}

void to_json(nlohmann::ordered_json& j, const AllreduceProcessesMeasured& m) {
  j["launcher"] = m.launcher;
  j["backend"] = m.backend;
  j["world_size"] = m.world_size;
  j["hosts"] = m.hosts;
  j["mpi_library"] = m.mpi_library;
  j["label"] = m.label;
  j["hardware_threads"] = m.hardware_threads;
  j["ranks_on_this_host"] = m.ranks_on_this_host;
  j["oversubscribed"] = m.oversubscribed;
  j["wrong"] = m.wrong;
  j["bench_bytes"] = m.bench_bytes;
  j["bench_peer"] = m.bench_peer;
  j["lab_ring_busbw_gbps"] = m.lab_ring_busbw_gbps;
  j["mpi_busbw_gbps"] = m.mpi_busbw_gbps;
  // Written as null on the GPU path, so a script finds the key either way.
  j["lab_ring_fraction_of_mpi_busbw"] =
      m.lab_ring_fraction_of_mpi_busbw ? nlohmann::ordered_json(*m.lab_ring_fraction_of_mpi_busbw) : nullptr;
  j["bench_expected_fraction"] = m.bench_expected_fraction;
  j["bench_met"] = m.bench_met;
  j["record_steps"] = m.record_steps;
  j["record_matches_threads"] = m.record_matches_threads;
  j["caveats"] = m.caveats;
  j["rows"] = nlohmann::ordered_json::array();
  for (const ProcessRow& row : m.rows) j["rows"].push_back(row);
}

}  // namespace dlsys::allreduce
