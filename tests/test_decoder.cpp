// The live decoder: the cached and the recomputing paths against the double reference and against each other,
// at awkward sizes (grouped-query heads, head_dim not a power of two), and the cache's bytes against the formula.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/errors.h"
#include "engine/ledger.h"
#include "kernels/decoder/decoder.h"
#include "lessons/kvcache/kv_theory.h"

using namespace dlsys;
using namespace dlsys::decoder;

namespace {

double max_abs_difference(const float* a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < b.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  return worst;
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

// Both decoders over the same random weights (from `seed`), each with room for `tokens`, and a logits buffer each.
struct DecoderPair {
  DecoderPair(const Shape& shape, int tokens, std::uint32_t seed)
      : weights(make_random_weights(shape, tokens, ledger, seed)),
        cached(shape, weights, ledger, tokens),
        recompute(shape, weights, ledger, tokens),
        a(shape.vocab),
        b(shape.vocab) {}
  MemoryLedger ledger;
  const Weights weights;
  CachedDecoder cached;
  RecomputeDecoder recompute;
  std::vector<float> a, b;  // the cached and the recomputing logits
};

}  // namespace

TEST_CASE("cached and recomputing decoders match the double reference step by step") {
  for (const Shape shape : {Shape{48, 3, 6, 2, 37}, Shape{40, 2, 5, 5, 19}, Shape{32, 1, 4, 1, 11}}) {
    INFO("d_model " << shape.d_model << ", heads " << shape.heads << ", kv_heads " << shape.kv_heads);
    const int tokens = 23;
    DecoderPair pair(shape, tokens, 7);
    auto& [ledger, weights, cached, recompute, a, b] = pair;
    std::vector<int> prefix{1};
    double worst = 0;
    for (int step = 0; step < tokens; ++step) {
      cached.step(prefix.back(), a.data());
      recompute.step(prefix.back(), b.data());
      const auto ref = reference_logits(shape, weights, prefix);
      worst = std::max({worst, max_abs_difference(a.data(), ref), max_abs_difference(b.data(), ref)});
      CHECK(argmax(a.data(), shape.vocab) == argmax(b.data(), shape.vocab));
      if (step + 1 < tokens) prefix.push_back(argmax(a.data(), shape.vocab));
    }
    // Logits are O(1); fp32 through a few layers keeps well within 1e-4 of the double reference.
    CHECK(worst < 1e-4);
    CHECK(cached.position() == tokens);
    CHECK(recompute.position() == tokens);
  }
}

TEST_CASE("greedy generation gives the same tokens with and without the cache") {
  const Shape shape{64, 4, 4, 4, 256};
  const int tokens = 40;
  DecoderPair pair(shape, tokens, 3);
  auto& [ledger, weights, cached, recompute, a, b] = pair;
  int token_a = 1, token_b = 1;
  double worst = 0;
  std::vector<int> generated;
  for (int step = 0; step < tokens; ++step) {
    cached.step(token_a, a.data());
    recompute.step(token_b, b.data());
    worst = std::max(worst, max_abs_difference(a, b));
    token_a = argmax(a.data(), shape.vocab);
    token_b = argmax(b.data(), shape.vocab);
    CHECK(token_a == token_b);
    generated.push_back(token_a);
  }
  CHECK(worst < 1e-4);
  // Rewinding one position and stepping again repeats the last step exactly (the lesson times it this way).
  const std::vector<float> last_a = a, last_b = b;
  cached.rewind(1);
  recompute.rewind(1);
  cached.step(generated[generated.size() - 2], a.data());
  recompute.step(generated[generated.size() - 2], b.data());
  CHECK(a == last_a);
  CHECK(b == last_b);
  // The model really generates: not one token repeated forever.
  std::sort(generated.begin(), generated.end());
  CHECK(std::unique(generated.begin(), generated.end()) - generated.begin() > 1);
}

TEST_CASE("the KV cache the decoder allocates is exactly 2 x layers x kv_heads x head_dim x 4 bytes per token") {
  const Shape shape{96, 5, 12, 4, 50};  // head_dim 8, grouped-query: 3 query heads per KV head
  const int tokens = 77;
  MemoryLedger ledger;
  const Weights weights = make_random_weights(shape, tokens, ledger, 1);
  CHECK(ledger.current_bytes("weights") == weights_bytes(shape, tokens));
  {
    CachedDecoder cached(shape, weights, ledger, tokens);
    kvcache::ModelConfig model;
    model.name = "live";
    model.layers = shape.layers;
    model.heads = shape.heads;
    model.kv_heads = shape.kv_heads;
    model.head_dim = shape.head_dim();
    const std::int64_t per_token = kvcache::kv_bytes_per_token(model, kvcache::find_element_type("fp32", "dtype"));
    CHECK(per_token == 2 * 5 * 4 * 8 * 4);
    CHECK(ledger.current_bytes("kv") == per_token * tokens);
    CHECK(ledger.current_bytes("kv") == kv_cache_bytes(shape, tokens));
    RecomputeDecoder recompute(shape, weights, ledger, tokens);
    CHECK(ledger.current_bytes("kv") == per_token * tokens);  // recomputation keeps no cache
    CHECK(ledger.total_current_bytes() <= run_bytes(shape, tokens));
  }
  CHECK(ledger.current_bytes("kv") == 0);
}

TEST_CASE("decode step FLOPs: the cached step grows linearly, the recomputing step quadratically") {
  const Shape shape{256, 4, 4, 4, 256};
  const double d = 256;
  CHECK(flops_cached_step(shape, 0) == 4 * (2 * d * d + 4 * d * d + 4 * d + 2 * d * d) + 2 * d * 256);
  CHECK(flops_recompute_step(shape, 0) == flops_cached_step(shape, 0));  // one token: the same work
  CHECK(flops_recompute_step(shape, 127) > 100 * flops_cached_step(shape, 127));
  CHECK_THROWS_AS(check_shape(Shape{100, 2, 3, 3, 10}), BadInput);
  CHECK_THROWS_AS(check_shape(Shape{96, 2, 6, 4, 10}), BadInput);
}
