#include "lessons/allreduce/mpi_values.h"

#include "engine/json_read.h"

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

void from_json(const nlohmann::ordered_json& j, ProcessRow& r) {
  read_key(j, "collective", r.collective);
  read_key(j, "implementation", r.implementation);
  read_key(j, "bytes", r.bytes);
  read_key(j, "count", r.count);
  read_key(j, "time_us", r.time_us);
  read_key(j, "time_min_us", r.time_min_us);
  read_key(j, "time_max_us", r.time_max_us);
  read_key(j, "algbw_gbps", r.algbw_gbps);
  read_key(j, "busbw_gbps", r.busbw_gbps);
  read_key(j, "wrong", r.wrong);
  read_key(j, "calls_per_sample", r.calls_per_sample);
}

void from_json(const nlohmann::ordered_json& j, AllreduceProcessesMeasured& m) {
  read_key(j, "launcher", m.launcher);
  read_key(j, "backend", m.backend);
  read_key(j, "world_size", m.world_size);
  read_key(j, "hosts", m.hosts);
  read_key(j, "mpi_library", m.mpi_library);
  read_key(j, "label", m.label);
  read_key(j, "hardware_threads", m.hardware_threads);
  read_key(j, "ranks_on_this_host", m.ranks_on_this_host);
  read_key(j, "oversubscribed", m.oversubscribed);
  read_key(j, "wrong", m.wrong);
  read_key(j, "bench_bytes", m.bench_bytes);
  read_key(j, "bench_peer", m.bench_peer);
  read_key(j, "lab_ring_busbw_gbps", m.lab_ring_busbw_gbps);
  read_key(j, "mpi_busbw_gbps", m.mpi_busbw_gbps);
  read_key(j, "lab_ring_fraction_of_mpi_busbw", m.lab_ring_fraction_of_mpi_busbw);
  read_key(j, "bench_expected_fraction", m.bench_expected_fraction);
  read_key(j, "bench_met", m.bench_met);
  read_key(j, "record_steps", m.record_steps);
  read_key(j, "record_matches_threads", m.record_matches_threads);
  read_key(j, "caveats", m.caveats);
  read_key(j, "rows", m.rows);
}

}  // namespace dlsys::allreduce
