// Lesson `roofline`: the course's numbers exactly, the roofline rule, every kernel against its double reference at
// awkward sizes (misaligned, one element, odd lengths, several threads, both kinds of store), how points are placed
// on a roof and judged, a small real run through the command line, and bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_math.h"
#include "lessons/registry.h"
#include "lessons/roofline/roofline_lesson.h"
#include "lessons/roofline/roofline_steps.h"
#include "tests/support/cli_capture.h"
#include "tests/support/typed_values.h"

using namespace dlsys;
using namespace dlsys::roofline;

namespace {

std::vector<float> seeded(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  fill_seeded_uniform(v, seed);
  return v;
}

ParamValues roofline_params(const std::vector<std::string>& sets) {
  return ParamValues::parse(find_lesson("roofline").params(), sets);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("roofline theory: the course's A100 arithmetic and its hypothetical GPU, exactly") {
  const RooflineTheory t = test::typed_theory(RooflineLesson{}, {});
  CHECK(t.a100_bandwidth_bytes_per_s == 1.5e12);
  CHECK(t.a100_floats_per_s == 375e9);  // 1.5e12 B/s / 4 B
  CHECK(t.a100_y2x_bytes_per_element == 8);
  CHECK(t.a100_y2x_elements_per_s == 187.5e9);  // 1.5e12 / 8
  CHECK(t.a100_y2x_gflops == 187.5);
  CHECK(t.a100_fp32_gflops == 19.5e3);
  CHECK(t.a100_y2x_percent_of_compute == doctest::Approx(100 * 187.5 / 19500.0).epsilon(1e-15));
  CHECK(t.a100_fp32_ridge_flop_per_byte == 13);  // 19.5e12 / 1.5e12
  CHECK(t.example_ridge_flop_per_byte == 300);   // 300 TFLOP/s / 1 TB/s
  CHECK(t.example_attainable_gflops == 50e3);    // 50 FLOP/B at 1 TB/s: 50 TFLOP/s
  // The sweep k = 1, 2, ..., 256: intensity k / 4.
  REQUIRE(t.sweep_intensity.size() == 9);
  CHECK(t.sweep_intensity.front() == 0.25);
  CHECK(t.sweep_intensity.back() == 64);
  // Machine values come with a run only.
  CHECK_FALSE(t.ridge_flop_per_byte.has_value());
  CHECK_FALSE(t.datasheet_peak_gflops.has_value());
}

TEST_CASE("roofline rule, ridge and the counts of the measuring kernels") {
  CHECK(attainable_gflops(300e3, 1e3, 50) == 50e3);
  CHECK(attainable_gflops(300e3, 1e3, 300) == 300e3);
  CHECK(attainable_gflops(300e3, 1e3, 1000) == 300e3);
  CHECK(ridge_flop_per_byte(19.5e3, 1.5e3) == 13);
  CHECK(stream_bytes_per_element(StreamKernel::Copy) == 8);
  CHECK(stream_bytes_per_element(StreamKernel::Scale) == 8);
  CHECK(stream_bytes_per_element(StreamKernel::Add) == 12);
  CHECK(stream_bytes_per_element(StreamKernel::Triad) == 12);
  CHECK(stream_flop_per_element(StreamKernel::Copy) == 0);
  CHECK(stream_flop_per_element(StreamKernel::Triad) == 2);
  CHECK(family_intensity(1) == 0.25);
  CHECK(family_intensity(400) == 100);
  // Decode with bf16 weights: 2 d^2 FLOP over 2 d^2 + 8 d bytes = d / (d + 4) FLOP/B, about 1.
  CHECK(gemv_flops(4096, 4096) / gemv_bf16_bytes(4096, 4096) == doctest::Approx(4096.0 / 4100).epsilon(1e-15));
  CHECK(fma_peak_flop(2, 1000) == 2.0 * 2 * 1000 * fma_peak_chains() * vector_lanes());
}

TEST_CASE("roofline step data: the roofs of the course's two GPUs bend at their ridges") {
  const RooflineLesson lesson;
  const auto steps = lesson.step_data_of(test::typed_params(lesson, {}));
  CHECK(steps->example_roof.ridge_flop_per_byte == 300);
  CHECK(steps->a100_roof.ridge_flop_per_byte == 13);
  bool corner = false;
  for (const SeriesPoint& p : steps->a100_roof.points) {
    CHECK(p.y == attainable_gflops(19.5e3, 1.5e3, p.x));
    corner = corner || p.x == 13;
  }
  CHECK(corner);  // the ridge itself is a point of the curve, so the corner is drawn sharp
  CHECK(steps->example_kernel.x == 50);
  CHECK(steps->example_kernel.y == 50e3);
  CHECK(steps->a100_y2x.x == 0.125);
  CHECK(steps->a100_y2x.y == 187.5);
  CHECK(steps->costs.size() == 3);
}

TEST_CASE("STREAM kernels match their formulas at awkward sizes, misaligned, on 1 to 3 threads, both stores") {
  for (std::int64_t n : {1, 3, 17, 1000, 4099})
    for (int offset : {0, 1})
      for (int threads : {1, 2, 3})
        for (Stores stores : {Stores::Cached, Stores::Streaming}) {
          CAPTURE(n);
          CAPTURE(offset);
          CAPTURE(threads);
          // One spare element before (for the offset) and after (to see nothing is written past the end).
          const auto a0 = seeded(std::size_t(n + 2), 1), b0 = seeded(std::size_t(n + 2), 2);
          std::vector<float> a = a0, b = b0, c(std::size_t(n + 2), -7.0f);
          float *pa = a.data() + offset, *pb = b.data() + offset, *pc = c.data() + offset;
          stream_copy(pc, pa, n, threads, stores);
          for (std::int64_t i = 0; i < n; ++i) CHECK(pc[i] == pa[i]);
          stream_scale(pb, pc, kScaleFactor, n, threads, stores);
          for (std::int64_t i = 0; i < n; ++i) CHECK(pb[i] == 2.0f * pc[i]);
          stream_add(pc, pa, pb, n, threads, stores);
          for (std::int64_t i = 0; i < n; ++i) CHECK(pc[i] == pa[i] + pb[i]);
          std::vector<float> before = a;
          stream_triad(pa, pb, pc, 3.0f, n, threads, stores);
          for (std::int64_t i = 0; i < n; ++i)
            CHECK(double(pa[i]) == doctest::Approx(double(pb[i]) + 3.0 * pc[i]).epsilon(1e-6));
          if (offset == 1) CHECK(a[0] == before[0]);                             // nothing written before the range
          CHECK(a[std::size_t(n + offset)] == before[std::size_t(n + offset)]);  // nor after it
        }
}

TEST_CASE("the intensity family matches k multiply-adds in double, and the peak kernel runs") {
  for (std::int64_t n : {1, 5, 191, 192, 193, 3000})
    for (std::int64_t k : {1, 7, 64})
      for (Stores stores : {Stores::Cached, Stores::Streaming}) {
        const auto x = seeded(std::size_t(n) + 1, 3);
        std::vector<float> y(std::size_t(n) + 1, 99.0f);
        fma_family(y.data() + 1, x.data() + 1, n, k, 2, stores);
        for (std::int64_t i = 0; i < n; ++i)
          CHECK(std::fabs(y[std::size_t(i) + 1] - fma_family_reference(x[std::size_t(i) + 1], k)) <= 1e-6);
        CHECK(y[0] == 99.0f);
      }
  // Every chain tends to c / (1 - a) = 0.5, whatever it started from.
  CHECK(fma_family_reference(0.9f, 200) == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(std::isfinite(fma_peak(2, 1000)));
}

TEST_CASE("row softmax and the bf16 decode GEMV match their double references") {
  for (std::int64_t cols : {1, 5, 16, 17, 4100})
    for (std::int64_t rows : {1, 3}) {
      CAPTURE(cols);
      const auto x = seeded(std::size_t(rows * cols), 4);
      std::vector<float> y(x.size());
      std::vector<double> ref(x.size());
      softmax_rows(y.data(), x.data(), rows, cols, 2, Stores::Streaming);
      softmax_rows_reference(ref.data(), x.data(), rows, cols);
      for (std::size_t i = 0; i < y.size(); ++i) CHECK(std::fabs(y[i] - ref[i]) <= 1e-6 * std::max(ref[i], 1e-3));
    }
  // Scores up to 80 apart: exp(x - max) must not overflow or lose the largest term.
  std::vector<float> wide{80.0f, 0.0f, -80.0f, 79.0f};
  std::vector<float> p(4);
  softmax_rows(p.data(), wide.data(), 1, 4, 1, Stores::Cached);
  CHECK(p[0] == doctest::Approx(1 / (1 + std::exp(-1.0))).epsilon(1e-6));
  for (std::int64_t cols : {1, 15, 100, 1031})
    for (std::int64_t rows : {1, 7, 33}) {
      CAPTURE(cols);
      CAPTURE(rows);
      const auto w32 = seeded(std::size_t(rows * cols), 5), x = seeded(std::size_t(cols), 6);
      std::vector<std::uint16_t> w(w32.size());
      for (std::size_t i = 0; i < w.size(); ++i) w[i] = to_bf16(w32[i]);
      std::vector<float> y(static_cast<std::size_t>(rows));
      std::vector<double> ref(static_cast<std::size_t>(rows));
      gemv_bf16(y.data(), w.data(), x.data(), rows, cols, 3);
      gemv_bf16_reference(ref.data(), w.data(), x.data(), rows, cols);
      for (std::int64_t r = 0; r < rows; ++r) CHECK(std::fabs(y[std::size_t(r)] - ref[std::size_t(r)]) <= 1e-5 * cols);
    }
}

TEST_CASE("bfloat16 keeps the top 16 bits, rounding to nearest even") {
  CHECK(from_bf16(to_bf16(1.0f)) == 1.0f);
  CHECK(from_bf16(to_bf16(-2.5f)) == -2.5f);
  CHECK(to_bf16(1.0f) == 0x3F80);
  // 1 + 2^-8 is halfway between 1 and the next bf16 (1 + 2^-7): ties go to the even one, 1.
  CHECK(from_bf16(to_bf16(1.0f + 1.0f / 256)) == 1.0f);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: the even one is 1 + 2^-6.
  CHECK(from_bf16(to_bf16(1.0f + 3.0f / 256)) == 1.0f + 1.0f / 64);
}

TEST_CASE("y = 2x through the pool gives y = 2x, even for one element") {
  for (std::int64_t n : {0, 1, 2, 9})
    for (int threads : {1, 2, 4}) {
      const auto x = seeded(std::size_t(n) + 1, 7);
      std::vector<float> y(std::size_t(n) + 1, 5.0f);
      scale_on_pool(y.data(), x.data(), n, threads);
      for (std::int64_t i = 0; i < n; ++i) CHECK(y[std::size_t(i)] == 2 * x[std::size_t(i)]);
      CHECK(y[std::size_t(n)] == 5.0f);
    }
}

TEST_CASE("points are placed on the roof: share of the roof, the furthest above it, the sweep's bend") {
  RooflineMeasured m;
  m.peak_gflops = 100;
  m.bandwidth_gbps = 10;  // ridge 10 FLOP/B
  auto point = [](double intensity, double gflops) {
    RoofPoint p;
    p.intensity = intensity;
    p.gflops = p.gflops_best = gflops;
    p.name = "I = " + std::to_string(intensity);
    p.error_tolerance = 1e-4;
    return p;
  };
  m.sweep_points = {point(0.25, 2.5), point(4, 30), point(64, 95)};
  m.roof_points = {point(1, 11.4)};
  place_on_roof(m);
  CHECK(m.sweep_points[0].roof_gflops == 2.5);
  CHECK(m.sweep_points[0].percent_of_roof == 100);
  CHECK(m.sweep_points[2].roof_gflops == 100);
  CHECK(m.roof_points[0].percent_of_roof == doctest::Approx(114));
  CHECK(m.worst_percent_above_roof == doctest::Approx(14));
  CHECK(m.roof_bar_met);
  CHECK(m.sweep_bandwidth_gbps == 10);  // 2.5 GFLOP/s at 1/4 FLOP/B
  CHECK(m.sweep_plateau_gflops == 95);
  CHECK(m.sweep_ridge_flop_per_byte == 9.5);
  CHECK(m.ridge_ratio == doctest::Approx(0.95));
  CHECK(m.ridge_bar_met);
  CHECK(m.sweep_nearest_ridge == 1);  // 4 FLOP/B is nearer 10 than 64 is, on a log scale
  CHECK(m.sweep_crosses_ridge);
  CHECK(m.wrong == 0);
  // 16% above the roof breaks the expectation; a bend 2.5x off the ridge breaks the other.
  m.roof_points = {point(1, 11.6)};
  m.sweep_points = {point(0.25, 1.0), point(64, 100)};  // bandwidth 4 GB/s: bend at 25 FLOP/B
  m.roof_points[0].max_rel_err = 1;                     // and a wrong output
  place_on_roof(m);
  CHECK_FALSE(m.roof_bar_met);
  CHECK(m.ridge_ratio == doctest::Approx(2.5));
  CHECK_FALSE(m.ridge_bar_met);
  CHECK(m.wrong == 1);
  // A sweep that stays left of the ridge cannot show where the roof bends.
  m.sweep_points = {point(0.25, 2.5), point(4, 40)};
  place_on_roof(m);
  CHECK_FALSE(m.sweep_crosses_ridge);
  CHECK_FALSE(m.ridge_bar_met);
}

TEST_CASE("roofline: a small real run reports the documented keys and one point per kernel") {
  const auto r =
      testing::run_lesson_captured("roofline", {"k=1,4", "bytes=1MiB", "gemm_n=32", "attention_n=64", "model_dim=64",
                                                "prompt_tokens=8", "tiny_sizes=1,64", "repeats=1", "threads=2"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& t = json["theory"];
  const auto& m = json["measured"];
  CHECK(t["ridge_flop_per_byte"].get<double>() > 0);
  CHECK(t.contains("datasheet_peak_gflops") == (cpu_with_peaks().nominal_fp32_gflops > 0));
  for (const char* key : {"stream_copy_gbps", "stream_scale_gbps", "stream_add_gbps", "stream_triad_gbps",
                          "peak_gflops", "bandwidth_gbps", "y2x_gflops", "sweep_ridge_flop_per_byte"})
    CHECK_MESSAGE(m[key].get<double>() > 0, key);
  CHECK(t["ridge_flop_per_byte"].get<double>() ==
        doctest::Approx(m["peak_gflops"].get<double>() / m["bandwidth_gbps"].get<double>()));
  CHECK(m["wrong"] == 0);
  std::map<std::string, std::size_t> points;
  for (const auto& s : json["series"]) points[s["id"].get<std::string>()] = s["points"].size();
  CHECK(points["sweep"] == 2);
  for (const char* id :
       {"kernel_y2x", "kernel_softmax", "kernel_matmul_naive", "kernel_matmul_tiled", "kernel_matmul_blas",
        "kernel_attention_naive", "kernel_attention_flash", "kernel_decode_gemv", "kernel_prefill_gemm"})
    CHECK_MESSAGE(points[id] == 1, id);
  CHECK(points["roof"] > 2);
  CHECK(points["overhead_call"] == 2);
  CHECK(points["overhead_pool"] == 2);
  CHECK(contains(r.out, "\"lesson\": \"roofline\""));
}

TEST_CASE("roofline: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("roofline", false);
  check({"k=0"}, "parameter 'k'");
  check({"k=1,2048"}, "parameter 'k'");
  check({"bytes=0"}, "parameter 'bytes'");
  check({"bytes=-1"}, "parameter 'bytes'");
  check({"gemm_n=0"}, "parameter 'gemm_n': value '0' is not allowed");
  check({"attention_n=-3"}, "parameter 'attention_n'");
  check({"repeats=0"}, "parameter 'repeats'");
  // Three arrays of 60 GiB: refused before anything is allocated.
  check({"bytes=60GiB"}, "bytes");
  // On a GPU the arrays must also fit in its free memory (none here: no GPU answers).
  if (!cuda_status().available)
    CHECK_THROWS_WITH_AS(find_lesson("roofline").validate(roofline_params({}), BackendKind::Cuda),
                         doctest::Contains("of GPU memory but GPU 0 has"), BadInput);
}
