// The lab's own kernels placed on the roof, each at the intensity its counted main-memory traffic gives and the
// GFLOP/s it measured, each checked against a double-precision reference (sampled where a full one would take longer
// than the kernel's whole lesson).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/backend.h"
#include "engine/host_buffer.h"
#include "engine/units.h"
#include "kernels/attention/attention.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_devices.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_math.h"
#include "lessons/matmul/matmul_lesson.h"
#include "lessons/roofline/attention_case.h"
#include "lessons/roofline/roofline_measure.h"
#include "lessons/roofline/roofline_measure_common.h"

namespace dlsys::roofline {

void measure_matmuls(RooflineRun& run, RooflineMeasured& m) {
  const auto n = static_cast<std::int64_t>(run.ctx.params.integer("gemm_n"));
  const matmul::Shape s{n, n, n};
  MemoryLedger& ledger = run.ctx.ledger;
  HostBuffer<float> a(ledger, "matmul", std::size_t(n * n)), b(ledger, "matmul", std::size_t(n * n)),
      c(ledger, "matmul", std::size_t(n * n));
  HostBuffer<double> ref(ledger, "matmul", std::size_t(n * n));
  fill_seeded_uniform(a.span(), 11);
  fill_seeded_uniform(b.span(), 12);
  run.progress(fmt::format("matmul double reference, n = {}", n));
  matmul::reference(s, a.data(), b.data(), ref.data());
  const BackendKind backend = run.backend;
  const auto device = matmul::make_matmul_device(backend, run.threads, kMatmulTheoryTile,
                                                 [&control = run.ctx.control] { control.check_cancelled(); });
  const int tile = device->tiled_kernel_tile();
  const auto operands = device->operands(s, a.data(), b.data(), c.data());
  for (const matmul::DeviceKernel& k :
       device->kernels([](std::string_view key) { return key == "naive" || key == "tiled" || key == "blas"; })) {
    const std::string& key = k.key;
    probe_fma_peak(run);  // the tiled kernel and the BLAS run near the compute ceiling
    run.progress(fmt::format("matmul {} at n = {} ({})", key, n, k.kernel));
    const TimingStats t =
        operands->time(k, MeasureOptions{.warmup = 1, .repeats = run.repeats, .max_total_us = 1e6}, true);
    // On a GPU whose L2 cache holds A, B and C at once, the repeated reads the naive and tiled counts assume never
    // reach HBM (the memory the roof's bandwidth is measured on): every variant moves the minimum there.
    const bool in_l2 =
        backend == BackendKind::Cuda && matmul::bytes_minimum(s) <= double(cuda_status().device.l2_cache_bytes);
    const double bytes = in_l2            ? matmul::bytes_minimum(s)
                         : key == "naive" ? matmul::bytes_naive(s)
                         : key == "tiled" ? matmul::bytes_tiled(s, tile)
                                          : matmul::bytes_minimum(s);
    const std::string traffic =
        in_l2 ? fmt::format(
                    "A, B and C ({}) fit in the GPU's L2 cache ({}), so HBM sees each once: 12 n^2 B; what "
                    "separates the three is how fast the chip's caches feed them, a roof not drawn here",
                    format_bytes_binary(matmul::bytes_minimum(s)),
                    format_bytes_binary(double(cuda_status().device.l2_cache_bytes)))
        : key == "naive" ? std::string("every product reads its two operands: 4 (2 n^3 + n^2) B")
        : key == "tiled" ? fmt::format("{0} x {0} tiles: A and B read n / {0} times each", tile)
                         : std::string("A and B read once, C written once: 12 n^2 B");
    RoofPoint p = roof_point("matmul_" + key, "matmul " + key, fmt::format("matmul {}, n = {}", key, n),
                             matmul::flops(s), bytes, t, traffic);
    p.max_rel_err = matmul::max_relative_error(s, a.data(), b.data(), c.data(), ref.data());
    p.error_tolerance = matmul::error_tolerance(s);
    m.roof_points.push_back(std::move(p));
  }
}

namespace {

void measure_attention(RooflineRun& run, RooflineMeasured& m) {
  AttentionCase a(run);
  const std::int64_t n = a.n, d = a.d;
  const std::int64_t workers = attention::flash_workers(n, a.tiling, run.threads);
  MemoryLedger& ledger = run.ctx.ledger;
  {
    run.progress(fmt::format("standard attention, n = {}", n));
    HostBuffer<float> scores(ledger, "attention", std::size_t(attention::naive_scratch_elements(n)));
    const TimingStats t = run.time([&] {
      attention::v1_naive(a.problem, a.q.data(), a.k.data(), a.v.data(), a.o.data(), scores.span(), run.threads);
    });
    m.roof_points.push_back(a.point(false, attention::naive_traffic(n, d).total_elements() * 4.0, t));
  }
  run.progress(fmt::format("flash attention, n = {}", n));
  HostBuffer<float> scratch(
      ledger, "attention",
      std::size_t(attention::flash_scratch_elements(n, d, a.tiling, attention::LoopOrder::QOuter, workers)));
  const TimingStats t = run.time([&] {
    attention::v2_flash<float>(a.problem, a.tiling, attention::LoopOrder::QOuter, a.q.data(), a.k.data(), a.v.data(),
                               a.o.data(), scratch.span(), run.threads);
  });
  const double bytes =
      attention::flash_traffic(n, d, a.tiling, false, attention::LoopOrder::QOuter, workers).total_elements() * 4.0;
  m.roof_points.push_back(a.point(true, bytes, t));
}

// Decode: one token's activations (d) against bf16 weights as large as the STREAM arrays, `rows` x d: a decode step
// reads every layer's weights once, and weights this large come from main memory, not from a cache.
void measure_decode(RooflineRun& run, std::int64_t d, RooflineMeasured& m) {
  const std::int64_t rows = decode_rows(run, d);
  MemoryLedger& ledger = run.ctx.ledger;
  HostBuffer<std::uint16_t> w(ledger, "decode", std::size_t(rows * d));
  HostBuffer<float> x(ledger, "decode", std::size_t(d)), y(ledger, "decode", std::size_t(rows));
  run.progress(fmt::format("filling {} x {} bf16 weights", rows, d));
  fill_decode_weights(w.data(), rows, d);
  fill_seeded_uniform(x.span(), kDecodeInputSeed);
  run.progress(fmt::format("decode GEMV, {} x {} bf16 weights", rows, d));
  const TimingStats t = run.time([&] { gemv_bf16(y.data(), w.data(), x.data(), rows, d, run.threads); });
  m.roof_points.push_back(decode_point(rows, d, t, sampled_gemv_bf16_error(w.data(), x.data(), y.data(), rows, d)));
}

// Prefill: `tokens` rows of activations against one d x d fp32 weight matrix, through OpenBLAS (it has no 16-bit
// GEMM here); compute-bound once tokens is in the tens.
void measure_prefill(RooflineRun& run, std::int64_t d, RooflineMeasured& m) {
  const auto tokens = static_cast<std::int64_t>(run.ctx.params.integer("prompt_tokens"));
  MemoryLedger& ledger = run.ctx.ledger;
  const matmul::Shape s{tokens, d, d};
  HostBuffer<float> a(ledger, "prefill", std::size_t(tokens * d)), b(ledger, "prefill", std::size_t(d * d)),
      c(ledger, "prefill", std::size_t(tokens * d));
  fill_seeded_uniform(a.span(), 23);
  fill_seeded_uniform(b.span(), 21);
  probe_fma_peak(run);
  run.progress(fmt::format("prefill GEMM, {} tokens x {} x {}", tokens, d, d));
  const TimingStats t = run.time([&] { matmul::v3_blas(s, a.data(), b.data(), c.data(), run.threads); });
  m.roof_points.push_back(prefill_point(s, t, a.data(), b.data(), c.data()));
}

}  // namespace

std::int64_t decode_rows(const RooflineRun& run, std::int64_t d) {
  return std::max<std::int64_t>(1, run.ctx.params.integer("bytes") / (2 * d));
}

void fill_decode_weights(std::uint16_t* w, std::int64_t rows, std::int64_t d) {
  std::vector<float> row(static_cast<std::size_t>(d));
  for (std::int64_t r = 0; r < rows; ++r) {
    fill_seeded_uniform(row, spread_seed(std::uint32_t(r)));
    for (std::int64_t c = 0; c < d; ++c) w[r * d + c] = to_bf16(row[std::size_t(c)]);
  }
}

double sampled_gemv_bf16_error(const std::uint16_t* w, const float* x, const float* y, std::int64_t rows,
                               std::int64_t d) {
  double worst = 0;
  for (std::int64_t sample = 0; sample < 256; ++sample) {
    const std::int64_t r = (sample * 7919) % rows;
    double ref = 0, magnitude = 0;
    gemv_bf16_reference(&ref, w + r * d, x, 1, d);
    for (std::int64_t c = 0; c < d; ++c) magnitude += std::fabs(from_bf16(w[r * d + c]) * x[c]);
    worst = std::max(worst, std::fabs(y[r] - ref) / std::max(magnitude, 1e-30));
  }
  return worst;
}

RoofPoint decode_point(std::int64_t rows, std::int64_t d, const TimingStats& t, double max_rel_err) {
  RoofPoint p = roof_point("decode_gemv", "decode GEMV", fmt::format("decode GEMV, batch 1, {} x {} bf16", rows, d),
                           gemv_flops(rows, d), gemv_bf16_bytes(rows, d), t,
                           "every 2-byte weight read once, x read and y written once");
  p.max_rel_err = max_rel_err;
  return p;
}

// |c_ij - sum_l a_il b_lj| / sum_l |a_il| |b_lj| at a few hundred sampled entries of C = A B (a full double reference
// of a prefill GEMM would take longer than the rest of the run).
double sampled_matmul_error(const matmul::Shape& s, const float* a, const float* b, const float* c) {
  double worst = 0;
  for (std::int64_t sample = 0; sample < 256; ++sample) {
    const std::int64_t i = (sample * 7919) % s.m, j = (sample * 104729) % s.n;
    double sum = 0, magnitude = 0;
    for (std::int64_t l = 0; l < s.k; ++l) {
      sum += double(a[i * s.k + l]) * double(b[l * s.n + j]);
      magnitude += std::fabs(double(a[i * s.k + l]) * double(b[l * s.n + j]));
    }
    worst = std::max(worst, std::fabs(c[i * s.n + j] - sum) / std::max(magnitude, 1e-30));
  }
  return worst;
}

RoofPoint prefill_point(const matmul::Shape& s, const TimingStats& t, const float* a, const float* b, const float* c) {
  RoofPoint p = roof_point(
      "prefill_gemm", "prefill GEMM", fmt::format("prefill GEMM, {} tokens, {} x {} fp32", s.m, s.k, s.n),
      matmul::flops(s), matmul::bytes_minimum(s), t, "activations and weights read once, output written once (fp32)");
  p.max_rel_err = sampled_matmul_error(s, a, b, c);
  p.error_tolerance = matmul::error_tolerance(s);
  return p;
}

void measure_placed_kernels(RooflineRun& run, RooflineMeasured& m) {
  measure_matmuls(run, m);
  measure_attention(run, m);
  const auto d = static_cast<std::int64_t>(run.ctx.params.integer("model_dim"));
  measure_decode(run, d, m);
  measure_prefill(run, d, m);
}

}  // namespace dlsys::roofline
