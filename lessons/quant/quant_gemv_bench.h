#pragma once
// Step 4's measurement: y = W x at batch 1 on one n x n matrix in fp32, fp16, int8 (per output channel), int4
// (blocks of 64) and the chosen scheme; before each timed call the weights are flushed from every cache, as a
// layer's weights are when a decoding step reaches it. Every format is checked against the double reference of its
// own (dequantized) weights.
#include <vector>

#include "engine/ledger.h"
#include "engine/run_result.h"
#include "kernels/quant/quantize.h"
#include "lessons/common/run_plan.h"
#include "lessons/quant/quant_values.h"

namespace dlsys::quant {

struct GemvBenchConfig {
  std::int64_t n = 4096;
  QuantSpec chosen;
};

struct GemvBench {
  std::vector<GemvTiming> timings;  // fp32, fp16, int8, int4, then the chosen scheme when it is neither int8 nor int4
  std::vector<Series> series;
  // The device's bandwidth, the plotted line's: the better of a probe before the GEMVs and one after, so a burst of
  // other work during either cannot lower the line under the points.
  double bandwidth_gbps = 0;
};

// The two quantized formats always timed, as the lesson names them.
QuantSpec int8_gemv_spec();
QuantSpec int4_gemv_spec();
bool same_spec(const QuantSpec& a, const QuantSpec& b);

// One part of `plan` per format, gemv_bench_weight(config.chosen) in all. `Device`: CpuGemv or CudaGemv
// (kernels/quant/gemv_devices.h), which times each format and measures its bandwidth.
template <typename Device>
GemvBench run_gemv_bench(const GemvBenchConfig& config, const Device& device, MemoryLedger& ledger, RunPlan& plan);
double gemv_bench_weight(const QuantSpec& chosen);

// Bytes all formats' buffers take together, for the memory check before a run.
double gemv_bench_bytes(std::int64_t n, const QuantSpec& chosen);

}  // namespace dlsys::quant
