#include "lessons/kvcache/live_decode.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dlsys::kvcache {

namespace {

constexpr std::uint32_t kDecoderSeed = 2024;
constexpr int kStartToken = 1;
// Of one repeat's time, recomputing the prefix takes most: it redoes every earlier position at each step.
constexpr double kCachedShare = 0.2, kRecomputeShare = 0.8;

// The last token's timed calls (and their warm-up) on both paths, in generations of `tokens` steps.
double last_step_weight(std::int64_t tokens, int repeats) {
  return double(last_step_repeats(repeats) + 1) / double(std::max<std::int64_t>(tokens, 1));
}

// What one generation keeps beyond its times: the tokens it chose and the logits at each position.
struct Generation {
  std::vector<int> tokens;
  std::vector<std::vector<float>> logits;
};

// One generation of `steps` tokens from the start token; each position's time is appended to `times_us`. The logits
// (steps x vocab floats) are kept only when asked.
template <class Model>
Generation generate(Model& model, const decoder::Shape& shape, std::int64_t steps,
                    std::vector<std::vector<double>>* times_us, bool keep_logits, RunControl& control) {
  Generation out;
  std::vector<float> logits(shape.vocab);
  model.reset();
  int token = kStartToken;
  for (std::int64_t position = 0; position < steps; ++position) {
    control.check_cancelled();
    Stopwatch watch;
    model.step(token, logits.data());
    const double us = watch.elapsed_us();
    if (times_us) (*times_us)[position].push_back(us);
    token = decoder::argmax(logits.data(), shape.vocab);
    out.tokens.push_back(token);
    if (keep_logits) out.logits.push_back(logits);
  }
  return out;
}

// The step that generated the last token, timed on its own: each call rewinds one position first, so it repeats
// exactly that step.
template <class Model>
TimingStats time_last_step(Model& model, const decoder::Shape& shape, int last_token, const MeasureOptions& options,
                           RunControl& control) {
  std::vector<float> logits(shape.vocab);
  return measure(
      [&] {
        model.rewind(1);
        model.step(last_token, logits.data());
      },
      options, [&] { control.check_cancelled(); });
}

double max_abs_difference(const Generation& a, const Generation& b) {
  double diff = 0;
  for (std::size_t i = 0; i < a.logits.size() && i < b.logits.size(); ++i)
    for (std::size_t v = 0; v < a.logits[i].size(); ++v)
      diff = std::max(diff, double(std::abs(a.logits[i][v] - b.logits[i][v])));
  return diff;
}

std::vector<TimingStats> per_position(const std::vector<std::vector<double>>& times_us) {
  std::vector<TimingStats> out;
  for (const auto& samples : times_us) out.push_back(summarize_us(samples, "steady_clock"));
  return out;
}

}  // namespace

double live_decode_weight(std::int64_t tokens, int repeats) {
  return repeats * (kCachedShare + kRecomputeShare) + last_step_weight(tokens, repeats);
}

LiveDecodeTimes run_live_decode(const decoder::Shape& shape, std::int64_t tokens, int repeats, MemoryLedger& ledger,
                                RunPlan& plan) {
  RunControl& control = plan.control();
  const decoder::Weights weights = decoder::make_random_weights(shape, tokens, ledger, kDecoderSeed);
  decoder::CachedDecoder cached(shape, weights, ledger, tokens);
  decoder::RecomputeDecoder recompute(shape, weights, ledger, tokens);

  const std::int64_t warmup = std::min(tokens, kLiveWarmupTokens);
  generate(cached, shape, warmup, nullptr, false, control);
  generate(recompute, shape, warmup, nullptr, false, control);

  std::vector<std::vector<double>> cached_us(tokens), recompute_us(tokens);
  Generation first_cached, first_recompute;
  for (int r = 0; r < repeats; ++r) {
    plan.start(fmt::format("repeat {} of {}: with the KV cache", r + 1, repeats), kCachedShare);
    Generation with_cache = generate(cached, shape, tokens, &cached_us, r == 0, control);
    plan.start(fmt::format("repeat {} of {}: recomputing the prefix", r + 1, repeats), kRecomputeShare);
    Generation recomputing = generate(recompute, shape, tokens, &recompute_us, r == 0, control);
    if (r == 0) {
      first_cached = std::move(with_cache);
      first_recompute = std::move(recomputing);
    }
  }

  LiveDecodeTimes out;
  out.cached_per_position = per_position(cached_us);
  out.recompute_per_position = per_position(recompute_us);
  // Same model, same math: the tokens must agree and the logits differ only by fp32 rounding.
  out.tokens_match = first_cached.tokens == first_recompute.tokens;
  out.max_abs_logit_diff = max_abs_difference(first_cached, first_recompute);

  plan.start("timing the last token on both paths", last_step_weight(tokens, repeats));
  const MeasureOptions last_step{.warmup = 1, .repeats = last_step_repeats(repeats)};
  const auto& chosen = first_cached.tokens;
  const int last_token = chosen.size() >= 2 ? chosen[chosen.size() - 2] : kStartToken;
  out.last_cached = time_last_step(cached, shape, last_token, last_step, control);
  out.last_recompute = time_last_step(recompute, shape, last_token, last_step, control);
  out.last_step_repeats = last_step.repeats;
  return out;
}

}  // namespace dlsys::kvcache
