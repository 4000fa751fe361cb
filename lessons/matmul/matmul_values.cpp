#include "lessons/matmul/matmul_values.h"

#include "engine/json_read.h"
#include "engine/lesson_values.h"

namespace dlsys::matmul {

namespace {

DLSYS_VALUES_PART(ClosedForms, MatmulTheory, mults, adds, flops, exact_scalar_ops, bytes_naive, bytes_tiled,
                  bytes_minimum, intensity_naive, intensity_tiled, intensity_minimum, tile, slope)
// Each peak with its source, both written once the run knows the peak.
DLSYS_VALUES_PART(Peak, MatmulTheory, peak_gflops, peak_source)
DLSYS_VALUES_PART(NominalPeak, MatmulTheory, nominal_peak_gflops, nominal_peak_source)

// Per-variant values are flat keys prefixed by the variant ("tiled_gflops"), as scripts reading the JSON expect;
// the parts that runs recorded before the GPU ladder lack (those were fp32 naive / tiled / blas) are read when there.
DLSYS_VALUES_PART(VariantSlope, VariantMeasure, slope)
DLSYS_VALUES_PART(VariantFitRange, VariantMeasure, slope_from_n, timed_calls_min)
DLSYS_VALUES_PART(VariantLadder, VariantMeasure, kernel, precision, library)
DLSYS_VALUES_PART(VariantRate, VariantMeasure, gflops, time_us, time_min_us, time_max_us, percent_of_peak)
DLSYS_VALUES_PART(VariantRoof, VariantMeasure, percent_of_library, bytes_moved, intensity, memory_roof_gflops, traffic)
DLSYS_VALUES_PART(VariantError, VariantMeasure, max_rel_err)
DLSYS_VALUES_PART(VariantTolerance, VariantMeasure, error_tolerance)

DLSYS_VALUES_PART(Summary, MatmulMeasured, tiled_percent_of_blas, tiled_speedup_over_naive, max_rel_err,
                  error_tolerance, wrong)
// Absent from runs recorded before they existed: read when there.
DLSYS_VALUES_PART(Samples, MatmulMeasured, reference_samples)
DLSYS_VALUES_PART(BestFp32, MatmulMeasured, best_fp32_key, best_fp32_percent_of_blas)
DLSYS_VALUES_PART(SlopeCaveat, MatmulMeasured, slope_caveat)
DLSYS_VALUES_PART(SweepLeftOut, MatmulMeasured, sweep_left_out)
DLSYS_VALUES_PART(RoofBandwidth, MatmulMeasured, roof_bandwidth_gbps, roof_bandwidth_source)

std::string prefix(const VariantMeasure& v) { return v.key + "_"; }

// A variant's block of keys in the order written; the parts older runs lack are read when there.
struct VariantPart {
  void (*write)(nlohmann::ordered_json&, const VariantMeasure&, const std::string&);
  void (*read)(const nlohmann::ordered_json&, VariantMeasure&, const std::string&);
};
constexpr VariantPart kVariantBlock[] = {{VariantLadder::write, VariantLadder::read_if_present},
                                         {VariantRate::write, VariantRate::read},
                                         {VariantRoof::write, VariantRoof::read_if_present},
                                         {VariantError::write, VariantError::read},
                                         {VariantTolerance::write, VariantTolerance::read_if_present}};

}  // namespace

const VariantMeasure* MatmulMeasured::variant(const std::string& key) const {
  for (const auto& v : variants)
    if (v.key == key) return &v;
  return nullptr;
}

void to_json(nlohmann::ordered_json& j, const MatmulTheory& t) {
  ClosedForms::write(j, t);
  if (t.peak_gflops) Peak::write(j, t);
  if (t.nominal_peak_gflops > 0) NominalPeak::write(j, t);
}

void from_json(const nlohmann::ordered_json& j, MatmulTheory& t) {
  t = MatmulTheory{};
  ClosedForms::read(j, t);
  Peak::read_if_present(j, t);
  NominalPeak::read_if_present(j, t);
}

void to_json(nlohmann::ordered_json& j, const MatmulMeasured& m) {
  j = nlohmann::ordered_json::object();
  for (const auto& v : m.variants) VariantSlope::write(j, v, prefix(v));
  for (const auto& v : m.variants) VariantFitRange::write(j, v, prefix(v));
  for (const auto& v : m.variants)
    for (const VariantPart& part : kVariantBlock) part.write(j, v, prefix(v));
  Summary::write(j, m);
  Samples::write(j, m);
  if (!m.best_fp32_key.empty()) BestFp32::write(j, m);
  if (m.roof_bandwidth_gbps) RoofBandwidth::write(j, m);
  SlopeCaveat::write(j, m);
  if (!m.sweep_left_out.empty()) SweepLeftOut::write(j, m);
}

void from_json(const nlohmann::ordered_json& j, MatmulMeasured& m) {
  m = MatmulMeasured{};
  // The variants are the keys "<variant>_slope", in the order they ran.
  const std::string slope_suffix = "_slope";
  for (const auto& [key, value] : j.items())
    if (key.size() > slope_suffix.size() &&
        key.compare(key.size() - slope_suffix.size(), std::string::npos, slope_suffix) == 0)
      m.variants.push_back({.key = key.substr(0, key.size() - slope_suffix.size())});
  for (VariantMeasure& v : m.variants) {
    VariantSlope::read(j, v, prefix(v));
    VariantFitRange::read(j, v, prefix(v));
    for (const VariantPart& part : kVariantBlock) part.read(j, v, prefix(v));
  }
  Summary::read(j, m);
  Samples::read_if_present(j, m);
  BestFp32::read_if_present(j, m);
  SlopeCaveat::read(j, m);
  SweepLeftOut::read_if_present(j, m);
  RoofBandwidth::read_if_present(j, m);
  // The roofline's slope: a bandwidth of zero or less would draw a roof through nothing (a log axis has no 0).
  if (m.roof_bandwidth_gbps && !(*m.roof_bandwidth_gbps > 0))
    throw JsonKeyError("roof_bandwidth_gbps", "is not positive; allowed: more than 0 GB/s");
}

}  // namespace dlsys::matmul
