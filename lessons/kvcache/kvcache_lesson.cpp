#include "lessons/kvcache/kvcache_lesson.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "engine/address_space.h"
#include "engine/host_memory.h"
#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/decoder/decoder.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/kvcache/checked_math.h"
#include "lessons/kvcache/decode_roofline.h"
#include "lessons/kvcache/gpu_specs.h"
#include "lessons/kvcache/kvcache_steps.h"
#include "lessons/kvcache/live_decode.h"
#include "lessons/kvcache/model_notes.h"

namespace dlsys {

using namespace kvcache;

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

decoder::Shape live_shape(const ParamValues& p) {
  return {int(p.integer("d_model")), int(p.integer("layers")), int(p.integer("heads")), int(p.integer("kv_heads")),
          256};
}

// A theory line with the shape of `flops(position)`, scaled so its total matches the measured series' total:
// it shows how the time should grow, not an absolute prediction.
Series flops_shaped_line(const Series& measured, const std::string& id, const std::string& name,
                         const std::function<double(std::int64_t)>& flops) {
  double measured_total = 0, flops_total = 0;
  for (const auto& pt : measured.points) {
    measured_total += pt.y;
    flops_total += flops(std::int64_t(pt.x));
  }
  Series line{id, name, "theory", measured.x_label, measured.x_unit, measured.y_label, measured.y_unit, {}};
  for (const auto& pt : measured.points) {
    const double y = flops(std::int64_t(pt.x)) * measured_total / flops_total;
    line.points.push_back({pt.x, y, y, y});
  }
  return line;
}

}  // namespace

namespace kvcache {

// gpu_gb > 0 overrides the memory; otherwise the chosen GPU's datasheet memory, or for this-machine the GPU when
// one answers, else host memory.
std::pair<std::int64_t, std::string> memory_to_fit(const ParamValues& p) {
  const double gb = p.real("gpu_gb");
  if (gb > 0) return {std::llround(gb * kBytesPerGB), fmt::format("chosen: {} GB", format_number(gb, 6))};
  if (const GpuSpec* gpu = find_gpu_spec(p.text("gpu")))
    return {std::llround(gpu->memory_gb * kBytesPerGB),
            fmt::format("{}: {} GB as sold, GB = 1e9 bytes", gpu->name, format_number(gpu->memory_gb, 6))};
  if (cuda_status().available)
    return {cuda_status().device.memory_total_bytes, "this device: " + cuda_status().device.name};
  return {describe_cpu().memory_total_bytes, "this machine's host memory (no GPU answered)"};
}

ModelConfig model_from_params(const ParamValues& p) {
  const std::string& path = p.text("config");
  return path.empty() ? load_preset(p.text("model")) : load_model_config_file(path);
}

SizingQuery sizing_query_from_params(const ParamValues& p) {
  SizingQuery q;
  q.model = model_from_params(p);
  q.kv_type = find_element_type(p.text("dtype"), "dtype");
  q.weights_type = find_element_type(p.text("weights_dtype"), "weights_dtype");
  q.batch = p.integer("batch");
  q.seq = p.integer("seq");
  q.block_tokens = p.integer("block");
  q.workspace_bytes = std::llround(p.real("workspace_gb") * kBytesPerGB);
  q.gpu_bytes = memory_to_fit(p).first;
  return q;
}

}  // namespace kvcache

