#pragma once
// The roofline lesson's typed values: the course's worked numbers and this machine's roof (theory), and what one run
// measured (measured). `dlsys-lab run --json` writes them under "theory" and "measured" with the field names as keys.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::roofline {

struct RooflineTheory {
  // The course's A100 example (002 section 9.2.1): 1.5e12 B/s of memory bandwidth, 19.5 TFLOP/s of fp32 compute.
  double a100_bandwidth_bytes_per_s = 0;
  double a100_fp32_gflops = 0;
  double a100_floats_per_s = 0;              // bandwidth / 4 B
  double a100_y2x_bytes_per_element = 0;     // read 4 B, write 4 B
  double a100_y2x_elements_per_s = 0;        // bandwidth / 8 B
  double a100_y2x_gflops = 0;                // 1 FLOP per element
  double a100_y2x_percent_of_compute = 0;    // of 19.5 TFLOP/s
  double a100_fp32_ridge_flop_per_byte = 0;  // 19.5e12 / 1.5e12 = 13
  // The course's hypothetical GPU: 300 TFLOP/s and 1 TB/s; a kernel at 50 FLOP/B.
  double example_peak_gflops = 0, example_bandwidth_gbps = 0;
  double example_ridge_flop_per_byte = 0;      // 300
  double example_intensity_flop_per_byte = 0;  // 50
  double example_attainable_gflops = 0;        // min(300e3, 1e3 x 50) = 50e3
  std::vector<double> sweep_intensity;         // k / 4 for each k of the sweep
  // This machine, known once a run has measured its ceilings: peak / bandwidth, and the datasheet-style figure
  // (threads x fp32 lanes x FMA units x 2 FLOP x clock) the measured peak is judged by.
  std::optional<double> ridge_flop_per_byte;
  std::optional<double> datasheet_peak_gflops;
  std::optional<double> datasheet_bandwidth_gbps;  // on a GPU; a CPU's datasheet-style roof uses the measured slope
  std::string datasheet_source;
};

struct StreamMeasure {
  std::string kernel;  // copy | scale | add | triad
  double gbps = 0;     // from the fastest call (the one least slowed by other programs)
  double gbps_median = 0;
  double time_us = 0, time_min_us = 0, time_max_us = 0;
};

// One point of the intensity sweep, or one kernel placed on the roof.
struct RoofPoint {
  std::string id;     // "k=16", "matmul_naive", ...
  std::string label;  // a few words for a legend: "matmul tiled"
  std::string name;   // with its sizes, for a table: "matmul tiled, n = 512"
  double flop = 0, bytes = 0;
  double intensity = 0;       // flop / bytes (counted traffic)
  double gflops = 0;          // median call
  double gflops_best = 0;     // fastest call
  double gflops_slowest = 0;  // slowest call
  double roof_gflops = 0;     // min(peak, bandwidth x intensity) of this run's roof
  double percent_of_roof = 0;
  double max_rel_err = 0;      // output against its double reference, relative to the size of the values
  double error_tolerance = 0;  // what fp32 rounding explains for this kernel
  std::string traffic;         // how the bytes were counted
};

DLSYS_VALUES_JSON(StreamMeasure, kernel, gbps, gbps_median, time_us, time_min_us, time_max_us)
DLSYS_VALUES_JSON(RoofPoint, id, label, name, flop, bytes, intensity, gflops, gflops_best, gflops_slowest, roof_gflops,
                  percent_of_roof, max_rel_err, error_tolerance, traffic)

struct RooflineMeasured {
  std::vector<StreamMeasure> stream_kernels;
  double stream_copy_gbps = 0, stream_scale_gbps = 0, stream_add_gbps = 0, stream_triad_gbps = 0;
  double bandwidth_gbps = 0;  // the roof's slope: the fastest STREAM kernel
  std::string bandwidth_kernel;
  double peak_gflops = 0;        // the roof's flat: independent FMA chains, fastest call of the run
  double sgemm_peak_gflops = 0;  // the engine's OpenBLAS probe (best seen on this machine), for reference
  double y2x_gflops = 0;         // STREAM scale with s = 2 is y = 2x
  // The course's y = 2x arithmetic with this machine's bandwidth: bandwidth / 4 B, bandwidth / 8 B (= GFLOP/s at
  // 1 FLOP per element), and that rate as a share of the measured peak.
  double floats_per_s = 0, y2x_elements_per_s = 0, y2x_predicted_gflops = 0, y2x_percent_of_peak = 0;
  std::vector<RoofPoint> sweep_points;
  double sweep_bandwidth_gbps = 0;       // the lowest-intensity point's GFLOP/s / intensity
  double sweep_plateau_gflops = 0;       // the sweep's highest GFLOP/s
  double sweep_ridge_flop_per_byte = 0;  // plateau / bandwidth: where the measured points bend
  double ridge_ratio = 0;                // sweep ridge / (peak / bandwidth)
  int sweep_nearest_ridge = 0;           // index of the sweep point whose intensity is nearest the ridge (log scale)
  FlagField sweep_crosses_ridge;         // points on both sides of the ridge: the sweep can show where it bends
  std::vector<RoofPoint> roof_points;    // the kernels placed on the roof
  double worst_percent_above_roof = 0;   // the point furthest above the roof, in % of the roof (< 0: all below)
  std::string worst_point;
  double overhead_call_floor_us = 0;  // the fewest microseconds one call of y = 2x took, on one thread
  double overhead_pool_floor_us = 0;  // the same handed to the worker pool
  // What those two floors are on this backend: on a GPU, a kernel launched behind others and one replayed from a
  // CUDA Graph; and there, an empty kernel launched and waited for, one after the other (host clock).
  std::string overhead_call_what = "one call on this thread, at its fastest";
  std::string overhead_pool_what = "one call handed to the worker pool and waited for";
  std::optional<double> launch_and_wait_us;
  double max_rel_err = 0;   // the largest of the points' errors
  int wrong = 0;            // 1 when some kernel's output is off its reference by more than fp32 rounding explains
  FlagField roof_bar_met;   // no point above the roof by more than kRoofTolerance
  FlagField ridge_bar_met;  // sweep ridge within a factor kRidgeFactor of peak / bandwidth

  const RoofPoint* kernel(const std::string& id) const;
};

void to_json(nlohmann::ordered_json& json, const RooflineTheory& theory);
void from_json(const nlohmann::ordered_json& json, RooflineTheory& theory);
void to_json(nlohmann::ordered_json& json, const RooflineMeasured& measured);
void from_json(const nlohmann::ordered_json& json, RooflineMeasured& measured);

}  // namespace dlsys::roofline
