#include "lessons/roofline/roofline_steps.h"

#include <algorithm>
#include <cmath>

#include "kernels/roofline/roofline_math.h"

namespace dlsys::roofline {

RoofCurve roof_curve(std::string name, double peak_gflops, double bandwidth_gbps, double lo, double hi) {
  RoofCurve c{std::move(name), peak_gflops, bandwidth_gbps, ridge_flop_per_byte(peak_gflops, bandwidth_gbps), {}};
  std::vector<double> xs;
  const int steps = static_cast<int>(std::ceil(8 * std::log10(hi / lo)));
  for (int i = 0; i <= steps; ++i) xs.push_back(lo * std::pow(hi / lo, double(i) / steps));
  if (c.ridge_flop_per_byte > lo && c.ridge_flop_per_byte < hi) xs.push_back(c.ridge_flop_per_byte);
  std::sort(xs.begin(), xs.end());
  for (double x : xs) {
    const double y = attainable_gflops(peak_gflops, bandwidth_gbps, x);
    c.points.push_back({x, y, y, y});
  }
  return c;
}

std::shared_ptr<const RooflineSteps> make_steps(const RooflineParams& params, const RooflineTheory& theory) {
  auto s = std::make_shared<RooflineSteps>();
  s->theory = theory;
  const RooflineTheory& t = s->theory;
  s->costs = {
      {"Compute", "time spent doing floating-point operations in the arithmetic units",
       "large matrix multiplications (prefill, training)", "lower precision (tensor cores), better kernels"},
      {"Bandwidth", "time spent moving bytes between main memory (HBM, DRAM) and the chip",
       "pointwise operations, softmax, decoding one token at a time",
       "fuse operations, reuse data in fast memory, "
       "batch"},
      {"Overhead", "everything else: the Python interpreter, the framework's dispatch, launching each kernel",
       "many tiny operations on small tensors", "bigger tensors per call, fewer calls (CUDA Graphs, compilers)"},
  };
  s->a100_arithmetic = {
      {"memory bandwidth", "given", t.a100_bandwidth_bytes_per_s, "B/s"},
      {"fp32 numbers read per second", "1.5e12 B/s / 4 B", t.a100_floats_per_s, "numbers/s"},
      {"bytes per element of y = 2x", "read 4 B + write 4 B", t.a100_y2x_bytes_per_element, "B"},
      {"elements of y = 2x per second", "1.5e12 B/s / 8 B", t.a100_y2x_elements_per_s, "elements/s"},
      {"y = 2x at 1 FLOP per element", "187.5e9 x 1 FLOP", t.a100_y2x_gflops * 1e9, "FLOP/s"},
      {"fp32 compute (no tensor cores)", "given", t.a100_fp32_gflops * 1e9, "FLOP/s"},
      {"share of compute y = 2x can use", "187.5e9 / 19.5e12", t.a100_y2x_percent_of_compute, "%"},
      {"fp32 ridge point", "19.5e12 / 1.5e12", t.a100_fp32_ridge_flop_per_byte, "FLOP/B"},
  };
  s->example_roof =
      roof_curve("hypothetical GPU: 300 TFLOP/s, 1 TB/s", t.example_peak_gflops, t.example_bandwidth_gbps, 0.1, 3000);
  s->a100_roof = roof_curve("A100 fp32: 19.5 TFLOP/s, 1.5 TB/s", t.a100_fp32_gflops, t.a100_bandwidth_bytes_per_s / 1e9,
                            0.1, 3000);
  s->example_kernel = {t.example_intensity_flop_per_byte, t.example_attainable_gflops, t.example_attainable_gflops,
                       t.example_attainable_gflops};
  const double y2x_intensity = 1.0 / t.a100_y2x_bytes_per_element;
  s->a100_y2x = {y2x_intensity, t.a100_y2x_gflops, t.a100_y2x_gflops, t.a100_y2x_gflops};
  for (std::int64_t k : params.k) s->sweep_k.push_back(double(k));
  s->sweep_intensity = t.sweep_intensity;
  return s;
}

}  // namespace dlsys::roofline