std::vector<ParamSpec> KvCacheLesson::params() const {
  const auto types = element_type_names();
  return {
      {.key = "model",
       .label = "model preset",
       .type = ParamType::Choice,
       .default_text = "llama-2-7b",
       .choices = preset_names(),
       .help = "shapes from each model's Hugging Face config.json"},
      {.key = "config",
       .label = "config.json (overrides model)",
       .type = ParamType::File,
       .help = "path to a Hugging Face config.json; empty = use the preset"},
      {.key = "batch",
       .label = "batch (sequences)",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 1e12,
       .help = "sequences decoded together"},
      {.key = "seq",
       .label = "sequence length",
       .type = ParamType::Integer,
       .default_text = "1000",
       .min = 1,
       .max = 1e12,
       .unit = "tokens",
       .help = "prompt plus generated tokens"},
      {.key = "dtype",
       .label = "KV cache element type",
       .type = ParamType::Choice,
       .default_text = "fp16",
       .choices = types,
       .help = "int4 is half a byte"},
      {.key = "weights_dtype",
       .label = "weights element type",
       .type = ParamType::Choice,
       .default_text = "fp16",
       .choices = types},
      {.key = "block",
       .label = "paged block",
       .type = ParamType::Integer,
       .default_text = "16",
       .min = 1,
       .max = 1e6,
       .unit = "tokens",
       .help = "tokens per block of a paged cache"},
      {.key = "gpu",
       .label = "GPU",
       .type = ParamType::Choice,
       .default_text = "h100-sxm",
       .choices = gpu_choice_names(),
       .help = "datasheet memory, 16-bit tensor peak and bandwidth; this-machine: this GPU or host memory, no peak"},
      {.key = "gpu_gb",
       .label = "memory override",
       .type = ParamType::Real,
       .default_text = "0",
       .max = 1e6,
       .unit = "GB",
       .help = "GB = 1e9 bytes; 0 = the chosen GPU's memory"},
      {.key = "workspace_gb",
       .label = "workspace allowance",
       .type = ParamType::Real,
       .default_text = "1",
       .max = 1e6,
       .unit = "GB",
       .help = "activations and library scratch: an allowance you choose, not derived"},
      {.key = "d_model",
       .label = "live decoder: d_model",
       .type = ParamType::Integer,
       .default_text = "256",
       .min = 8,
       .max = 8192,
       .help = "width of the live decoder"},
      {.key = "layers",
       .label = "live decoder: layers",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 256,
       .help = "attention layers"},
      {.key = "heads",
       .label = "live decoder: heads",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 256,
       .help = "query heads; must divide d_model"},
      {.key = "kv_heads",
       .label = "live decoder: KV heads",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 256,
       .help = "= heads: multi-head; 1: multi-query; must divide heads"},
      {.key = "tokens",
       .label = "live decoder: tokens",
       .type = ParamType::Integer,
       .default_text = "128",
       .min = 2,
       .max = 65536,
       .help = "tokens generated per run"},
      {.key = "repeats",
       .label = "timed repeats",
       .type = ParamType::Integer,
       .default_text = "3",
       .min = 1,
       .max = 50,
       .help = "median per position over this many runs"},
      cpu_threads_param("OpenBLAS threads, both paths alike"),
      max_minutes_param(),
  };
}

namespace {

// The live decoder runs on the CPU on every backend. Throws BadInput beyond max_minutes.
void refuse_long_live_run(const ParamValues& p, const decoder::Shape& shape) {
  const std::int64_t tokens = p.integer("tokens");
  refuse_if_longer_than_limit(
      p, kvcache::live_run_seconds(shape, tokens, int(p.integer("repeats"))),
      fmt::format("{} tokens x {} repeats with the cache and recomputing the prefix, a warm-up and {} timed last "
                  "steps: each step's FLOP at {:g} GFLOP/s and {:g} ns per attention score",
                  tokens, p.integer("repeats"), kLastStepRepeats, kvcache::kDecoderGflops,
                  kvcache::kSecondsPerScore * 1e9),
      "tokens, repeats, layers or d_model");
}

}  // namespace

namespace kvcache {

namespace {
// Seconds of one decode step at 0-based `position`, on one path.
double step_seconds(const decoder::Shape& shape, std::int64_t position, bool recompute) {
  const double n = double(position + 1);
  // With the cache the new token's query meets n keys; recomputing, row i of the prefix meets i + 1 of them.
  const double scores = double(shape.layers) * shape.heads * (recompute ? n * (n + 1) / 2 : n);
  const double flop =
      recompute ? decoder::flops_recompute_step(shape, position) : decoder::flops_cached_step(shape, position);
  return estimated_seconds(flop, kDecoderGflops, 1) + scores * kSecondsPerScore;
}
double both_paths_seconds(const decoder::Shape& shape, std::int64_t position) {
  return step_seconds(shape, position, false) + step_seconds(shape, position, true);
}
}  // namespace

double live_run_seconds(const decoder::Shape& shape, std::int64_t tokens, int repeats) {
  double generation = 0, warmup = 0;
  for (std::int64_t position = 0; position < tokens; ++position) {
    const double both = both_paths_seconds(shape, position);
    generation += both;
    if (position < kLiveWarmupTokens) warmup += both;
  }
  const double last_steps = (std::max(repeats, kLastStepRepeats) + 1) * both_paths_seconds(shape, tokens - 1);
  return warmup + repeats * generation + last_steps;
}

}  // namespace kvcache

