#include "lessons/roofline/roofline_values.h"

namespace dlsys::roofline {

namespace {
DLSYS_VALUES_PART(Ridge, RooflineTheory, ridge_flop_per_byte)
// The datasheet-style peak with its source, both written once a run has measured the ceilings.
DLSYS_VALUES_PART(DatasheetPeak, RooflineTheory, datasheet_peak_gflops, datasheet_source)
DLSYS_VALUES_PART(CourseNumbers, RooflineTheory, datasheet_bandwidth_gbps, a100_bandwidth_bytes_per_s, a100_fp32_gflops,
                  a100_floats_per_s, a100_y2x_bytes_per_element, a100_y2x_elements_per_s, a100_y2x_gflops,
                  a100_y2x_percent_of_compute, a100_fp32_ridge_flop_per_byte, example_peak_gflops,
                  example_bandwidth_gbps, example_ridge_flop_per_byte, example_intensity_flop_per_byte,
                  example_attainable_gflops, sweep_intensity)
DLSYS_VALUES_PART(Ceilings, RooflineMeasured, stream_copy_gbps, stream_scale_gbps, stream_add_gbps, stream_triad_gbps,
                  bandwidth_gbps, bandwidth_kernel, peak_gflops, sgemm_peak_gflops, y2x_gflops, floats_per_s,
                  y2x_elements_per_s, y2x_predicted_gflops, y2x_percent_of_peak, sweep_bandwidth_gbps,
                  sweep_plateau_gflops, sweep_ridge_flop_per_byte, ridge_ratio, sweep_crosses_ridge)
// Per-kernel values as flat keys prefixed by the kernel's id ("matmul_tiled_gflops"), like the matmul lesson's; written
// only: a recorded run reads the kernels from roof_points.
DLSYS_VALUES_PART(PointKeys, RoofPoint, intensity, gflops, percent_of_roof)
// Every point in full after the documented keys, so a recorded run draws the same roof, sweep and kernels.
DLSYS_VALUES_PART(Checks, RooflineMeasured, worst_percent_above_roof, worst_point, overhead_call_floor_us,
                  overhead_pool_floor_us, overhead_call_what, overhead_pool_what, launch_and_wait_us, max_rel_err,
                  wrong, roof_bar_met, ridge_bar_met, stream_kernels, sweep_points, sweep_nearest_ridge, roof_points)
}  // namespace

const RoofPoint* RooflineMeasured::kernel(const std::string& id) const {
  for (const RoofPoint& p : roof_points)
    if (p.id == id) return &p;
  return nullptr;
}

void to_json(nlohmann::ordered_json& j, const RooflineTheory& t) {
  Ridge::write(j, t);
  if (t.datasheet_peak_gflops) DatasheetPeak::write(j, t);
  CourseNumbers::write(j, t);
}

void to_json(nlohmann::ordered_json& j, const RooflineMeasured& m) {
  j = nlohmann::ordered_json::object();
  Ceilings::write(j, m);
  for (const RoofPoint& p : m.roof_points) PointKeys::write(j, p, p.id + "_");
  Checks::write(j, m);
}

void from_json(const nlohmann::ordered_json& j, RooflineTheory& t) {
  t = RooflineTheory{};
  Ridge::read(j, t);
  DatasheetPeak::read_if_present(j, t);
  CourseNumbers::read(j, t);
}

void from_json(const nlohmann::ordered_json& j, RooflineMeasured& m) {
  Ceilings::read(j, m);
  Checks::read(j, m);
  check_index("sweep_nearest_ridge", m.sweep_nearest_ridge, m.sweep_points.size(), "sweep_points");
}

}  // namespace dlsys::roofline
