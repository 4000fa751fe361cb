// Lesson `fusion`: the byte counts exactly (the course's 5 against 3, the broadcast bias's 16 B against 8 B, cos.cos's
// 4 against 2, chains' 8 L against 8), the per-element operation sequences the first step draws, every kernel against
// its double reference at awkward shapes, a small real run through the command line, and bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/fusion/fusion.h"
#include "lessons/fusion/fusion_lesson.h"
#include "lessons/fusion/fusion_steps.h"
#include "lessons/registry.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;
using namespace dlsys::fusion;

namespace {

std::vector<float> seeded(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::vector<float> v(n);
  fill_seeded_uniform(v, seed, scale);
  return v;
}

ParamValues fusion_params(const std::vector<std::string>& sets) {
  return ParamValues::parse(find_lesson("fusion").params(), sets);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("fusion theory: the course's counts, the broadcast bias corrected, whole-array bytes exactly") {
  CHECK(memory_ops_unfused(Bias::Full) == 5);
  CHECK(memory_ops_fused(Bias::Full) == 3);
  CHECK(memory_ops_unfused(Bias::Broadcast) == 4);
  CHECK(memory_ops_fused(Bias::Broadcast) == 2);
  CHECK(bytes_per_element_unfused(Bias::Broadcast) == 16);
  CHECK(bytes_per_element_fused(Bias::Broadcast) == 8);
  CHECK(bytes_per_element_unfused(Bias::Full) == 20);
  CHECK(bytes_per_element_fused(Bias::Full) == 12);
  CHECK(kLaunchesUnfused == 2);
  CHECK(kLaunchesFused == 1);
  CHECK(kCosCosAccessesUnfused == 4);
  CHECK(kCosCosAccessesFused == 2);
  CHECK(chain_bytes_per_element_unfused(1) == 8);
  CHECK(chain_bytes_per_element_unfused(8) == 64);
  CHECK(kChainBytesPerElementFused == 8);

  const FusionTheory t = fusion_theory(read_fusion_params(fusion_params({"rows=4096", "cols=4096"})));  // broadcast
  CHECK(t.rows == 4096);
  CHECK(t.bias == "broadcast");
  CHECK(t.bytes_unfused == 16.0 * 4096 * 4096 + 4.0 * 4096);  // the bias vector read once
  CHECK(t.bytes_fused == 8.0 * 4096 * 4096 + 4.0 * 4096);
  CHECK(t.byte_ratio == t.bytes_unfused / t.bytes_fused);
  CHECK(t.byte_ratio_broadcast == 2.0);
  CHECK(t.byte_ratio_full == 20.0 / 12.0);
  CHECK(t.launches_unfused == 2);
  CHECK(t.launches_fused == 1);
  CHECK(t.memory_ops_unfused == 4);
  CHECK(t.chain_lengths == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(t.chain_bytes_per_element_unfused.back() == 64);
  const FusionTheory full = fusion_theory(read_fusion_params(fusion_params({"bias=full", "rows=3", "cols=5"})));
  CHECK(full.bytes_unfused == 20.0 * 15);
  CHECK(full.bytes_fused == 12.0 * 15);
  CHECK(full.byte_ratio == 20.0 / 12.0);
  CHECK(full.memory_ops_unfused == 5);
  CHECK(full.memory_ops_fused == 3);
}

TEST_CASE("fusion step data: one element's operations, unfused and fused, add up to the counts") {
  const OpSequence unfused_full = add_relu_sequence(Bias::Full, false),
                   fused_full = add_relu_sequence(Bias::Full, true);
  CHECK(unfused_full.memory_ops == 5);
  CHECK(fused_full.memory_ops == 3);
  CHECK(unfused_full.bytes_per_element == 20);
  CHECK(fused_full.bytes_per_element == 12);
  CHECK(unfused_full.launch_names.size() == 2);
  CHECK(fused_full.launch_names.size() == 1);
  CHECK(add_relu_sequence(Bias::Broadcast, false).memory_ops == 4);
  CHECK(add_relu_sequence(Bias::Broadcast, true).memory_ops == 2);
  CHECK(cos_cos_sequence(false).memory_ops == kCosCosAccessesUnfused);
  CHECK(cos_cos_sequence(true).memory_ops == kCosCosAccessesFused);
  // Operations come in launch order, and the fused one keeps t in a register.
  int last_launch = 0;
  for (const ElementOp& op : unfused_full.ops) {
    CHECK(op.launch >= last_launch);
    last_launch = op.launch;
  }
  CHECK(std::any_of(fused_full.ops.begin(), fused_full.ops.end(),
                    [](const ElementOp& op) { return op.kind == OpKind::Register; }));
  const auto steps = make_steps(read_fusion_params(fusion_params({"bias=full"})));
  CHECK(steps->bias == "full");
  CHECK(steps->add_relu_unfused.memory_ops == 5);
}

TEST_CASE("ReLU(x + b) unfused and fused agree with the reference for both biases at awkward shapes") {
  struct Shape {
    std::int64_t rows, cols;
  };
  for (const Shape s : {Shape{1, 1}, Shape{3, 17}, Shape{5, 1031}, Shape{64, 48}})
    for (Bias bias : {Bias::Broadcast, Bias::Full})
      for (int threads : {1, 2, 3})
        for (Stores stores : {Stores::Cached, Stores::Streaming}) {
          CAPTURE(s.rows);
          CAPTURE(s.cols);
          const std::size_t n = std::size_t(s.rows * s.cols);
          const auto x = seeded(n + 1, 1);
          const auto b = seeded(bias == Bias::Full ? n + 1 : std::size_t(s.cols) + 1, 2);
          std::vector<float> t(n + 1), y1(n + 1, 9.0f), y2(n + 1, 9.0f);
          // Offset by one float: nothing here is aligned.
          add_bias(t.data() + 1, x.data() + 1, b.data() + 1, s.rows, s.cols, bias, threads, stores);
          relu_pass(y1.data() + 1, t.data() + 1, std::int64_t(n), threads, stores);
          add_bias_relu(y2.data() + 1, x.data() + 1, b.data() + 1, s.rows, s.cols, bias, threads, stores);
          for (std::size_t i = 0; i < n; ++i) {
            const float bi = bias == Bias::Full ? b[i + 1] : b[i % std::size_t(s.cols) + 1];
            const double ref = add_bias_relu_reference(x[i + 1], bi);
            CHECK(std::fabs(y1[i + 1] - ref) <= 1e-7);
            CHECK(y1[i + 1] == y2[i + 1]);  // the same arithmetic, fused or not
          }
          CHECK(y1[0] == 9.0f);
          CHECK(y2[0] == 9.0f);
        }
}

TEST_CASE("vector cos, cos.cos and GELU stay within 1e-6 of the C library in double") {
  for (float scale : {1.0f, 100.0f, 1e4f}) {
    const auto x = seeded(4097, 3, scale);
    std::vector<float> y(x.size()), z(x.size());
    cos_pass(y.data(), x.data(), std::int64_t(x.size()), 2, Stores::Cached);
    cos_cos(z.data(), x.data(), std::int64_t(x.size()), 3, Stores::Streaming);
    for (std::size_t i = 0; i < x.size(); ++i) {
      CAPTURE(x[i]);
      CHECK(std::fabs(y[i] - std::cos(double(x[i]))) <= 1e-6);
      CHECK(std::fabs(z[i] - cos_cos_reference(x[i])) <= 1e-6);
    }
  }
  const std::vector<float> x{-20.0f, -10.0f, -3.0f, -1.0f, -0.5f, 0.0f, 0.25f, 1.0f, 3.0f, 10.0f, 50.0f, 100.0f};
  std::vector<float> g(x.size());
  gelu_pass(g.data(), x.data(), std::int64_t(x.size()), 1, Stores::Cached);
  for (std::size_t i = 0; i < x.size(); ++i) {
    CAPTURE(x[i]);
    CHECK(std::isfinite(g[i]));
    CHECK(std::fabs(g[i] - gelu_reference(x[i])) <= 1e-6 * std::max(1.0, std::fabs(double(x[i]))));
  }
}

TEST_CASE("a chain of L multiply-adds gives the same result as L passes and as one fused pass") {
  for (std::int64_t n : {1, 7, 1000})
    for (int length : {1, 2, 5, 16}) {
      const auto x = seeded(std::size_t(n), 4);
      std::vector<float> a = x, b(x.size()), fused(x.size());
      for (int l = 0; l < length; ++l) {
        chain_op(b.data(), a.data(), n, l, 2, Stores::Streaming);
        std::swap(a, b);
      }
      chain_fused(fused.data(), x.data(), n, length, 2, Stores::Cached);
      for (std::int64_t i = 0; i < n; ++i) {
        CHECK(std::fabs(a[std::size_t(i)] - chain_reference(x[std::size_t(i)], length)) <= 1e-6);
        CHECK(a[std::size_t(i)] == fused[std::size_t(i)]);
      }
    }
}

TEST_CASE("fusion: a small real run reports the documented keys, checked outputs and the chain series") {
  const auto r = testing::run_lesson_captured(
      "fusion", {"rows=64", "cols=96", "chain=1,3", "small=4KiB", "repeats=1", "threads=2"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& t = json["theory"];
  const auto& m = json["measured"];
  CHECK(t["bytes_unfused"] == 16.0 * 64 * 96 + 4.0 * 96);
  CHECK(t["bytes_fused"] == 8.0 * 64 * 96 + 4.0 * 96);
  CHECK(t["byte_ratio"].get<double>() == (16.0 * 64 * 96 + 4.0 * 96) / (8.0 * 64 * 96 + 4.0 * 96));
  CHECK(t["launches_unfused"] == 2);
  CHECK(t["launches_fused"] == 1);
  for (const char* key : {"unfused_us", "fused_us", "speedup", "effective_gbps", "stream_copy_gbps", "cos_us",
                          "cos_cos_fused_us", "gelu_us", "small_fused_us", "dispatch_us"})
    CHECK_MESSAGE(m[key].get<double>() > 0, key);
  CHECK(m["speedup"].get<double>() == doctest::Approx(m["unfused_us"].get<double>() / m["fused_us"].get<double>()));
  CHECK(m["max_abs_err"].get<double>() <= 1e-5);
  CHECK(m["wrong"] == 0);
  std::map<std::string, std::size_t> points;
  for (const auto& s : json["series"]) points[s["id"].get<std::string>()] = s["points"].size();
  CHECK(points["chain_unfused"] == 2);
  CHECK(points["chain_fused"] == 2);
  CHECK(points["chain_unfused_theory"] == 2);
  CHECK(contains(r.out, "\"lesson\": \"fusion\""));
}

TEST_CASE("fusion: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("fusion", false);
  check({"rows=0"}, "parameter 'rows': value '0' is not allowed");
  check({"cols=-5"}, "parameter 'cols'");
  check({"bias=half"}, "one of: broadcast, full");
  check({"chain=0"}, "parameter 'chain'");
  check({"chain=1,17"}, "parameter 'chain'");
  check({"small=1"}, "parameter 'small'");
  // 65536 x 65536 fp32 is 16 GiB per array: refused before anything is allocated.
  check({"rows=65536", "cols=65536"}, "rows");
  // On a GPU the arrays must also fit in its free memory (none here: no GPU answers).
  if (!cuda_status().available)
    CHECK_THROWS_WITH_AS(find_lesson("fusion").validate(fusion_params({}), BackendKind::Cuda),
                         doctest::Contains("of GPU memory but GPU 0 has"), BadInput);
}
