// The kvcache lesson's parameters, the one place it reads them and refuses them, and its closed forms.
#include "lessons/kvcache/kvcache_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/decoder/decoder.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/kvcache/checked_math.h"
#include "lessons/kvcache/decode_roofline.h"
#include "lessons/kvcache/live_decode.h"
#include "lessons/kvcache/model_notes.h"

namespace dlsys {

using namespace kvcache;

namespace {

// What the calculator sizes: the model, its element types, the batch and length, and the memory to fit into.
std::vector<ParamSpec> sizing_param_specs() {
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
  };
}

// The small decoder a run times with and without its cache, on the CPU.
std::vector<ParamSpec> live_decoder_param_specs() {
  return {
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

}  // namespace

std::vector<ParamSpec> KvCacheLesson::params() const {
  std::vector<ParamSpec> specs = sizing_param_specs();
  for (ParamSpec& spec : live_decoder_param_specs()) specs.push_back(std::move(spec));
  return specs;
}

KvCacheParams KvCacheLesson::read_params(const ParamValues& values) const {
  KvCacheParams p;
  p.model = values.text("model");
  p.config = values.text("config");
  p.kv_type = find_element_type(values.text("dtype"), "dtype");
  p.weights_type = find_element_type(values.text("weights_dtype"), "weights_dtype");
  p.batch = values.integer("batch");
  p.seq = values.integer("seq");
  p.block_tokens = values.integer("block");
  p.gpu = find_gpu_spec(values.text("gpu"));
  p.gpu_gb = values.real("gpu_gb");
  p.workspace_gb = values.real("workspace_gb");
  p.live.d_model = int(values.integer("d_model"));
  p.live.layers = int(values.integer("layers"));
  p.live.heads = int(values.integer("heads"));
  p.live.kv_heads = int(values.integer("kv_heads"));
  p.tokens = values.integer("tokens");
  p.repeats = int(values.integer("repeats"));
  p.threads = int(values.integer("threads"));
  p.max_minutes = values.real("max_minutes");
  return p;
}

namespace kvcache {

// gpu_gb > 0 overrides the memory; otherwise the chosen GPU's datasheet memory, or for this-machine the GPU when
// one answers, else host memory.
std::pair<std::int64_t, std::string> memory_to_fit(const KvCacheParams& p) {
  if (p.gpu_gb > 0)
    return {std::llround(p.gpu_gb * kBytesPerGB), fmt::format("chosen: {} GB", format_number(p.gpu_gb, 6))};
  if (p.gpu != nullptr)
    return {std::llround(p.gpu->memory_gb * kBytesPerGB),
            fmt::format("{}: {} GB as sold, GB = 1e9 bytes", p.gpu->name, format_number(p.gpu->memory_gb, 6))};
  if (cuda_status().available)
    return {cuda_status().device.memory_total_bytes, "this device: " + cuda_status().device.name};
  return {describe_cpu().memory_total_bytes, "this machine's host memory (no GPU answered)"};
}

ModelConfig model_of(const KvCacheParams& p) {
  return p.config.empty() ? load_preset(p.model) : load_model_config_file(p.config);
}

SizingQuery sizing_query_of(const KvCacheParams& p) {
  SizingQuery q;
  q.model = model_of(p);
  q.kv_type = p.kv_type;
  q.weights_type = p.weights_type;
  q.batch = p.batch;
  q.seq = p.seq;
  q.block_tokens = p.block_tokens;
  q.workspace_bytes = std::llround(p.workspace_gb * kBytesPerGB);
  q.gpu_bytes = memory_to_fit(p).first;
  return q;
}

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
  const double last_steps = (last_step_repeats(repeats) + 1) * both_paths_seconds(shape, tokens - 1);
  return warmup + repeats * generation + last_steps;
}

}  // namespace kvcache

void KvCacheLesson::check_params(const KvCacheParams& p, BackendKind) const {
  const SizingQuery q = sizing_query_of(p);
  if (q.model.max_positions > 0 && q.seq > q.model.max_positions)
    throw BadInput(
        fmt::format("parameter 'seq': value {} is not allowed ({}'s config allows {} positions, its "
                    "max_position_embeddings); allowed: 1 to {}",
                    q.seq, q.model.name, q.model.max_positions, q.model.max_positions));
  size_inference(q);  // overflow and zero sizes
  decoder::check_shape(p.live);
}

RunBudget KvCacheLesson::budget_of(const KvCacheParams& p, BackendKind) const {
  RunBudget budget;
  budget.host_bytes = double(decoder::run_bytes(p.live, p.tokens));
  budget.sizes = fmt::format(
      "the live decoder's parameters 'd_model' = {}, 'layers' = {}, 'tokens' = {} (its weights, KV cache and scratch)",
      p.live.d_model, p.live.layers, p.tokens);
  budget.cpu_seconds = live_run_seconds(p.live, p.tokens, p.repeats);
  budget.max_minutes = p.max_minutes;
  budget.cpu_work = fmt::format(
      "{} tokens x {} repeats with the cache and recomputing the prefix, a warm-up and {} timed last "
      "steps: each step's FLOP at {:g} GFLOP/s and {:g} ns per attention score",
      p.tokens, p.repeats, kLastStepRepeats, kDecoderGflops, kSecondsPerScore * 1e9);
  budget.smaller = "tokens, repeats, layers or d_model";
  return budget;
}

namespace {

// The weights and what depends on them; left empty (written as null) when the config cannot fix them.
void fill_weights(KvCacheTheory& t, const Sizing& s) {
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

void fill_roofline(KvCacheTheory& t, const DecodeRoofline& r) {
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

// The model's shape as the config gives it, and how the config was read.
void fill_model(KvCacheTheory& t, const ModelConfig& m) {
  t.model = m.name;
  t.model_source = m.source.empty() ? "user config.json" : m.source;
  t.model_type = m.model_type;
  t.layers = m.layers;
  t.heads = m.heads;
  t.kv_heads = m.kv_heads;
  t.head_dim = m.head_dim;
  t.hidden_size = m.hidden;
  t.attention = attention_kind_name(m);
  t.kv_lora_rank = m.latent.kv_lora_rank;
  t.qk_rope_head_dim = m.latent.qk_rope_head_dim;
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
}

// The cache of the whole batch, the memory it is sized against, and paged blocks against a reservation up front.
void fill_cache(KvCacheTheory& t, const SizingQuery& q, const Sizing& s) {
  t.cache_elements_per_layer_token = s.cache_elements_per_layer_token;
  t.per_head_kv_bytes = s.per_head_kv_bytes;
  t.kv_element_bits = q.kv_type.bits;
  t.bytes_per_token = s.bytes_per_token;
  t.bytes_per_token_mib = double(s.bytes_per_token) / (1024.0 * 1024.0);
  t.cached_tokens = s.cached_tokens;
  t.kv_bytes = s.kv_bytes;
  t.kv_gb = double(s.kv_bytes) / kBytesPerGB;
  t.kv_gib = double(s.kv_bytes) / kBytesPerGiB;
  t.workspace_bytes = s.workspace_bytes;
  t.gpu_bytes = s.gpu_bytes;
  t.paged_block_tokens = q.block_tokens;
  t.paged_blocks_per_seq = s.paged_blocks_per_seq;
  t.paged_blocks = s.paged_blocks;
  t.paged_waste_bytes = s.paged_waste_bytes;
  t.reserve_tokens = s.reserve_tokens;
  t.reserved_bytes = s.reserved_bytes;
  t.reserve_waste_bytes = s.reserve_waste_bytes;
}

// The live decoder: the same formula with its own shape and fp32 elements, batch 1.
void fill_live(KvCacheTheory& t, const decoder::Shape& live, std::int64_t tokens) {
  ModelConfig live_model;
  live_model.name = "live decoder";
  live_model.layers = live.layers;
  live_model.heads = live.heads;
  live_model.kv_heads = live.kv_heads;
  live_model.head_dim = live.d_model / live.heads;
  t.live_bytes_per_token = kv_bytes_per_token(live_model, find_element_type("fp32", "dtype"));
  t.live_kv_bytes = t.live_bytes_per_token * tokens;
  t.live_flops_cached_last = decoder::flops_cached_step(live, tokens - 1);
  t.live_flops_uncached_last = decoder::flops_recompute_step(live, tokens - 1);
  t.live_flops_ratio_last = t.live_flops_uncached_last / t.live_flops_cached_last;
}

}  // namespace

KvCacheTheory KvCacheLesson::theory_of(const KvCacheParams& p) const {
  const SizingQuery q = sizing_query_of(p);
  const Sizing s = size_inference(q);
  KvCacheTheory t;
  fill_model(t, q.model);
  fill_cache(t, q, s);
  t.gpu_source = memory_to_fit(p).second;
  t.gpu = p.gpu != nullptr ? p.gpu->id : kThisMachine;
  fill_weights(t, s);
  fill_roofline(t, decode_roofline(q, s, p.gpu));
  fill_live(t, p.live, p.tokens);
  return t;
}

std::shared_ptr<const KvCacheSteps> KvCacheLesson::step_data_of(const KvCacheParams& p) const { return make_steps(p); }

}  // namespace dlsys