void KvCacheLesson::validate(const ParamValues& p, BackendKind) const {
  const SizingQuery q = sizing_query_from_params(p);
  if (q.model.max_positions > 0 && q.seq > q.model.max_positions)
    throw BadInput(
        fmt::format("parameter 'seq': value {} is not allowed ({}'s config allows {} positions, its "
                    "max_position_embeddings); allowed: 1 to {}",
                    q.seq, q.model.name, q.model.max_positions, q.model.max_positions));
  size_inference(q);  // overflow and zero sizes
  const decoder::Shape shape = live_shape(p);
  decoder::check_shape(shape);
  // The live run's weights, cache and scratch must fit in free host memory: refused before anything is allocated.
  const std::int64_t tokens = p.integer("tokens");
  const std::int64_t needed_bytes = decoder::run_bytes(shape, tokens);
  const HostMemory host = host_memory();
  if (!host.fits(double(needed_bytes)))
    throw BadInput(
        fmt::format("the live decoder (d_model {}, layers {}, tokens {}) needs {} of host memory but only {} "
                    "is free; lower d_model, layers or tokens",
                    shape.d_model, shape.layers, tokens, format_bytes_both(double(needed_bytes)),
                    format_bytes_both(host.free_bytes)));
  refuse_long_live_run(p, shape);
}

namespace {

// The weights and what depends on them; left empty (written as null) when the config cannot fix them.
void fill_weights(kvcache::KvCacheTheory& t, const Sizing& s) {
  t.weights_known = s.weights_known;
  if (!s.weights_known) return;
  t.parameters = s.parameters.total;
  t.active_parameters = s.parameters.active_known ? s.parameters.active : 0;
  t.weights_bytes = s.weights_bytes;
  // Training, for contrast (erratum E8): mixed-precision Adam keeps 2 (fp16 weights) + 2 (fp16 gradients) + 4 (fp32
  // master weights) + 4 + 4 (Adam moments) = 16 bytes per parameter of model states alone, before activations
  // (Rajbhandari et al. 2020, ZeRO, section 3.1).
  t.training_states_bytes = multiply(s.parameters.total, 16, "training model states (16 bytes per parameter)");
  t.total_bytes = s.total_bytes;
  t.total_gb = double(s.total_bytes) / kBytesPerGB;
  t.total_gib = double(s.total_bytes) / kBytesPerGiB;
  t.fits = s.total_bytes <= s.gpu_bytes;
  t.max_batch_fit = s.max_batch_fit;
  t.max_seq_fit = s.max_seq_fit;  // -1: any length (the sliding window caps the cache)
  t.max_seq_usable = s.max_seq_usable;
  t.max_seq_limited_by = s.max_seq_limited_by;
}

void fill_roofline(kvcache::KvCacheTheory& t, const DecodeRoofline& r) {
  if (r.has_gpu) {
    t.gpu_peak_tflops = r.gpu.peak_tflops;
    t.gpu_bandwidth_tbps = r.gpu.bandwidth_tbps;
    t.ridge_flop_per_byte = r.ridge_flop_per_byte;
    t.gpu_spec_source = r.gpu.source;
    t.gpu_name = r.gpu.name;
  }
  t.decode_known = r.known;
  if (!r.known) return;
  t.decode_flops = r.decode.flops;
  t.decode_bytes = r.decode.bytes;
  t.decode_intensity = r.decode.intensity;
  t.decode_weights_only_intensity = r.weights_only_intensity;
  t.decode_bound = r.decode.bound;
  if (t.ridge_flop_per_byte > 0) t.decode_roofline_us = r.decode.roofline_seconds * 1e6;  // a datasheet GPU's floor
  t.prefill_intensity = r.prefill.intensity;
  t.prefill_bound = r.prefill.bound;
}

}  // namespace

