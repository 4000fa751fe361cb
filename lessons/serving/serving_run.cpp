// The serving lesson's run: the real model's passes on the roofline, one sequence at the end of its context, the
// stream under the three policies (and at lower rates for the curves), the KV budget's count, and speculative
// decoding against the target alone.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>

#include "engine/backend.h"
#include "engine/measure.h"
#include "kernels/serving/cpu_backend.h"
#include "kernels/serving/scheduler.h"
#include "kernels/serving/serving_devices.h"
#include "kernels/serving/speculative.h"
#include "lessons/common/run_plan.h"
#include "lessons/serving/serving_lesson.h"

namespace dlsys {

using namespace serving;

namespace {

// The run's parts weigh about what they take, in serve runs of the stream (one policy at one rate): the knobs are four
// such runs at a quarter of the rate.
constexpr double kBuildWeight = 0.25, kPassesWeight = 0.5, kContextWeight = 0.5, kSpeculativeWeight = 1.5,
                 kCpuMatchWeight = 1;
constexpr int kPolicies = 3, kKnobRuns = 4;

double plan_weight(const ServingParams& p, const ServingDevice& device) {
  return kBuildWeight + kPassesWeight + kContextWeight + kPolicies * double(std::size(kCurveRateFractions)) +
         kKnobRuns + (p.draft ? kSpeculativeWeight : 0) + (device.compares_with_cpu_model() ? kCpuMatchWeight : 0);
}

// Nearest-rank percentile (q in (0, 1]) of `values`; 0 for none.
double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = std::size_t(std::ceil(q * double(values.size())));
  return values[std::min(values.size(), std::max<std::size_t>(rank, 1)) - 1];
}

PolicyMeasured summarize(const ServeResult& r, double rate, int max_batch, const std::vector<int>& lengths) {
  PolicyMeasured m;
  m.policy = policy_name(r.policy);
  m.rate = rate;
  std::vector<double> ttft, tpot, latency;
  for (const RequestRecord& q : r.requests) {
    ttft.push_back(1e3 * (q.first_token_s - q.arrival_s));
    latency.push_back(1e3 * (q.finish_s - q.arrival_s));
    if (q.tokens.size() > 1) tpot.push_back(1e3 * (q.last_token_s - q.first_token_s) / double(q.tokens.size() - 1));
  }
  m.ttft_ms_p50 = percentile(ttft, 0.5);
  m.ttft_ms_p99 = percentile(ttft, 0.99);
  m.tpot_ms_p50 = percentile(tpot, 0.5);
  m.latency_ms_p50 = percentile(latency, 0.5);
  m.latency_ms_p99 = percentile(latency, 0.99);
  m.span_s = r.last_finish_s - r.first_arrival_s;
  m.generated_tokens = r.generated_tokens;
  m.tokens_per_s = m.span_s > 0 ? double(r.generated_tokens) / m.span_s : 0;
  m.padding_fraction = r.slot_tokens > 0 ? double(r.padded_tokens) / double(r.slot_tokens) : 0;
  if (r.policy == Policy::Static) m.padding_fraction_closed_form = static_padding_fraction(lengths, max_batch);
  double rows = 0;
  for (const Iteration& it : r.iterations) {
    if (it.prefill) {
      ++m.prefills;
    } else {
      ++m.decode_steps;
      rows += it.rows;
    }
  }
  m.mean_rows_per_step = m.decode_steps ? rows / m.decode_steps : 0;
  m.peak_batch = r.peak_batch;
  m.peak_kv_tokens = r.peak_kv_tokens;
  return m;
}

// Lanes = batch slots; a request's prefill, its decode, and (static, adaptive) the padding until its batch ended.
Timeline gantt(const ServeResult& r, int max_batch, double rate) {
  Timeline t;
  t.name = fmt::format("{} batching at {:g} requests/s (measured)", policy_name(r.policy), rate);
  t.source = "measured";
  t.mode = "concurrent";
  t.time_unit = "ms";
  for (int s = 0; s < max_batch; ++s) t.lanes.push_back(fmt::format("slot {}", s));
  for (const RequestRecord& q : r.requests) {
    const std::string label = fmt::format("r{}", q.id);
    t.spans.push_back({q.slot, 1e3 * q.start_s, 1e3 * q.first_token_s, "prefill", q.id, 0, label});
    if (q.last_token_s > q.first_token_s)
      t.spans.push_back({q.slot, 1e3 * q.first_token_s, 1e3 * q.last_token_s, "decode", q.id, 0, label});
    if (q.finish_s > q.last_token_s)
      t.spans.push_back({q.slot, 1e3 * q.last_token_s, 1e3 * q.finish_s, "pad", q.id, 0, "pad"});
  }
  return t;
}

// Per decode step: the KV tokens the active sequences hold, and (contiguous caches) what reserving the whole context
// for each of them takes.
std::vector<Series> kv_series(const ServeResult& r, int context) {
  const std::string policy = policy_name(r.policy);
  Series held{"kv_tokens_" + policy,
              policy + ": KV tokens held (measured)",
              "measured",
              "time",
              "ms",
              "KV tokens",
              "tokens",
              {}};
  Series reserved{"kv_reserved_" + policy,
                  policy + ": reserved, whole context per sequence",
                  "measured",
                  "time",
                  "ms",
                  "KV tokens",
                  "tokens",
                  {}};
  for (const Iteration& it : r.iterations)
    if (!it.prefill) {
      const double x = 1e3 * it.start_s, h = double(it.kv_tokens), v = double(it.rows) * context;
      held.points.push_back({x, h, h, h});
      reserved.points.push_back({x, v, v, v});
    }
  return {held, reserved};
}

// Step 1: prefill of one prompt, decode at batch 1 and at max_batch, each the median of repeated passes, each pass
// after `before_pass` (the weights flushed from the CPU's caches); the roofs come once the bandwidth is known.
std::vector<RooflinePoint> measure_roofline(ModelBackend& model, const std::vector<Request>& stream, int max_batch,
                                            const std::function<void()>& before_pass) {
  const std::vector<int>& prompt = stream.front().prompt;
  const double token_flop = 2.0 * double(matmul_parameters(model.shape(), model.layers()));
  for (int slot = 0; slot < max_batch; ++slot) model.prefill(slot, prompt);
  std::vector<RooflinePoint> out;
  auto point = [&](std::string name, double tokens, const TimingStats& t) {
    RooflinePoint p{std::move(name), tokens, 2 * tokens / 4, t.median_us / 1e3, 0, 0};
    p.gflops = tokens * token_flop / (t.median_us * 1e3);
    out.push_back(p);
  };
  const TimingStats prefill = measure([&] { model.prefill(0, prompt); }, {1, 7, 2e6}, before_pass);
  point(fmt::format("prefill, {} tokens", prompt.size()), double(prompt.size()), prefill);
  std::vector<int> next;
  std::vector<int> batches{1};
  if (max_batch > 1) batches.push_back(max_batch);
  for (int batch : batches) {
    std::vector<SlotRow> rows;
    for (int slot = 0; slot < batch; ++slot) rows.push_back({slot, 1, std::int64_t(prompt.size())});
    const TimingStats t = measure([&] { model.forward(rows, next); }, {2, 21, 2e6}, before_pass);
    point(fmt::format("decode, batch {}", batch), double(batch), t);
  }
  return out;
}

// Step 2: a prompt of 5/6 of the context (the course's 1,000 of 1,200), then tokens to the end of the context, each
// step timed: the KV bytes a step reads grow by one token's worth every step.
void measure_context(ModelBackend& model, ServingMeasured& m, const Request& sample) {
  const ModelShape& s = model.shape();
  const int prompt_n = std::max(1, s.context * 5 / 6);
  std::vector<int> prompt;
  for (int i = 0; i < prompt_n; ++i) prompt.push_back(sample.prompt[std::size_t(i) % sample.prompt.size()]);
  constexpr int slot = 0;
  int token = model.prefill(slot, prompt);
  std::vector<int> next;
  m.context_prompt = prompt_n;
  const std::int64_t per_token = kv_bytes_per_token(s, s.layers);
  while (model.length(slot) < s.context) {
    const std::int64_t attended = model.length(slot) + 1;  // the cache and the token itself
    // Repeated at the same position (the cache row is rewritten with the same values): the median of 3, no warm-up
    // (the previous position's calls warmed this one). Each call after the first rewinds the one before it.
    bool rewind = false;
    const auto rewind_the_last_call = [&] {
      if (rewind) model.set_length(slot, model.length(slot) - 1);
      rewind = true;
    };
    const auto call = [&] { model.forward({{slot, token, model.length(slot)}}, next); };
    const TimingStats step = measure(call, {.warmup = 0, .repeats = 3}, rewind_the_last_call);
    token = next.front();
    m.context_step_ms.push_back(step.median_us / 1e3);
    m.context_attended.push_back(attended);
    m.context_kv_bytes.push_back(attended * per_token);
  }
}

void count_kv_fit(const ServingParams& p, const std::vector<Request>& stream, ServingMeasured& m, const ModelShape& s) {
  m.kv_budget_bytes = std::int64_t(p.kv_budget_bytes);
  m.kv_bytes_per_token = kv_bytes_per_token(s, s.layers);
  m.block_tokens = p.block_tokens;
  m.contiguous_fit = m.kv_budget_bytes / (m.kv_bytes_per_token * s.context);
  std::int64_t used = 0;
  // The stream's requests in arrival order, over again if the budget outlasts them (at most a million sequences).
  for (std::size_t i = 0; i < std::size_t(1) << 20; ++i) {
    const Request& r = stream[i % stream.size()];
    const std::int64_t tokens = std::int64_t(r.prompt.size()) + r.output_tokens;
    const std::int64_t blocks = (tokens + m.block_tokens - 1) / m.block_tokens;
    used += blocks * m.block_tokens * m.kv_bytes_per_token;
    if (used > m.kv_budget_bytes) break;
    ++m.paged_fit;
  }
}

SpeculativeMeasured measure_speculative(ModelBackend& target, ModelBackend& draft, const std::vector<Request>& stream,
                                        int count, int output_tokens, int k, RunControl& control) {
  SpeculativeMeasured m{.k = k, .draft_layers = draft.layers(), .target_layers = target.layers()};
  m.quiet_scale = kQuietScale;
  m.identical = true;
  std::int64_t accepted = 0, rejections = 0, passes = 0, generated = 0;
  for (int i = 0; i < count; ++i) {
    control.check_cancelled();
    const Request& r = stream[std::size_t(i) % stream.size()];
    Stopwatch greedy_watch;
    const std::vector<int> greedy = greedy_generate(target, 0, r.prompt, output_tokens);
    m.greedy_ms += greedy_watch.elapsed_us() / 1e3;
    Stopwatch spec_watch;
    const SpeculativeResult spec = speculative_generate(target, draft, r.prompt, output_tokens, k);
    m.speculative_ms += spec_watch.elapsed_us() / 1e3;
    m.identical = m.identical && spec.tokens == greedy;
    accepted += spec.accepted;
    rejections += spec.rejections;
    passes += spec.target_passes;
    generated += std::int64_t(spec.tokens.size()) - 1;
  }
  m.requests = count;
  m.accepted = accepted;
  m.rejections = rejections;
  m.target_passes = passes;
  m.acceptance_rate = acceptance_rate(accepted, rejections);
  m.tokens_per_target_pass = passes ? double(generated) / double(passes) : 0;
  m.expected_tokens_per_pass = expected_tokens_per_pass(m.acceptance_rate, k);
  m.speculative_speedup = m.speculative_ms > 0 ? m.greedy_ms / m.speculative_ms : 0;
  return m;
}

std::vector<Series> roofline_series(const ServingMeasured& m, const char* roof_label) {
  std::vector<Series> out;
  Series roof{"roof", roof_label, "theory", "FLOP per byte (fp32 weights)", "FLOP/B", "GFLOP/s", "GFLOP/s", {}};
  for (double x = 0.1; x <= 2000; x *= 1.25) {
    const double y = std::min(m.peak_gflops, m.bandwidth_gbps * x);
    roof.points.push_back({x, y, y, y});
  }
  out.push_back(roof);
  const char* ids[] = {"prefill_point", "decode_b1_point", "decode_batch_point"};
  for (std::size_t i = 0; i < m.roofline.size() && i < 3; ++i) {
    const RooflinePoint& p = m.roofline[i];
    out.push_back({ids[i],
                   p.name + " (measured)",
                   "measured",
                   "FLOP per byte (fp32 weights)",
                   "FLOP/B",
                   "GFLOP/s",
                   "GFLOP/s",
                   {{p.intensity_fp32, p.gflops, p.gflops, p.gflops}}});
  }
  return out;
}

std::vector<Series> context_series(const ServingMeasured& m) {
  Series bytes{
      "context_kv_bytes", "KV bytes read per step (theory)", "theory", "keys attended", "tokens", "KV read", "MB", {}};
  Series time{
      "context_step_ms", "decode step (measured)", "measured", "keys attended", "tokens", "step time", "ms", {}};
  for (std::size_t i = 0; i < m.context_attended.size(); ++i) {
    const double x = double(m.context_attended[i]), mb = double(m.context_kv_bytes[i]) / 1e6;
    bytes.points.push_back({x, mb, mb, mb});
    time.points.push_back({x, m.context_step_ms[i], m.context_step_ms[i], m.context_step_ms[i]});
  }
  return {bytes, time};
}

std::vector<Series> curve_series(const ServingMeasured& m) {
  std::vector<Series> out;
  for (const char* policy : {"static", "adaptive", "continuous"})
    for (const char* q : {"p50", "p99"}) {
      Series s{fmt::format("curve_{}_{}", q, policy),
               fmt::format("{} {} (measured)", policy, q),
               "measured",
               "throughput",
               "tokens/s",
               "latency",
               "ms",
               {}};
      for (const PolicyMeasured& c : m.curve)
        if (c.policy == policy) {
          const double y = std::string(q) == "p50" ? c.latency_ms_p50 : c.latency_ms_p99;
          s.points.push_back({c.tokens_per_s, y, y, y});
        }
      std::sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
      out.push_back(s);
    }
  return out;
}

// The CPU model's greedy tokens for every request of the stream against `reference` (another device's): the share
// equal.
double cpu_match_fraction(Model& model, MemoryLedger& ledger, const std::vector<Request>& stream,
                          const std::vector<std::vector<int>>& reference, RunControl& control) {
  CpuBackend cpu(model, ledger, 1);
  std::size_t equal = 0;
  for (std::size_t i = 0; i < stream.size() && i < reference.size(); ++i) {
    control.check_cancelled();
    equal += greedy_generate(cpu, 0, stream[i].prompt, stream[i].output_tokens) == reference[i] ? 1 : 0;
  }
  return stream.empty() ? 1.0 : double(equal) / double(stream.size());
}

Series speculative_theory_series(int k) {
  Series s{"spec_expected",
           fmt::format("(1 - a^(k+1)) / (1 - a), k = {} (theory)", k),
           "theory",
           "acceptance rate a",
           "",
           "tokens per target pass",
           "",
           {}};
  for (int i = 0; i <= 50; ++i) {
    const double a = i / 50.0, y = expected_tokens_per_pass(a, k);
    s.points.push_back({a, y, y, y});
  }
  return s;
}

// Marks m.tokens_identical false where a run's tokens differ from the first run's (every run must match it).
void check_tokens(const ServeResult& served, const std::vector<std::vector<int>>& reference, ServingMeasured& m) {
  for (std::size_t i = 0; i < served.requests.size(); ++i)
    m.tokens_identical = m.tokens_identical && served.requests[i].tokens == reference[i];
}

// Step 3: the three policies at each fraction of the chosen rate, the chosen rate last (its runs are the ones the Gantt
// charts and the headline numbers show, returned static, adaptive, continuous). `reference` gets the first run's
// tokens per request.
std::vector<ServeResult> serve_policies(ModelBackend& model, const ServingParams& p, const std::vector<int>& lengths,
                                        ServingMeasured& m, std::vector<std::vector<int>>& reference, RunPlan& plan) {
  const int max_batch = p.max_batch;
  const PolicySpec specs[] = {{Policy::Static, max_batch, 0},
                              {Policy::Adaptive, max_batch, p.delay_ms / 1e3},
                              {Policy::Continuous, max_batch, 0}};
  static_assert(std::size(specs) == kPolicies);
  const auto cancelled = [&] { return plan.control().cancel_requested(); };
  std::vector<ServeResult> at_rate;
  for (double fraction : kCurveRateFractions) {
    StreamSpec spec = stream_spec(p);
    spec.rate_per_s = p.rate * fraction;
    const std::vector<Request> swept = make_stream(spec);
    for (const PolicySpec& policy : specs) {
      plan.start(fmt::format("{} batching at {:g} requests/s", policy_name(policy.policy), spec.rate_per_s));
      ServeResult served = serve(model, swept, policy, cancelled);
      m.curve.push_back(summarize(served, spec.rate_per_s, max_batch, lengths));
      if (reference.empty())
        for (const RequestRecord& q : served.requests) reference.push_back(q.tokens);
      check_tokens(served, reference, m);
      if (fraction == 1.0) at_rate.push_back(std::move(served));
    }
  }
  return at_rate;
}

// Step 4's knobs: the delay from 0 to 4x the chosen one, and half the batch, at a quarter of the rate.
void measure_knobs(ModelBackend& model, const ServingParams& p, const std::vector<int>& lengths,
                   const std::vector<std::vector<int>>& reference, ServingMeasured& m, RunPlan& plan) {
  StreamSpec spec = stream_spec(p);
  spec.rate_per_s = p.rate * kCurveRateFractions[0];
  const std::vector<Request> slow = make_stream(spec);
  const int max_batch = p.max_batch;
  const double delay_s = p.delay_ms / 1e3;
  const PolicySpec knobs[] = {{Policy::Adaptive, max_batch, 0},
                              {Policy::Adaptive, max_batch, delay_s},
                              {Policy::Adaptive, max_batch, 4 * delay_s},
                              {Policy::Adaptive, std::max(1, max_batch / 2), delay_s}};
  static_assert(std::size(knobs) == kKnobRuns);
  const auto cancelled = [&] { return plan.control().cancel_requested(); };
  for (const PolicySpec& knob : knobs) {
    plan.start(fmt::format("adaptive batching, max_batch {}, delay {:g} ms", knob.max_batch, 1e3 * knob.delay_s));
    const ServeResult served = serve(model, slow, knob, cancelled);
    const PolicyMeasured s = summarize(served, spec.rate_per_s, knob.max_batch, lengths);
    check_tokens(served, reference, m);
    m.adaptive_knobs.push_back(
        {knob.max_batch, 1e3 * knob.delay_s, spec.rate_per_s, s.tokens_per_s, s.latency_ms_p50, s.latency_ms_p99});
  }
}

// The headline numbers from the runs at the chosen rate (m.policies: static, adaptive, continuous), and whether the
// stream is the default one (the course's worked numbers hold only for it).
void set_headline(ServingMeasured& m, const ServingParams& p, const ServingParams& defaults) {
  const PolicyMeasured& fixed = m.policies[0];
  const PolicyMeasured& chosen = m.policy == "static"     ? m.policies[0]
                                 : m.policy == "adaptive" ? m.policies[1]
                                                          : m.policies[2];
  m.ttft_ms_p50 = chosen.ttft_ms_p50;
  m.tpot_ms_p50 = chosen.tpot_ms_p50;
  m.latency_ms_p50 = chosen.latency_ms_p50;
  m.latency_ms_p99 = chosen.latency_ms_p99;
  m.tokens_per_s = chosen.tokens_per_s;
  m.padding_fraction = m.policy == "adaptive" ? chosen.padding_fraction : fixed.padding_fraction;
  m.continuous_over_static = fixed.tokens_per_s > 0 ? m.policies[2].tokens_per_s / fixed.tokens_per_s : 0;
  m.throughput_ratio_bar = kThroughputRatioBar;
  m.meets_throughput_bar = m.continuous_over_static >= kThroughputRatioBar && m.tokens_identical;
  const auto stream_of = [](const ServingParams& s) {
    return std::make_tuple(s.max_batch, s.rate, s.requests, s.prompt, s.mean_output, s.max_output, s.d_model, s.layers,
                           s.heads, s.context, s.seed);
  };
  m.default_stream = stream_of(p) == stream_of(defaults);
}

std::vector<Series> knob_series(const ServingMeasured& m) {
  std::vector<Series> out;
  for (const char* q : {"p50", "p99"}) {
    Series knobs{fmt::format("adaptive_knobs_{}", q),
                 fmt::format("adaptive {}, knobs varied (measured)", q),
                 "measured",
                 "throughput",
                 "tokens/s",
                 "latency",
                 "ms",
                 {}};
    for (const KnobPoint& point : m.adaptive_knobs) {
      const double y = std::string(q) == "p50" ? point.latency_ms_p50 : point.latency_ms_p99;
      knobs.points.push_back({point.tokens_per_s, y, y, y});
    }
    out.push_back(std::move(knobs));
  }
  return out;
}

// Step 6's measured point beside its theory curve.
std::vector<Series> speculative_series(const SpeculativeMeasured& spec) {
  const double a = spec.acceptance_rate, y = spec.tokens_per_target_pass;
  return {speculative_theory_series(spec.k),
          {"spec_measured",
           "measured tokens per target pass",
           "measured",
           "acceptance rate a",
           "",
           "tokens per target pass",
           "",
           {{a, y, y, y}}}};
}

// What the run did, in the notes beside its numbers: the serving loop, the device's own, the draft model.
void add_notes(RunResult& result, const ServingMeasured& m, const ServingDevice& device, int draft_layers, int layers) {
  result.backend.repeats = 1;
  result.backend.notes.push_back(
      "seeded Poisson arrivals on the real clock; one scheduler thread (one BLAS thread) runs the model pass by pass; "
      "static and "
      "adaptive batches compute finished rows as padding until their longest request is done");
  for (std::string& note : device.notes(m.cpu_match_fraction.value_or(0)))
    result.backend.notes.push_back(std::move(note));
  if (m.speculative)
    result.backend.notes.push_back(fmt::format(
        "draft: the target's first {} of {} layers (its embeddings and head shared); the target's later layers have "
        "output projections scaled by {:g}",
        draft_layers, layers, kQuietScale));
}

}  // namespace

