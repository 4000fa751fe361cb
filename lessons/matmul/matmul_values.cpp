#include "lessons/matmul/matmul_values.h"

#include "engine/json_read.h"

namespace dlsys::matmul {

namespace {

// A plain field whose key older recorded runs lack: left at its default there.
template <class T>
void read_if_present(const nlohmann::ordered_json& j, const std::string& key, T& out) {
  if (j.contains(key)) read_key(j, key, out);
}

}  // namespace

const VariantMeasure* MatmulMeasured::variant(const std::string& key) const {
  for (const auto& v : variants)
    if (v.key == key) return &v;
  return nullptr;
}

void to_json(nlohmann::ordered_json& j, const MatmulTheory& t) {
  j["mults"] = t.mults;
  j["adds"] = t.adds;
  j["flops"] = t.flops;
  j["exact_scalar_ops"] = t.exact_scalar_ops;
  j["bytes_naive"] = t.bytes_naive;
  j["bytes_tiled"] = t.bytes_tiled;
  j["bytes_minimum"] = t.bytes_minimum;
  j["intensity_naive"] = t.intensity_naive;
  j["intensity_tiled"] = t.intensity_tiled;
  j["intensity_minimum"] = t.intensity_minimum;
  j["tile"] = t.tile;
  j["slope"] = t.slope;
  if (t.peak_gflops) {
    j["peak_gflops"] = *t.peak_gflops;
    j["peak_source"] = t.peak_source;
  }
  if (t.nominal_peak_gflops > 0) {
    j["nominal_peak_gflops"] = t.nominal_peak_gflops;
    j["nominal_peak_source"] = t.nominal_peak_source;
  }
}

// Per-variant values are flat keys prefixed by the variant ("tiled_gflops"), as scripts reading the JSON expect.
void to_json(nlohmann::ordered_json& j, const MatmulMeasured& m) {
  j = nlohmann::ordered_json::object();
  for (const auto& v : m.variants) j[v.key + "_slope"] = v.slope;
  for (const auto& v : m.variants) {
    j[v.key + "_slope_from_n"] = v.slope_from_n;
    j[v.key + "_timed_calls_min"] = v.timed_calls_min;
  }
  for (const auto& v : m.variants) {
    j[v.key + "_kernel"] = v.kernel;
    j[v.key + "_precision"] = v.precision;
    j[v.key + "_library"] = v.library;
    j[v.key + "_gflops"] = v.gflops;
    j[v.key + "_time_us"] = v.time_us;
    j[v.key + "_time_min_us"] = v.time_min_us;
    j[v.key + "_time_max_us"] = v.time_max_us;
    j[v.key + "_percent_of_peak"] = v.percent_of_peak;
    j[v.key + "_percent_of_library"] = v.percent_of_library;
    j[v.key + "_bytes_moved"] = v.bytes_moved;
    j[v.key + "_intensity"] = v.intensity;
    j[v.key + "_memory_roof_gflops"] = v.memory_roof_gflops;
    j[v.key + "_traffic"] = v.traffic;
    j[v.key + "_max_rel_err"] = v.max_rel_err;
    j[v.key + "_error_tolerance"] = v.error_tolerance;
  }
  if (m.tiled_percent_of_blas) j["tiled_percent_of_blas"] = *m.tiled_percent_of_blas;
  if (m.tiled_speedup_over_naive) j["tiled_speedup_over_naive"] = *m.tiled_speedup_over_naive;
  j["max_rel_err"] = m.max_rel_err;
  j["error_tolerance"] = m.error_tolerance;
  j["wrong"] = m.wrong;
  j["reference_samples"] = m.reference_samples;
  if (!m.best_fp32_key.empty()) {
    j["best_fp32_key"] = m.best_fp32_key;
    j["best_fp32_percent_of_blas"] = m.best_fp32_percent_of_blas;
  }
  if (m.slope_caveat) j["slope_caveat"] = *m.slope_caveat;
  if (!m.sweep_left_out.empty()) j["sweep_left_out"] = m.sweep_left_out;
}

void from_json(const nlohmann::ordered_json& j, MatmulTheory& t) {
  read_key(j, "mults", t.mults);
  read_key(j, "adds", t.adds);
  read_key(j, "flops", t.flops);
  read_key(j, "exact_scalar_ops", t.exact_scalar_ops);
  read_key(j, "bytes_naive", t.bytes_naive);
  read_key(j, "bytes_tiled", t.bytes_tiled);
  read_key(j, "bytes_minimum", t.bytes_minimum);
  read_key(j, "intensity_naive", t.intensity_naive);
  read_key(j, "intensity_tiled", t.intensity_tiled);
  read_key(j, "intensity_minimum", t.intensity_minimum);
  read_key(j, "tile", t.tile);
  read_key(j, "slope", t.slope);
  read_key_if_present(j, "peak_gflops", t.peak_gflops);
  t.peak_source.clear();
  if (t.peak_gflops) read_key(j, "peak_source", t.peak_source);
  t.nominal_peak_gflops = 0;
  t.nominal_peak_source.clear();
  if (j.contains("nominal_peak_gflops")) {
    read_key(j, "nominal_peak_gflops", t.nominal_peak_gflops);
    read_key(j, "nominal_peak_source", t.nominal_peak_source);
  }
}

void from_json(const nlohmann::ordered_json& j, MatmulMeasured& m) {
  // The variants are the keys "<variant>_slope", in the order they ran.
  m.variants.clear();
  const std::string slope_suffix = "_slope";
  for (const auto& [key, value] : j.items())
    if (key.size() > slope_suffix.size() &&
        key.compare(key.size() - slope_suffix.size(), std::string::npos, slope_suffix) == 0)
      m.variants.push_back({.key = key.substr(0, key.size() - slope_suffix.size())});
  for (VariantMeasure& v : m.variants) {
    read_key(j, v.key + "_slope", v.slope);
    read_key(j, v.key + "_slope_from_n", v.slope_from_n);
    read_key(j, v.key + "_timed_calls_min", v.timed_calls_min);
    read_key(j, v.key + "_gflops", v.gflops);
    read_key(j, v.key + "_time_us", v.time_us);
    read_key(j, v.key + "_time_min_us", v.time_min_us);
    read_key(j, v.key + "_time_max_us", v.time_max_us);
    read_key(j, v.key + "_percent_of_peak", v.percent_of_peak);
    read_key(j, v.key + "_max_rel_err", v.max_rel_err);
    // Absent from runs recorded before the GPU ladder existed: those were fp32 naive / tiled / blas.
    read_if_present(j, v.key + "_kernel", v.kernel);
    read_if_present(j, v.key + "_precision", v.precision);
    read_if_present(j, v.key + "_library", v.library);
    read_if_present(j, v.key + "_percent_of_library", v.percent_of_library);
    read_if_present(j, v.key + "_bytes_moved", v.bytes_moved);
    read_if_present(j, v.key + "_intensity", v.intensity);
    read_if_present(j, v.key + "_memory_roof_gflops", v.memory_roof_gflops);
    read_if_present(j, v.key + "_traffic", v.traffic);
    read_if_present(j, v.key + "_error_tolerance", v.error_tolerance);
  }
  read_key_if_present(j, "tiled_percent_of_blas", m.tiled_percent_of_blas);
  read_key_if_present(j, "tiled_speedup_over_naive", m.tiled_speedup_over_naive);
  read_key(j, "max_rel_err", m.max_rel_err);
  read_key(j, "error_tolerance", m.error_tolerance);
  read_key(j, "wrong", m.wrong);
  read_key_if_present(j, "slope_caveat", m.slope_caveat);  // absent from runs recorded before it existed
  read_if_present(j, "reference_samples", m.reference_samples);
  read_if_present(j, "best_fp32_key", m.best_fp32_key);
  read_if_present(j, "best_fp32_percent_of_blas", m.best_fp32_percent_of_blas);
  read_if_present(j, "sweep_left_out", m.sweep_left_out);
}

}  // namespace dlsys::matmul
