// What `dlsys-lab run kvcache` prints after the generic table: the sizing in exact bytes, what fits, the roofline,
// paged blocks, and the live decoder's cache and speed-up.
#include <fmt/format.h>

#include "engine/units.h"
#include "lessons/kvcache/kvcache_lesson.h"
#include "lessons/kvcache/model_notes.h"
#include "lessons/run_file.h"

namespace dlsys {

using kvcache::longest_context_phrase;

namespace {

// 2147483648 -> "2,147,483,648", exact for every int64 (format_count goes through double, exact only below 2^53).
std::string with_commas(std::int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -(value + 1) + 1ull : std::uint64_t(value));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (value < 0 ? "-" : "") + out;
}

std::string exact_bytes_text(std::int64_t b) {
  return b == 0 ? std::string("0 B") : fmt::format("{} B = {}", with_commas(b), format_bytes_both(double(b)));
}

std::string cache_lines(const kvcache::KvCacheTheory& t, const std::string& batch) {
  std::string out;
  if (t.attention == "latent")
    out += fmt::format("  per token  ({} latent + {} rotary key) x {} layers x {} bits / 8 = {}\n", t.kv_lora_rank,
                       t.qk_rope_head_dim, t.layers, t.kv_element_bits, exact_bytes_text(t.bytes_per_token));
  else
    out += fmt::format("  per token  2 x {} layers x {} KV heads x {} head_dim x {} bits / 8 = {}\n", t.layers,
                       t.kv_heads, t.head_dim, t.kv_element_bits, exact_bytes_text(t.bytes_per_token));
  const std::int64_t window = t.sliding_window;
  if (window > 0 && t.window_layers < t.layers) {
    out += fmt::format(
        "  whole      per layer-token x ({} full layers x {} tokens + {} window layers x at most {}) x batch {} = {}\n",
        t.layers - t.window_layers, t.cached_tokens, t.window_layers, window, batch, exact_bytes_text(t.kv_bytes));
  } else {
    out += fmt::format("  whole      per token x {} cached tokens x batch {} = {}\n", t.cached_tokens, batch,
                       exact_bytes_text(t.kv_bytes));
    if (window > 0) out += fmt::format("  (the {}-token sliding window caps the cache)\n", window);
  }
  if (t.per_head_kv_bytes > 0)
    out += fmt::format("  per head   a key and a value for each of the {} query heads would take {}\n", t.heads,
                       exact_bytes_text(t.per_head_kv_bytes));
  return out;
}

std::string weights_lines(const kvcache::KvCacheTheory& t, const std::string& batch) {
  if (!t.weights_known) {
    std::string keys;
    for (const auto& k : t.missing_keys) keys += (keys.empty() ? "" : ", ") + k;
    return fmt::format("  weights, total, fit: not computed (the config has no {})\n", keys);
  }
  std::string out;
  const std::int64_t active_parameters = t.active_parameters.value_or(0);
  const std::string active = t.experts_routed == 0 ? ""
                             : active_parameters > 0
                                 ? fmt::format(", {} active per token", with_commas(active_parameters))
                                 : ", active per token not computed";
  out += fmt::format("  weights    {} parameters{}: {}\n", with_commas(t.parameters.value_or(0)), active,
                     exact_bytes_text(t.weights_bytes.value_or(0)));
  out += fmt::format("  total      weights + KV + workspace = {} vs {} [{}]: {}\n",
                     exact_bytes_text(t.total_bytes.value_or(0)), format_bytes_both(double(t.gpu_bytes)), t.gpu_source,
                     t.fits.value_or(false) ? "fits" : "does NOT fit");
  out += fmt::format("  fits       largest batch {} at this length; longest context at batch {}: {}\n",
                     with_commas(t.max_batch_fit.value_or(0)), batch,
                     longest_context_phrase(t.max_seq_usable.value_or(0), t.max_seq_fit.value_or(0),
                                            t.max_seq_limited_by, t.max_positions));
  return out;
}

std::string roofline_lines(const kvcache::KvCacheTheory& t, const std::string& batch, const std::string& seq) {
  if (!t.decode_known) return {};
  std::string out = fmt::format(
      "  decode     one step of batch {} at {} tokens: {:.3g} FLOP over {} = {:.3g} FLOP/byte", batch, seq,
      t.decode_flops.value_or(0), format_bytes_both(t.decode_bytes.value_or(0)), t.decode_intensity.value_or(0));
  if (t.ridge_flop_per_byte > 0)
    out += fmt::format(
        "; ridge of the {} {:.3g} FLOP/byte ({:g} TFLOP/s / {:g} TB/s, datasheet): {}, at least {} per "
        "step",
        t.gpu_name, t.ridge_flop_per_byte, t.gpu_peak_tflops, t.gpu_bandwidth_tbps, t.decode_bound,
        format_duration_us(t.decode_roofline_us.value_or(0)));
  out += fmt::format("\n  prefill    {} tokens x batch {}: {:.3g} FLOP/byte{}\n", seq, batch,
                     t.prefill_intensity.value_or(0), t.prefill_bound.empty() ? "" : ": " + t.prefill_bound);
  return out;
}

std::string live_lines(const kvcache::KvCacheTheory& t, const kvcache::KvCacheMeasured& m) {
  std::string out =
      fmt::format("\nLive decoder: KV cache allocated {} (formula {}): {}\n", with_commas(m.kv_allocated_bytes),
                  with_commas(t.live_kv_bytes), m.kv_matches_formula ? "equal" : "DIFFERENT");
  out += fmt::format("  tokens identical with and without the cache: {}; largest logit difference {:.2g}\n",
                     m.tokens_match ? "yes" : "NO", m.max_abs_logit_diff);
  out += fmt::format(
      "  speed-up: last token (position {}) {} with the cache vs {} recomputing: {:.1f}x faster, where recomputing "
      "does {:.1f}x the FLOPs{}\n",
      m.last_position, format_duration_us(m.decode_us_cached), format_duration_us(m.decode_us_uncached), m.speedup,
      t.live_flops_ratio_last,
      m.meets_bar ? ""
                  : "; the cache wins by less than this lesson expects, so something else weighs on the run "
                    "(another busy process, or steps so small that fixed costs dominate)");
  return out;
}

}  // namespace

std::string KvCacheLesson::text_report(const RunResult& r) const {
  const auto* theory = r.theory_as<kvcache::KvCacheTheory>();
  if (theory == nullptr) return {};
  const kvcache::KvCacheTheory& t = *theory;
  const kvcache::KvCacheParams p = read_params(recorded_params(*this, r));
  const std::string batch = fmt::format("{}", p.batch), seq = with_commas(p.seq);
  std::string out = fmt::format("\nKV cache of {} ({} attention)\n", t.model, t.attention);
  out += cache_lines(t, batch);
  out += weights_lines(t, batch);
  out += roofline_lines(t, batch, seq);
  out += fmt::format("  paged      {} blocks of {} tokens, waste {}; reserving {} tokens up front wastes {}\n",
                     with_commas(t.paged_blocks), t.paged_block_tokens, exact_bytes_text(t.paged_waste_bytes),
                     with_commas(t.reserve_tokens), exact_bytes_text(t.reserve_waste_bytes));
  for (const std::string& note : t.notes) out += "  note: " + note + "\n";
  if (const kvcache::KvCacheMeasured* m = r.measured_as<kvcache::KvCacheMeasured>()) out += live_lines(t, *m);
  return out;
}

}  // namespace dlsys
