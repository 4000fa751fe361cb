#include "lessons/matmul/matmul_values.h"

namespace dlsys::matmul {

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
    j[v.key + "_gflops"] = v.gflops;
    j[v.key + "_time_us"] = v.time_us;
    j[v.key + "_time_min_us"] = v.time_min_us;
    j[v.key + "_time_max_us"] = v.time_max_us;
    j[v.key + "_percent_of_peak"] = v.percent_of_peak;
    j[v.key + "_max_rel_err"] = v.max_rel_err;
  }
  if (m.tiled_percent_of_blas) j["tiled_percent_of_blas"] = *m.tiled_percent_of_blas;
  if (m.tiled_speedup_over_naive) j["tiled_speedup_over_naive"] = *m.tiled_speedup_over_naive;
  j["max_rel_err"] = m.max_rel_err;
  j["error_tolerance"] = m.error_tolerance;
  j["wrong"] = m.wrong;
}

}  // namespace dlsys::matmul