RunResult ServingLesson::run_with(const ServingParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const ModelShape shape = model_shape(p);
  const int max_batch = p.max_batch;
  const int draft_layers = std::min(p.draft_layers, shape.layers);
  const std::unique_ptr<ServingDevice> device = make_serving_device(ctx.backend, ctx.ledger);
  result.backend.timer = device->timer();

  RunPlan plan(ctx.control, plan_weight(p, *device));
  plan.start("building the model", kBuildWeight);
  Weights weights = make_weights(shape, ctx.ledger, std::uint32_t(p.seed), draft_layers, kQuietScale);
  const int k = p.k;
  const int rows = std::max(max_batch, k + 1);
  // The CPU model always: it serves on the CPU, and elsewhere it is the reference the device's tokens are compared
  // with.
  Model target(shape, weights, shape.layers, ctx.ledger, rows);
  const std::unique_ptr<ModelBackend> served_model = device->model(target, max_batch);
  const std::vector<Request> stream = make_stream(stream_spec(p));
  std::vector<int> lengths;
  for (const Request& r : stream) lengths.push_back(r.output_tokens);

  ServingMeasured m;
  m.policy = policy_name(p.policy);
  m.device = served_model->device();
  m.peak_gflops = device->info().peak_fp32_gflops;
  plan.start("prefill and decode passes (step 1)", kPassesWeight);
  const double bandwidth_before_gbps = device->roof_bandwidth_gbps();
  bool flushed = false;
  m.roofline = measure_roofline(*served_model, stream, max_batch, [&] { flushed = device->evict_weights(weights); });
  m.weights_flushed = flushed;
  // The better of a probe before the passes and one after: a burst of other work during either cannot lower the roof
  // under the points.
  m.bandwidth_gbps = std::max(bandwidth_before_gbps, device->roof_bandwidth_gbps());
  for (RooflinePoint& point : m.roofline)
    point.roof_gflops = std::min(m.peak_gflops, m.bandwidth_gbps * point.intensity_fp32);
  plan.start("one sequence to the end of its context (step 2)", kContextWeight);
  measure_context(*served_model, m, stream.front());

  m.tokens_identical = true;
  std::vector<std::vector<int>> reference;
  const std::vector<ServeResult> at_rate = serve_policies(*served_model, p, lengths, m, reference, plan);
  measure_knobs(*served_model, p, lengths, reference, m, plan);
  for (const ServeResult& served : at_rate) {
    m.policies.push_back(summarize(served, p.rate, max_batch, lengths));
    result.timelines.push_back(gantt(served, max_batch, p.rate));
    for (Series& s : kv_series(served, shape.context)) result.series.push_back(std::move(s));
  }
  set_headline(m, p, read_params(ParamValues::defaults(params())));
  count_kv_fit(p, stream, m, shape);
  m.peak_kv_tokens_continuous = m.policies[2].peak_kv_tokens;

  if (p.draft) {
    plan.start("speculative decoding against the target alone", kSpeculativeWeight);
    Model draft(shape, weights, draft_layers, ctx.ledger, k + 1);
    const std::unique_ptr<ModelBackend> draft_model = device->model(draft, 1);
    m.speculative =
        measure_speculative(*served_model, *draft_model, stream, p.spec_requests, p.max_output, k, ctx.control);
    m.acceptance_rate = m.speculative->acceptance_rate;
    m.speculative_speedup = m.speculative->speculative_speedup;
    for (Series& s : speculative_series(*m.speculative)) result.series.push_back(std::move(s));
  }
  for (const auto& series :
       {roofline_series(m, device->roof_label()), context_series(m), curve_series(m), knob_series(m)})
    for (const Series& s : series) result.series.push_back(s);

  if (device->compares_with_cpu_model()) {
    plan.start("the CPU model's greedy tokens for the same requests", kCpuMatchWeight);
    m.cpu_match_fraction = cpu_match_fraction(target, ctx.ledger, stream, reference, ctx.control);
  }
  add_notes(result, m, *device, draft_layers, shape.layers);
  result.measured = make_values(std::move(m));
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