kvcache::KvCacheTheory kvcache_theory(const ParamValues& p) {
  const SizingQuery q = sizing_query_from_params(p);
  const Sizing s = size_inference(q);
  const ModelConfig& m = q.model;
  kvcache::KvCacheTheory t;
  t.model = m.name;
  t.model_source = m.source.empty() ? "user config.json" : m.source;
  t.model_type = m.model_type;
  t.layers = m.layers;
  t.heads = m.heads;
  t.kv_heads = m.kv_heads;
  t.head_dim = m.head_dim;
  t.hidden_size = m.hidden;
  t.attention = attention_kind_name(m);
  t.cache_elements_per_layer_token = s.cache_elements_per_layer_token;
  t.kv_lora_rank = m.latent.kv_lora_rank;
  t.qk_rope_head_dim = m.latent.qk_rope_head_dim;
  t.per_head_kv_bytes = s.per_head_kv_bytes;
  t.experts_routed = m.experts.routed;
  t.experts_per_token = m.experts.per_token;
  t.experts_shared = m.experts.shared;
  t.tied_embeddings = m.tied_embeddings;
  t.tied_embeddings_basis = m.tied_embeddings_basis;
  t.parameter_layout = m.layout_note;
  t.other_spellings = m.other_spellings;
  t.missing_keys = m.weights_missing;
  t.not_computed = figures_not_computed(m);
  for (const ModelNote& note : model_notes(m)) t.notes.push_back(note.text);
  t.max_positions = m.max_positions;
  t.sliding_window = m.sliding_window;
  t.window_layers = m.sliding_window > 0 ? m.window_layers : 0;
  t.kv_element_bits = q.kv_type.bits;
  t.bytes_per_token = s.bytes_per_token;
  t.bytes_per_token_mib = double(s.bytes_per_token) / (1024.0 * 1024.0);
  t.cached_tokens = s.cached_tokens;
  t.kv_bytes = s.kv_bytes;
  t.kv_gb = double(s.kv_bytes) / kBytesPerGB;
  t.kv_gib = double(s.kv_bytes) / kBytesPerGiB;
  t.workspace_bytes = s.workspace_bytes;
  t.gpu_bytes = s.gpu_bytes;
  t.gpu_source = memory_to_fit(p).second;
  t.gpu = p.text("gpu");
  fill_weights(t, s);
  fill_roofline(t, decode_roofline(q, s, find_gpu_spec(t.gpu)));
  t.paged_block_tokens = q.block_tokens;
  t.paged_blocks_per_seq = s.paged_blocks_per_seq;
  t.paged_blocks = s.paged_blocks;
  t.paged_waste_bytes = s.paged_waste_bytes;
  t.reserve_tokens = s.reserve_tokens;
  t.reserved_bytes = s.reserved_bytes;
  t.reserve_waste_bytes = s.reserve_waste_bytes;

  // The live decoder: the same formula with its own shape and fp32 elements, batch 1.
  const decoder::Shape live = live_shape(p);
  ModelConfig live_model;
  live_model.name = "live decoder";
  live_model.layers = live.layers;
  live_model.heads = live.heads;
  live_model.kv_heads = live.kv_heads;
  live_model.head_dim = live.d_model / live.heads;
  const std::int64_t live_tokens = p.integer("tokens");
  t.live_bytes_per_token = kv_bytes_per_token(live_model, find_element_type("fp32", "dtype"));
  t.live_kv_bytes = t.live_bytes_per_token * live_tokens;
  t.live_flops_cached_last = decoder::flops_cached_step(live, live_tokens - 1);
  t.live_flops_uncached_last = decoder::flops_recompute_step(live, live_tokens - 1);
  t.live_flops_ratio_last = t.live_flops_uncached_last / t.live_flops_cached_last;
  return t;
}

std::shared_ptr<const LessonValues> KvCacheLesson::theory(const ParamValues& p) const {
  return make_values(kvcache_theory(p));
}

