// The serving lesson's parameters, the one place it refuses them, its closed forms and its simulated schedules.
#include "lessons/serving/serving_lesson.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/backend.h"
#include "engine/host_memory.h"
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
      {.key = "rate",
       .label = "arrival rate",
       .type = ParamType::Real,
       .default_text = "200",
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

namespace serving {

ModelShape model_shape(const ParamValues& p) {
  ModelShape s;
  s.d_model = int(p.integer("d_model"));
  s.layers = int(p.integer("layers"));
  s.heads = int(p.integer("heads"));
  s.mlp_dim = 4 * s.d_model;
  s.context = int(p.integer("context"));
  return s;
}

StreamSpec stream_spec(const ParamValues& p) {
  StreamSpec s;
  s.requests = int(p.integer("requests"));
  s.rate_per_s = p.real("rate");
  s.prompt_tokens = int(p.integer("prompt"));
  s.mean_output = p.real("mean_output");
  s.max_output = int(p.integer("max_output"));
  s.vocab = model_shape(p).vocab;
  s.seed = std::uint64_t(p.integer("seed"));
  return s;
}

ServingTheory serving_theory(const ParamValues& p) {
  const ModelShape s = model_shape(p);
  ServingTheory t;
  const double prompt = double(p.integer("prompt")), batch = double(p.integer("max_batch"));
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
  t.mean_output_tokens = clamped_geometric_mean(p.real("mean_output"), int(p.integer("max_output")));
  std::vector<int> lengths;
  for (const Request& r : make_stream(stream_spec(p))) lengths.push_back(r.output_tokens);
  t.expected_static_padding = static_padding_fraction(lengths, int(p.integer("max_batch")));
  t.draft_layers = int(p.integer("draft_layers"));
  t.target_layers = s.layers;
  t.k = int(p.integer("k"));
  t.quiet_scale = kQuietScale;
  return t;
}

}  // namespace serving

namespace {

// Bytes the run holds at once: weights, the scratch of two models, a cache per batch slot and the speculative pair.
double run_bytes(const ParamValues& p) {
  const ModelShape s = model_shape(p);
  const double weights = 4.0 * double(parameter_count(s));
  const double rows = std::max<double>(s.context, double(p.integer("max_batch")));
  const double scratch = 2 * 4.0 * rows * (7.0 * s.d_model + s.mlp_dim + s.vocab);
  const double cache = double(kv_bytes_per_token(s, s.layers)) * s.context;
  return weights + scratch + cache * (double(p.integer("max_batch")) + 3);
}

void check_lengths(const ParamValues& p) {
  const std::int64_t prompt = p.integer("prompt"), max_output = p.integer("max_output"), context = p.integer("context");
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
  if (p.real("mean_output") > double(max_output))
    throw BadInput(
        fmt::format("parameter 'mean_output': value '{}' is not allowed above max_output = {}; allowed: "
                    "1 to {}",
                    p.text("mean_output"), max_output, max_output));
}

}  // namespace

void ServingLesson::validate(const ParamValues& p, BackendKind) const {
  const ModelShape s = model_shape(p);
  if (s.d_model % s.heads != 0)
    throw BadInput(fmt::format(
        "parameter 'd_model': value '{}' is not allowed with heads = {}: each head takes d_model / heads columns; "
        "allowed: a multiple of {}",
        s.d_model, s.heads, s.heads));
  if (p.text("draft") == "on" && p.integer("draft_layers") >= s.layers)
    throw BadInput(fmt::format(
        "parameter 'draft_layers': value '{}' is not allowed with layers = {}: the draft must be smaller than the "
        "target model it is cut from; allowed: 1 to {}{}",
        p.integer("draft_layers"), s.layers, s.layers - 1,
        s.layers == 1 ? " (none: with a one-layer target, set draft = off or raise layers)" : ""));
  check_lengths(p);
}

void ServingLesson::check_run_resources(const ParamValues& p, BackendKind backend) const {
  const ModelShape s = model_shape(p);
  const double needed = run_bytes(p);
  const HostMemory host = host_memory();
  if (!host.fits(needed))
    throw BadInput(fmt::format(
        "parameters 'd_model' = {}, 'layers' = {}, 'context' = {}, 'max_batch' = {}: the run needs {} (weights, a "
        "KV cache per batch slot, scratch) but only {} of host memory is available; lower them",
        s.d_model, s.layers, s.context, p.integer("max_batch"), format_bytes_both(needed),
        format_bytes_both(host.free_bytes)));
  // On a GPU: the target with a cache per batch slot, and the draft with one, in device memory (the CPU model stays
  // on the host as the reference).
  if (backend == BackendKind::Cuda) {
    const int k = int(p.integer("k")), max_batch = int(p.integer("max_batch"));
    double device_needed = double(cuda_model_bytes(s, s.layers, max_batch, std::max(max_batch, k + 1)));
    if (p.text("draft") == "on") device_needed += double(cuda_model_bytes(s, int(p.integer("draft_layers")), 1, k + 1));
    const DeviceMemory device = device_memory();
    if (!device.fits(device_needed))
      throw BadInput(fmt::format(
          "parameters 'd_model' = {}, 'layers' = {}, 'context' = {}, 'max_batch' = {}: the GPU model needs {} of GPU "
          "memory (weights, a KV cache per batch slot at the whole context, scratch) but GPU 0 has {} free; lower "
          "them",
          s.d_model, s.layers, s.context, max_batch, format_bytes_both(device_needed),
          format_bytes_both(device.free_bytes)));
  }
  // Work: every policy at each curve rate serves every request (static pads up to the longest: counted 3x), plus the
  // speculative pairs; and the stream itself takes requests / rate seconds of wall time per run.
  const double token_flop = 2.0 * double(matmul_parameters(s, s.layers));
  const double tokens =
      double(p.integer("requests")) *
      (double(p.integer("prompt")) + 3 * clamped_geometric_mean(p.real("mean_output"), int(p.integer("max_output"))));
  const double spec_tokens =
      p.text("draft") == "on" ? 3.0 * double(p.integer("spec_requests")) * double(p.integer("max_output")) : 0.0;
  double seconds = estimated_seconds(token_flop * (13 * tokens + spec_tokens), kTiledLoopGflopsPerThread, 1);
  for (double fraction : kCurveRateFractions)
    seconds += 3 * double(p.integer("requests")) / (p.real("rate") * fraction);
  seconds += 4 * double(p.integer("requests")) / (p.real("rate") * kCurveRateFractions[0]);  // adaptive's knobs
  refuse_if_longer_than_limit(
      p, seconds,
      fmt::format("3 policies x {} rates x {} requests of 2 x {} FLOP per token, at {:g} GFLOP/s, plus the stream's "
                  "own arrival time at each rate",
                  std::size(kCurveRateFractions), p.integer("requests"), matmul_parameters(s, s.layers),
                  kTiledLoopGflopsPerThread),
      "requests, prompt, mean_output, d_model or layers, or raise rate");
}

std::shared_ptr<const LessonValues> ServingLesson::theory(const ParamValues& p) const {
  return make_values(serving_theory(p));
}

std::vector<Timeline> ServingLesson::theory_timelines(const ParamValues& p) const {
  const int max_batch = int(p.integer("max_batch"));
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

std::shared_ptr<const StepData> ServingLesson::step_data(const ParamValues& p) const {
  auto steps = std::make_shared<ServingSteps>();
  steps->theory = serving_theory(p);
  for (const Request& r : make_stream(stream_spec(p))) steps->output_tokens.push_back(r.output_tokens);
  steps->max_batch = int(p.integer("max_batch"));
  steps->schedules = theory_timelines(p);
  return steps;
}

}  // namespace dlsys
