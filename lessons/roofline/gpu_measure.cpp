// The roofline run's GPU stages: the peak kernel, the lab's CUDA kernels placed on the roof (matmul three ways,
// standard and flash attention, a decode GEMV, a prefill GEMM on cuBLAS), and what a launch costs with and without a
// CUDA Graph. Each output is copied back and checked against the same double references the CPU stages use.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "engine/errors.h"
#include "engine/host_buffer.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_cuda.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_devices.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_cuda.h"
#include "kernels/roofline/roofline_math.h"
#include "lessons/matmul/matmul_lesson.h"
#include "lessons/roofline/attention_case.h"
#include "lessons/roofline/roofline_measure.h"
#include "lessons/roofline/roofline_measure_common.h"

namespace dlsys::roofline {

namespace {

// About 2 ms per call on an H100 (some 270 thousand threads x 8 chains x 2 FLOP per step).
constexpr std::int64_t kPeakIterations = 20'000;
constexpr int kLaunchCalls = 1000;  // kernels per batch when timing launches

MeasureOptions options_of(const RooflineRun& run) {
  return MeasureOptions{.warmup = 1, .repeats = run.repeats, .max_total_us = 1e6};
}

void measure_attention(RooflineRun& run, RooflineMeasured& m) {
  AttentionCase a(run);
  const std::int64_t n = a.n, d = a.d;
  using attention::cuda::Variant;
  for (const Variant variant : {Variant::Naive, Variant::Flash}) {
    const bool naive = variant == Variant::Naive;
    run.progress(fmt::format("{} attention, n = {} (CUDA)", naive ? "standard" : "flash", n));
    run.ctx.control.check_cancelled();
    const attention::cuda::RunStats stats = attention::cuda::run(variant, a.problem, a.tiling, a.q.data(), a.k.data(),
                                                                 a.v.data(), a.o.data(), options_of(run));
    const double bytes =
        naive ? attention::naive_traffic(n, d).total_elements() * 4.0
              : attention::flash_traffic(n, d, a.tiling, false, attention::LoopOrder::QOuter).total_elements() * 4.0;
    m.roof_points.push_back(a.point(!naive, bytes, stats.timing));
  }
}

// Decode: one token's activations against bf16 weights as large as the STREAM arrays, on the GPU.
void measure_decode(RooflineRun& run, std::int64_t d, RooflineMeasured& m) {
  const std::int64_t rows = decode_rows(run, d);
  std::vector<std::uint16_t> w(static_cast<std::size_t>(rows * d));
  std::vector<float> x(static_cast<std::size_t>(d)), y(static_cast<std::size_t>(rows));
  run.progress(fmt::format("filling {} x {} bf16 weights", rows, d));
  fill_decode_weights(w.data(), rows, d);
  fill_seeded_uniform(x, kDecodeInputSeed);
  dlsys::cuda::DeviceBuffer<std::uint16_t> dw(rows * d);
  dlsys::cuda::DeviceFloats dx(d), dy(rows);
  dw.upload(w.data());
  dx.upload(x.data());
  run.progress(fmt::format("decode GEMV, {} x {} bf16 weights (CUDA)", rows, d));
  const TimingStats t = run.time([&] { cuda::gemv_bf16(dy.get(), dw.get(), dx.get(), rows, d); });
  dlsys::cuda::copy_to_host(y.data(), dy.get(), rows);
  m.roof_points.push_back(decode_point(rows, d, t, sampled_gemv_bf16_error(w.data(), x.data(), y.data(), rows, d)));
}

// Prefill: `tokens` rows of activations against one d x d fp32 weight matrix, on cuBLAS.
void measure_prefill(RooflineRun& run, std::int64_t d, RooflineMeasured& m) {
  const auto tokens = static_cast<std::int64_t>(run.ctx.params.integer("prompt_tokens"));
  const matmul::Shape s{tokens, d, d};
  MemoryLedger& ledger = run.ctx.ledger;
  HostBuffer<float> a(ledger, "prefill", std::size_t(tokens * d)), b(ledger, "prefill", std::size_t(d * d)),
      c(ledger, "prefill", std::size_t(tokens * d));
  fill_seeded_uniform(a.span(), 23);
  fill_seeded_uniform(b.span(), 21);
  run.progress(fmt::format("prefill GEMM, {} tokens x {} x {} (cuBLAS)", tokens, d, d));
  const auto gpu = matmul::make_matmul_device(BackendKind::Cuda, run.threads, kMatmulTheoryTile,
                                              [&control = run.ctx.control] { control.check_cancelled(); });
  const matmul::DeviceKernel cublas = gpu->kernels([](std::string_view key) { return key == "blas"; }).front();
  const TimingStats t = gpu->operands(s, a.data(), b.data(), c.data())->time(cublas, options_of(run), true);
  m.roof_points.push_back(prefill_point(s, t, a.data(), b.data(), c.data()));
}

}  // namespace

void use_gpu_peak_kernel(RooflineRun& run) {
  auto sink = std::make_shared<dlsys::cuda::DeviceFloats>(cuda::fma_peak_threads());
  run.peak_call = [sink] { cuda::fma_peak(sink->get(), kPeakIterations); };
  run.peak_flop_per_call = cuda::fma_peak_flop(kPeakIterations);
}

void measure_placed_kernels_gpu(RooflineRun& run, RooflineMeasured& m) {
  measure_matmuls(run, m);
  measure_attention(run, m);
  const auto d = static_cast<std::int64_t>(run.ctx.params.integer("model_dim"));
  measure_decode(run, d, m);
  measure_prefill(run, d, m);
}

void measure_overhead_gpu(RooflineRun& run, RunResult& result, RooflineMeasured& m) {
  const auto& sizes = run.ctx.params.list("tiny_sizes");
  const auto largest = static_cast<std::int64_t>(*std::max_element(sizes.begin(), sizes.end()));
  std::vector<float> host(static_cast<std::size_t>(largest));
  fill_seeded_uniform(host, 3);
  dlsys::cuda::DeviceFloats x(largest), y(largest);
  x.upload(host.data());
  Series launched{
      "overhead_call", "y = 2x kernels launched back to back", "measured", "elements", "", "time per call", "us", {}};
  Series graph{"overhead_pool",
               "the same kernels replayed from a CUDA Graph",
               "measured",
               "elements",
               "",
               "time per call",
               "us",
               {}};
  for (double size : sizes) {
    const auto n = static_cast<std::int64_t>(size);
    run.progress(fmt::format("overhead: y = 2x on {} elements (CUDA)", n));
    run.ctx.control.check_cancelled();
    std::vector<double> launched_us, graph_us;
    for (int i = 0; i < std::max(run.repeats, 3); ++i) {
      const cuda::CallCosts costs = cuda::scale_call_costs(y.get(), x.get(), n, kLaunchCalls);
      launched_us.push_back(costs.launched_us);
      graph_us.push_back(costs.graph_us);
    }
    for (auto [series, samples] : {std::pair{&launched, &launched_us}, std::pair{&graph, &graph_us}}) {
      const TimingStats t = summarize_us(*samples, "cuda_event");
      series->points.push_back({size, t.median_us, t.min_us, t.max_us});
    }
  }
  // The last size's output, exactly: y = 2x is one exact multiplication per element.
  const auto last = static_cast<std::int64_t>(sizes.back());
  std::vector<float> out(static_cast<std::size_t>(last));
  dlsys::cuda::copy_to_host(out.data(), y.get(), last);
  for (std::int64_t i = 0; i < last; ++i)
    if (out[std::size_t(i)] != kScaleFactor * host[std::size_t(i)])
      throw RunFailure(fmt::format("the y = 2x kernel wrote {} at element {} of {}; expected {}", out[std::size_t(i)],
                                   i, last, kScaleFactor * host[std::size_t(i)]));
  m.overhead_call_floor_us = INFINITY;
  m.overhead_pool_floor_us = INFINITY;
  for (const SeriesPoint& p : launched.points) m.overhead_call_floor_us = std::min(m.overhead_call_floor_us, p.y_min);
  for (const SeriesPoint& p : graph.points) m.overhead_pool_floor_us = std::min(m.overhead_pool_floor_us, p.y_min);
  m.overhead_call_what = "a kernel launched behind others (GPU time per kernel)";
  m.overhead_pool_what = "a kernel replayed from a CUDA Graph";
  run.progress("an empty kernel, launched and waited for");
  m.launch_and_wait_us = cuda::empty_launch_and_wait_us(kLaunchCalls);
  result.series.push_back(std::move(launched));
  result.series.push_back(std::move(graph));
}

}  // namespace dlsys::roofline
