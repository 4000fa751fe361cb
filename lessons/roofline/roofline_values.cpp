#include "lessons/roofline/roofline_values.h"

#include "engine/json_read.h"

namespace dlsys::roofline {

const RoofPoint* RooflineMeasured::kernel(const std::string& id) const {
  for (const RoofPoint& p : kernels)
    if (p.id == id) return &p;
  return nullptr;
}

void to_json(nlohmann::ordered_json& j, const RooflineTheory& t) {
  if (t.ridge_flop_per_byte) j["ridge_flop_per_byte"] = *t.ridge_flop_per_byte;
  if (t.datasheet_peak_gflops) {
    j["datasheet_peak_gflops"] = *t.datasheet_peak_gflops;
    j["datasheet_source"] = t.datasheet_source;
  }
  if (t.datasheet_bandwidth_gbps) j["datasheet_bandwidth_gbps"] = *t.datasheet_bandwidth_gbps;
  j["a100_bandwidth_bytes_per_s"] = t.a100_bandwidth_bytes_per_s;
  j["a100_fp32_gflops"] = t.a100_fp32_gflops;
  j["a100_floats_per_s"] = t.a100_floats_per_s;
  j["a100_y2x_bytes_per_element"] = t.a100_y2x_bytes_per_element;
  j["a100_y2x_elements_per_s"] = t.a100_y2x_elements_per_s;
  j["a100_y2x_gflops"] = t.a100_y2x_gflops;
  j["a100_y2x_percent_of_compute"] = t.a100_y2x_percent_of_compute;
  j["a100_fp32_ridge_flop_per_byte"] = t.a100_fp32_ridge_flop_per_byte;
  j["example_peak_gflops"] = t.example_peak_gflops;
  j["example_bandwidth_gbps"] = t.example_bandwidth_gbps;
  j["example_ridge_flop_per_byte"] = t.example_ridge_flop_per_byte;
  j["example_intensity_flop_per_byte"] = t.example_intensity_flop_per_byte;
  j["example_attainable_gflops"] = t.example_attainable_gflops;
  j["sweep_intensity"] = t.sweep_intensity;
}

// Per-kernel values are flat keys prefixed by the kernel's id ("matmul_tiled_gflops"), like the matmul lesson's.
void to_json(nlohmann::ordered_json& j, const RooflineMeasured& m) {
  j = nlohmann::ordered_json::object();
  j["stream_copy_gbps"] = m.stream_copy_gbps;
  j["stream_scale_gbps"] = m.stream_scale_gbps;
  j["stream_add_gbps"] = m.stream_add_gbps;
  j["stream_triad_gbps"] = m.stream_triad_gbps;
  j["bandwidth_gbps"] = m.bandwidth_gbps;
  j["bandwidth_kernel"] = m.bandwidth_kernel;
  j["peak_gflops"] = m.peak_gflops;
  j["sgemm_peak_gflops"] = m.sgemm_peak_gflops;
  j["y2x_gflops"] = m.y2x_gflops;
  j["floats_per_s"] = m.floats_per_s;
  j["y2x_elements_per_s"] = m.y2x_elements_per_s;
  j["y2x_predicted_gflops"] = m.y2x_predicted_gflops;
  j["y2x_percent_of_peak"] = m.y2x_percent_of_peak;
  j["sweep_bandwidth_gbps"] = m.sweep_bandwidth_gbps;
  j["sweep_plateau_gflops"] = m.sweep_plateau_gflops;
  j["sweep_ridge_flop_per_byte"] = m.sweep_ridge_flop_per_byte;
  j["ridge_ratio"] = m.ridge_ratio;
  j["sweep_crosses_ridge"] = m.sweep_crosses_ridge ? 1 : 0;
  for (const RoofPoint& p : m.kernels) {
    j[p.id + "_intensity"] = p.intensity;
    j[p.id + "_gflops"] = p.gflops;
    j[p.id + "_percent_of_roof"] = p.percent_of_roof;
  }
  j["worst_percent_above_roof"] = m.worst_percent_above_roof;
  j["worst_point"] = m.worst_point;
  j["overhead_call_floor_us"] = m.overhead_call_floor_us;
  j["overhead_pool_floor_us"] = m.overhead_pool_floor_us;
  j["overhead_call_what"] = m.overhead_call_what;
  j["overhead_pool_what"] = m.overhead_pool_what;
  if (m.launch_and_wait_us) j["launch_and_wait_us"] = *m.launch_and_wait_us;
  j["max_rel_err"] = m.max_rel_err;
  j["wrong"] = m.wrong;
  j["roof_bar_met"] = m.roof_bar_met ? 1 : 0;
  j["ridge_bar_met"] = m.ridge_bar_met ? 1 : 0;
  // Every point in full after the documented keys, so a recorded run draws the same roof, sweep and kernels.
  j["stream_kernels"] = m.stream;
  j["sweep_points"] = m.sweep;
  j["sweep_nearest_ridge"] = m.sweep_nearest_ridge;
  j["roof_points"] = m.kernels;
}

void from_json(const nlohmann::ordered_json& j, RooflineTheory& t) {
  read_key_if_present(j, "ridge_flop_per_byte", t.ridge_flop_per_byte);
  read_key_if_present(j, "datasheet_peak_gflops", t.datasheet_peak_gflops);
  t.datasheet_source.clear();
  if (t.datasheet_peak_gflops) read_key(j, "datasheet_source", t.datasheet_source);
  read_key_if_present(j, "datasheet_bandwidth_gbps", t.datasheet_bandwidth_gbps);
  read_key(j, "datasheet_source", t.datasheet_source);
  read_key(j, "a100_bandwidth_bytes_per_s", t.a100_bandwidth_bytes_per_s);
  read_key(j, "a100_fp32_gflops", t.a100_fp32_gflops);
  read_key(j, "a100_floats_per_s", t.a100_floats_per_s);
  read_key(j, "a100_y2x_bytes_per_element", t.a100_y2x_bytes_per_element);
  read_key(j, "a100_y2x_elements_per_s", t.a100_y2x_elements_per_s);
  read_key(j, "a100_y2x_gflops", t.a100_y2x_gflops);
  read_key(j, "a100_y2x_percent_of_compute", t.a100_y2x_percent_of_compute);
  read_key(j, "a100_fp32_ridge_flop_per_byte", t.a100_fp32_ridge_flop_per_byte);
  read_key(j, "example_peak_gflops", t.example_peak_gflops);
  read_key(j, "example_bandwidth_gbps", t.example_bandwidth_gbps);
  read_key(j, "example_ridge_flop_per_byte", t.example_ridge_flop_per_byte);
  read_key(j, "example_intensity_flop_per_byte", t.example_intensity_flop_per_byte);
  read_key(j, "example_attainable_gflops", t.example_attainable_gflops);
  read_key(j, "sweep_intensity", t.sweep_intensity);
}

void from_json(const nlohmann::ordered_json& j, RooflineMeasured& m) {
  read_key(j, "stream_copy_gbps", m.stream_copy_gbps);
  read_key(j, "stream_scale_gbps", m.stream_scale_gbps);
  read_key(j, "stream_add_gbps", m.stream_add_gbps);
  read_key(j, "stream_triad_gbps", m.stream_triad_gbps);
  read_key(j, "bandwidth_gbps", m.bandwidth_gbps);
  read_key(j, "bandwidth_kernel", m.bandwidth_kernel);
  read_key(j, "peak_gflops", m.peak_gflops);
  read_key(j, "sgemm_peak_gflops", m.sgemm_peak_gflops);
  read_key(j, "y2x_gflops", m.y2x_gflops);
  read_key(j, "floats_per_s", m.floats_per_s);
  read_key(j, "y2x_elements_per_s", m.y2x_elements_per_s);
  read_key(j, "y2x_predicted_gflops", m.y2x_predicted_gflops);
  read_key(j, "y2x_percent_of_peak", m.y2x_percent_of_peak);
  read_key(j, "sweep_bandwidth_gbps", m.sweep_bandwidth_gbps);
  read_key(j, "sweep_plateau_gflops", m.sweep_plateau_gflops);
  read_key(j, "sweep_ridge_flop_per_byte", m.sweep_ridge_flop_per_byte);
  read_key(j, "ridge_ratio", m.ridge_ratio);
  read_flag_key(j, "sweep_crosses_ridge", m.sweep_crosses_ridge);
  read_key(j, "worst_percent_above_roof", m.worst_percent_above_roof);
  read_key(j, "worst_point", m.worst_point);
  read_key(j, "overhead_call_floor_us", m.overhead_call_floor_us);
  read_key(j, "overhead_pool_floor_us", m.overhead_pool_floor_us);
  read_key(j, "overhead_call_what", m.overhead_call_what);
  read_key(j, "overhead_pool_what", m.overhead_pool_what);
  read_key_if_present(j, "launch_and_wait_us", m.launch_and_wait_us);
  read_key(j, "max_rel_err", m.max_rel_err);
  read_key(j, "wrong", m.wrong);
  read_flag_key(j, "roof_bar_met", m.roof_bar_met);
  read_flag_key(j, "ridge_bar_met", m.ridge_bar_met);
  read_key(j, "stream_kernels", m.stream);
  read_key(j, "sweep_points", m.sweep);
  read_key(j, "sweep_nearest_ridge", m.sweep_nearest_ridge);
  check_index("sweep_nearest_ridge", m.sweep_nearest_ridge, m.sweep.size(), "sweep_points");
  read_key(j, "roof_points", m.kernels);
}

}  // namespace dlsys::roofline