namespace {

KvCacheMeasured measured_from(const LiveDecodeTimes& live, const decoder::Shape& shape, std::int64_t tokens,
                              const KvCacheTheory& theory, const MemoryLedger& ledger) {
  const double cached_us = live.last_cached.median_us, recompute_us = live.last_recompute.median_us;
  KvCacheMeasured m;
  m.kv_allocated_bytes = ledger.peak_bytes("kv");
  m.kv_matches_formula = m.kv_allocated_bytes == theory.live_kv_bytes;
  m.decode_us_cached = cached_us;
  m.decode_us_cached_min = live.last_cached.min_us;
  m.decode_us_cached_max = live.last_cached.max_us;
  m.decode_us_uncached = recompute_us;
  m.decode_us_uncached_min = live.last_recompute.min_us;
  m.decode_us_uncached_max = live.last_recompute.max_us;
  m.last_step_repeats = live.last_step_repeats;
  m.speedup = recompute_us / cached_us;
  m.speedup_bar = kMinCacheSpeedup;
  m.meets_bar = m.speedup >= kMinCacheSpeedup;
  m.last_position = tokens - 1;
  for (const TimingStats& t : live.cached_per_position) m.generate_us_cached += t.median_us;
  for (const TimingStats& t : live.recompute_per_position) m.generate_us_uncached += t.median_us;
  m.tokens_match = live.tokens_match;
  m.max_abs_logit_diff = live.max_abs_logit_diff;
  m.cached_gflops_last = decoder::flops_cached_step(shape, tokens - 1) / (cached_us * 1e3);
  m.uncached_gflops_last = decoder::flops_recompute_step(shape, tokens - 1) / (recompute_us * 1e3);
  return m;
}

// Time per position both ways, each beside a line with the shape of its FLOP count.
void add_live_series(RunResult& result, const LiveDecodeTimes& live, const decoder::Shape& shape) {
  Series cached{"cached_time", "with KV cache (measured)", "measured", "position",
                "tokens",      "time per token",           "us",       {}};
  Series recompute{
      "recompute_time", "recomputing K, V (measured)", "measured", "position", "tokens", "time per token", "us", {}};
  for (std::size_t i = 0; i < live.cached_per_position.size(); ++i) {
    const TimingStats &c = live.cached_per_position[i], &u = live.recompute_per_position[i];
    cached.points.push_back({double(i), c.median_us, c.min_us, c.max_us});
    recompute.points.push_back({double(i), u.median_us, u.min_us, u.max_us});
  }
  Series cached_shape = flops_shaped_line(cached, "cached_flops_theory", "with KV cache: FLOPs, scaled (theory)",
                                          [&](std::int64_t i) { return decoder::flops_cached_step(shape, i); });
  Series recompute_shape = flops_shaped_line(recompute, "recompute_flops_theory", "recomputing: FLOPs, scaled (theory)",
                                             [&](std::int64_t i) { return decoder::flops_recompute_step(shape, i); });
  result.series.push_back(std::move(cached));
  result.series.push_back(std::move(recompute));
  result.series.push_back(std::move(cached_shape));
  result.series.push_back(std::move(recompute_shape));
}

// The calculator's curve: cache bytes against sequence length at this batch (the window flattens it).
Series kv_bytes_curve(const ParamValues& p) {
  const SizingQuery q = sizing_query_from_params(p);
  Series curve{"kv_bytes_theory", fmt::format("KV cache, batch {} (theory)", q.batch),
               "theory",          "sequence length",
               "tokens",          "KV cache",
               "bytes",           {}};
  const std::int64_t curve_end = std::max(q.seq, q.model.max_positions);
  for (std::int64_t seq = 1; seq <= curve_end; seq = seq > curve_end / 2 && seq < curve_end ? curve_end : seq * 2) {
    SizingQuery at = q;
    at.seq = seq;
    const double bytes = double(size_inference(at).kv_bytes);
    curve.points.push_back({double(seq), bytes, bytes, bytes});
    if (seq == curve_end) break;
  }
  return curve;
}

}  // namespace

RunResult KvCacheLesson::run(RunContext& ctx) const {
  const ParamValues& p = ctx.params;
  RunResult result = begin_result(*this, ctx);
  const decoder::Shape shape = live_shape(p);
  const std::int64_t tokens = p.integer("tokens");
  const int repeats = int(p.integer("repeats"));
  const int threads = int(p.integer("threads"));

  result.backend.kind = "cpu";
  result.backend.device = describe_cpu().name;
  result.backend.timer = "steady_clock";
  result.backend.repeats = repeats;
  if (ctx.backend == BackendKind::Cuda)
    result.backend.notes.push_back("the live decoder runs on the CPU; the sizes above are for the chosen GPU memory");
  const int hardware_threads = describe_cpu().threads;
  if (threads > hardware_threads)
    result.backend.notes.push_back(fmt::format("{} threads time-share {} hardware threads", threads, hardware_threads));
  result.backend.notes.push_back(
      fmt::format("live decoder: batch 1; series: each position timed once per repeat after an untimed warm-up; last "
                  "token: median of {} timed "
                  "repeats of that step",
                  std::max(repeats, kLastStepRepeats)));
  set_openblas_threads(threads);

  const LiveDecodeTimes live = run_live_decode(shape, tokens, repeats, ctx.ledger, ctx.control);
  result.measured = make_values(measured_from(live, shape, tokens, *result.theory_as<KvCacheTheory>(), ctx.ledger));
  add_live_series(result, live, shape);
  result.series.push_back(kv_bytes_curve(p));
  ctx.control.progress(1.0, "done");
  finish_result(result, ctx.ledger);
  return result;
}

namespace {

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
  const std::string batch = r.params.at("batch"), seq = with_commas(std::stoll(r.params.at("seq")));
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

std::shared_ptr<const StepData> KvCacheLesson::step_data(const ParamValues& params) const {
  return kvcache::make_steps(params);
}

}  // namespace dlsys
