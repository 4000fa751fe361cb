#pragma once
// What the roofline steps draw before a run: the three costs, the course's A100 arithmetic line by line, the roofs
// of the course's two GPUs (the hypothetical 300 TFLOP/s and 1 TB/s one, and an A100 in fp32), and the intensities
// the sweep will visit.
#include <memory>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/step_data.h"
#include "lessons/roofline/roofline_params.h"
#include "lessons/roofline/roofline_values.h"

namespace dlsys::roofline {

struct CostCard {
  std::string name;     // "Compute"
  std::string what;     // what the time goes to
  std::string example;  // a kernel this cost dominates
  std::string remedy;   // what the course says to do about it
};

struct ArithmeticRow {
  std::string quantity;  // "numbers read per second"
  std::string formula;   // "1.5e12 B/s / 4 B"
  double value = 0;
  std::string unit;
};

// A roof drawn from two ceilings: min(peak, bandwidth x intensity) over a range of intensities, corner included.
struct RoofCurve {
  std::string name;
  double peak_gflops = 0, bandwidth_gbps = 0, ridge_flop_per_byte = 0;
  std::vector<SeriesPoint> points;
};

struct RooflineSteps final : StepData {
  std::vector<CostCard> costs;
  std::vector<ArithmeticRow> a100_arithmetic;
  RoofCurve example_roof, a100_roof;
  SeriesPoint example_kernel;  // 50 FLOP/B on the hypothetical GPU: 50 TFLOP/s
  SeriesPoint a100_y2x;        // y = 2x on the A100: 1/8 FLOP/B, 187.5 GFLOP/s
  RooflineTheory theory;
  std::vector<double> sweep_k, sweep_intensity;
};

std::shared_ptr<const RooflineSteps> make_steps(const RooflineParams& params, const RooflineTheory& theory);

// min(peak, bandwidth x I) at intensities from lo to hi (log-spaced, 8 per decade) and at the ridge itself.
RoofCurve roof_curve(std::string name, double peak_gflops, double bandwidth_gbps, double lo, double hi);

}  // namespace dlsys::roofline
