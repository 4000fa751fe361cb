// The serving lesson's parameters, the one place it refuses them, its closed forms and its simulated schedules.
#include "lessons/serving/serving_lesson.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/backend.h"
#include "engine/units.h"
#include "kernels/serving/backend.h"
#include "kernels/serving/scheduler.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_time_limit.h"

namespace dlsys {

using namespace serving;

std::vector<ParamSpec> ServingLesson::params() const {
  return {
      {.key = "policy",
       .label = "batching policy",
       .type = ParamType::Choice,
       .default_text = "continuous",
       .choices = {"static", "adaptive", "continuous"},
       .help = "whose numbers head the result; every run serves the stream under all three"},
      {.key = "max_batch",
       .label = "maximum batch",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 64,
       .unit = "sequences"},
      {.key = "delay_ms",
       .label = "adaptive: batch delay",
       .type = ParamType::Real,
       .default_text = "20",
       .min = 0,
       .max = 10000,
       .unit = "ms",
       .help = "a batch starts when full or when its oldest request has waited this long"},
      // 400 a second queues requests under every policy on a laptop's CPU, so the benchmark compares what each policy
      // sustains. At 200 a 2-core machine's continuous batching kept up with the arrivals (two rows a step on average),
      // and the ratio measured the arrivals' pace: 1.50-1.55x against 1.9-2.15x saturated.
      {.key = "rate",
       .label = "arrival rate",
       .type = ParamType::Real,
       .default_text = "400",
       .min = 0.01,
       .max = 100000,
       .unit = "requests/s",
       .help = "Poisson arrivals; the curves also serve the stream at 1/4 and 1/2 of it"},
      {.key = "requests",
       .label = "requests in the stream",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = 4096},
      {.key = "prompt",
       .label = "prompt length",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = 65536,
       .unit = "tokens"},
      {.key = "mean_output",
       .label = "mean output length",
       .type = ParamType::Real,
       .default_text = "32",
       .min = 1,
       .max = 65536,
       .unit = "tokens",
       .help = "output lengths are geometric with this mean, cut at max_output"},
      {.key = "max_output",
       .label = "longest output",
       .type = ParamType::Integer,
       .default_text = "128",
       .min = 1,
       .max = 65536,
       .unit = "tokens"},
      {.key = "draft",
       .label = "speculative decoding",
       .type = ParamType::Choice,
       .default_text = "on",
       .choices = {"on", "off"}},
      {.key = "k",
       .label = "draft tokens per round k",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 16},
      {.key = "draft_layers",
       .label = "draft layers",
       .type = ParamType::Integer,
       .default_text = "1",
       .min = 1,
       .max = 64,
       .help = "the draft is the target's first layers, sharing its embeddings and output head"},
      {.key = "spec_requests",
       .label = "speculative: requests timed",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 256,
       .help = "each generates max_output tokens with the target alone and with the draft"},
      {.key = "d_model",
       .label = "model width",
       .type = ParamType::Integer,
       .default_text = "128",
       .min = 16,
       .max = 2048},
      {.key = "layers", .label = "target layers", .type = ParamType::Integer, .default_text = "4", .min = 1, .max = 64},
      {.key = "heads",
       .label = "attention heads",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 64},
      {.key = "context",
       .label = "model context",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 16,
       .max = 65536,
       .unit = "tokens",
       .help = "positions the model has embeddings for: prompt + output must fit"},
      {.key = "kv_budget",
       .label = "KV memory budget",
       .type = ParamType::Bytes,
       .default_text = "16MiB",
       .min = 1024,
       .max = 1e15,
       .help = "step 6: how many sequences' caches fit in it, reserved whole or paged"},
      {.key = "block_tokens",
       .label = "paged block size",
       .type = ParamType::Integer,
       .default_text = "16",
       .min = 1,
       .max = 4096,
       .unit = "tokens"},
      {.key = "seed", .label = "seed", .type = ParamType::Integer, .default_text = "1", .min = 0, .max = 1e9},
      max_minutes_param(),
  };
}

ServingParams ServingLesson::read_params(const ParamValues& values) const {
  return {.policy = static_cast<Policy>(choice_index(values, "policy", {"static", "adaptive", "continuous"})),
          .max_batch = int(values.integer("max_batch")),
          .delay_ms = values.real("delay_ms"),
          .rate = values.real("rate"),
          .requests = int(values.integer("requests")),
          .prompt = int(values.integer("prompt")),
          .mean_output = values.real("mean_output"),
          .mean_output_text = values.text("mean_output"),
          .max_output = int(values.integer("max_output")),
          .seed = values.integer("seed"),
          .draft = values.text("draft") == "on",
          .k = int(values.integer("k")),
          .draft_layers = int(values.integer("draft_layers")),
          .spec_requests = int(values.integer("spec_requests")),
          .d_model = int(values.integer("d_model")),
          .layers = int(values.integer("layers")),
          .heads = int(values.integer("heads")),
          .context = int(values.integer("context")),
          .kv_budget_bytes = values.real("kv_budget"),
          .block_tokens = values.integer("block_tokens"),
          .max_minutes = values.real("max_minutes")};
}

namespace serving {

ModelShape model_shape(const ServingParams& p) {
  ModelShape s;
  s.d_model = p.d_model;
  s.layers = p.layers;
  s.heads = p.heads;
  s.mlp_dim = 4 * s.d_model;
  s.context = p.context;
  return s;
}

StreamSpec stream_spec(const ServingParams& p) {
  StreamSpec s;
  s.requests = p.requests;
  s.rate_per_s = p.rate;
  s.prompt_tokens = p.prompt;
  s.mean_output = p.mean_output;
  s.max_output = p.max_output;
  s.vocab = model_shape(p).vocab;
  s.seed = std::uint64_t(p.seed);
  return s;
}

}  // namespace serving

ServingTheory ServingLesson::theory_of(const ServingParams& p) const {
  const ModelShape s = model_shape(p);
  ServingTheory t;
  const double prompt = double(p.prompt), batch = double(p.max_batch);
  // 2 FLOP per weight per token in flight over 2 bytes per 16-bit weight (4 per fp32 weight).
  t.prefill_intensity = 2 * prompt / 2;
  t.decode_intensity = 2 * batch / 2;
  t.decode_intensity_batch1 = 1;
  t.prefill_intensity_fp32 = 2 * prompt / 4;
  t.decode_intensity_fp32 = 2 * batch / 4;
  t.decode_intensity_batch1_fp32 = 0.5;
  t.example_first_attends = t.example_prompt;                           // the prompt's 1,000 keys
  t.example_last_attends = t.example_prompt + t.example_generated - 1;  // and the 199 generated before it
  t.example_bytes_per_token = 2LL * 32 * 4096 * 2;  // Llama-2-7B, 16 bits: 2 x layers x hidden x 2 bytes
  t.example_first_kv_bytes = t.example_first_attends * t.example_bytes_per_token;
  t.example_last_kv_bytes = t.example_last_attends * t.example_bytes_per_token;
  t.parameters = parameter_count(s);
  t.matmul_parameters = matmul_parameters(s, s.layers);
  t.weights_bytes = 4 * t.parameters;
  t.kv_bytes_per_token = kv_bytes_per_token(s, s.layers);
  t.token_matmul_flops = 2.0 * double(t.matmul_parameters);
  t.mean_output_tokens = clamped_geometric_mean(p.mean_output, p.max_output);
  std::vector<int> lengths;
  for (const Request& r : make_stream(stream_spec(p))) lengths.push_back(r.output_tokens);
  t.expected_static_padding = static_padding_fraction(lengths, p.max_batch);
  t.draft_layers = p.draft_layers;
  t.target_layers = s.layers;
  t.k = p.k;
  t.quiet_scale = kQuietScale;
  return t;
}

namespace {

// Bytes the run holds at once: weights, the scratch of two models, a cache per batch slot and the speculative pair.
double run_bytes(const ServingParams& p) {
  const ModelShape s = model_shape(p);
  const double weights = 4.0 * double(parameter_count(s));
  const double rows = std::max<double>(s.context, double(p.max_batch));
  const double scratch = 2 * 4.0 * rows * (7.0 * s.d_model + s.mlp_dim + s.vocab);
  const double cache = double(kv_bytes_per_token(s, s.layers)) * s.context;
  return weights + scratch + cache * (double(p.max_batch) + 3);
}

// On a GPU: the target with a cache per batch slot, and the draft with one, in device memory (the CPU model stays on
// the host as the reference).
double gpu_bytes(const ServingParams& p) {
  const ModelShape s = model_shape(p);
  double bytes = double(cuda_model_bytes(s, s.layers, p.max_batch, std::max(p.max_batch, p.k + 1)));
  if (p.draft) bytes += double(cuda_model_bytes(s, p.draft_layers, 1, p.k + 1));
  return bytes;
}

// Work: every policy at each curve rate serves every request (static pads up to the longest: counted 3x), plus the
// speculative pairs; and the stream itself takes requests / rate seconds of wall time per run.
double cpu_run_seconds(const ServingParams& p) {
  const ModelShape s = model_shape(p);
  const double token_flop = 2.0 * double(matmul_parameters(s, s.layers));
  const double tokens =
      double(p.requests) * (double(p.prompt) + 3 * clamped_geometric_mean(p.mean_output, p.max_output));
  const double spec_tokens = p.draft ? 3.0 * double(p.spec_requests) * double(p.max_output) : 0.0;
  double seconds = estimated_seconds(token_flop * (13 * tokens + spec_tokens), kTiledLoopGflopsPerThread, 1);
  for (double fraction : kCurveRateFractions) seconds += 3 * double(p.requests) / (p.rate * fraction);
  seconds += 4 * double(p.requests) / (p.rate * kCurveRateFractions[0]);  // adaptive's knobs
  return seconds;
}

void check_lengths(const ServingParams& p) {
  const std::int64_t prompt = p.prompt, max_output = p.max_output, context = p.context;
  if (prompt >= context)
    throw BadInput(fmt::format(
        "parameter 'prompt': value '{}' is not allowed: a prompt must be shorter than the model's context of {} "
        "tokens, leaving room for at least one generated token; allowed: 1 to {}",
        prompt, context, context - 1));
  if (prompt + max_output > context)
    throw BadInput(fmt::format(
        "parameter 'max_output': value '{}' is not allowed with prompt = {}: prompt + output must fit the model's "
        "context of {} tokens; allowed: 1 to {}",
        max_output, prompt, context, context - prompt));
  if (p.mean_output > double(max_output))
    throw BadInput(
        fmt::format("parameter 'mean_output': value '{}' is not allowed above max_output = {}; allowed: "
                    "1 to {}",
                    p.mean_output_text, max_output, max_output));
}

}  // namespace

void ServingLesson::check_params(const ServingParams& p, BackendKind) const {
  const ModelShape s = model_shape(p);
  if (s.d_model % s.heads != 0)
    throw BadInput(fmt::format(
        "parameter 'd_model': value '{}' is not allowed with heads = {}: each head takes d_model / heads columns; "
        "allowed: a multiple of {}",
        s.d_model, s.heads, s.heads));
  if (p.draft && p.draft_layers >= s.layers)
    throw BadInput(fmt::format(
        "parameter 'draft_layers': value '{}' is not allowed with layers = {}: the draft must be smaller than the "
        "target model it is cut from; allowed: 1 to {}{}",
        p.draft_layers, s.layers, s.layers - 1,
        s.layers == 1 ? " (none: with a one-layer target, set draft = off or raise layers)" : ""));
  check_lengths(p);
}

RunBudget ServingLesson::budget_of(const ServingParams& p, BackendKind backend) const {
  const ModelShape s = model_shape(p);
  RunBudget budget;
  budget.host_bytes = run_bytes(p);
  if (backend == BackendKind::Cuda) budget.device_bytes = gpu_bytes(p);
  budget.sizes = fmt::format(
      "parameters 'd_model' = {}, 'layers' = {}, 'context' = {}, 'max_batch' = {} (weights, a KV cache per batch "
      "slot at the whole context, scratch)",
      s.d_model, s.layers, s.context, p.max_batch);
  budget.cpu_seconds = cpu_run_seconds(p);
  budget.max_minutes = p.max_minutes;
  budget.cpu_work = fmt::format(
      "3 policies x {} rates x {} requests of 2 x {} FLOP per token, at {:g} GFLOP/s, plus the stream's "
      "own arrival time at each rate",
      std::size(kCurveRateFractions), p.requests, matmul_parameters(s, s.layers), kTiledLoopGflopsPerThread);
  budget.smaller = "requests, prompt, mean_output, d_model or layers, or raise rate";
  return budget;
}

std::vector<Timeline> ServingLesson::theory_timelines(const ParamValues& values) const {
  return schedules_in_token_steps(read_params(values));
}

std::vector<Timeline> serving::schedules_in_token_steps(const ServingParams& p) {
  const int max_batch = p.max_batch;
  std::vector<int> lengths;
  for (const Request& r : make_stream(stream_spec(p))) lengths.push_back(r.output_tokens);
  auto empty = [&](const char* name) {
    Timeline t;
    t.name = name;
    t.source = "theory";
    t.mode = "simulated";
    t.time_unit = "token steps";
    for (int s = 0; s < max_batch; ++s) t.lanes.push_back(fmt::format("slot {}", s));
    return t;
  };
  Timeline fixed = empty("static batching, every request waiting at the start (theory)");
  double start = 0;
  for (std::size_t first = 0; first < lengths.size(); first += std::size_t(max_batch)) {
    const std::size_t last = std::min(lengths.size(), first + std::size_t(max_batch));
    const int longest =
        *std::max_element(lengths.begin() + std::ptrdiff_t(first), lengths.begin() + std::ptrdiff_t(last));
    for (std::size_t i = first; i < last; ++i) {
      const int slot = int(i - first), id = int(i);
      fixed.spans.push_back({slot, start, start + lengths[i], "decode", id, 0, fmt::format("r{}", id)});
      if (lengths[i] < longest) fixed.spans.push_back({slot, start + lengths[i], start + longest, "pad", id, 0, "pad"});
    }
    start += longest;
  }
  Timeline continuous = empty("continuous batching, every request waiting at the start (theory)");
  std::vector<double> free_at(std::size_t(max_batch), 0.0);
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const auto slot = std::size_t(std::min_element(free_at.begin(), free_at.end()) - free_at.begin());
    const int id = int(i);
    continuous.spans.push_back(
        {int(slot), free_at[slot], free_at[slot] + lengths[i], "decode", id, 0, fmt::format("r{}", id)});
    free_at[slot] += lengths[i];
  }
  return {fixed, continuous};
}

std::shared_ptr<const ServingSteps> ServingLesson::step_data_of(const ServingParams& p) const {
  auto steps = std::make_shared<ServingSteps>();
  steps->theory = theory_of(p);
  for (const Request& r : make_stream(stream_spec(p))) steps->output_tokens.push_back(r.output_tokens);
  steps->max_batch = p.max_batch;
  steps->schedules = schedules_in_token_steps(p);
  return steps;
}

}  // namespace dlsys
