// The LoRA lesson's parameters, the one place it refuses them, its closed forms and its run.
#include "lessons/lora/lora_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/lora/lora.h"
#include "kernels/lora/lora_devices.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_plan.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/kvcache/model_config.h"
#include "lessons/lora/lora_calculator.h"

namespace dlsys {

using lora_lesson::LoraMeasured;
using lora_lesson::LoraParams;
using lora_lesson::LoraSteps;
using lora_lesson::LoraTheory;
using lora_lesson::MethodMemory;
using lora_lesson::Targets;
using lora_lesson::TrainingRun;

namespace {

const std::vector<std::string> kTargetChoices{"qkvo", "all"};  // in the order of lora_lesson::Targets
constexpr std::uint32_t kProblemSeed = 7;
// The forward passes are milliseconds long: a few repeats, alternating, at least 20 ms of timed calls each.
constexpr MeasureOptions kForwardTiming{.warmup = 1, .repeats = 9, .max_total_us = 0, .min_total_us = 20000};

MethodMemory method_memory(lora::Method method, int r, std::int64_t trainable, const lora::MethodBytes& b) {
  return {lora::method_name(method),
          method == lora::Method::Full ? 0 : r,
          trainable,
          b.frozen,
          b.trainable,
          b.gradients,
          b.optimizer,
          b.activations,
          b.workspace,
          b.total()};
}

MethodMemory closed_form(lora::Method method, const LoraParams& p, int r) {
  const std::int64_t trainable = method == lora::Method::Full ? p.d * p.k : lora::lora_parameters(p.d, p.k, r);
  return method_memory(method, r, trainable, lora::method_bytes(method, p.d, p.k, p.k, r));
}

// The presets the calculator sizes: the dense ones (a mixture of experts or latent attention is refused by name when
// it comes as a config.json). Read once.
const std::vector<std::string>& dense_presets() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> dense;
    for (const std::string& name : kvcache::preset_names()) {
      const kvcache::ModelConfig model = kvcache::load_preset(name);
      if (!model.experts.any() && model.attention == kvcache::AttentionKind::Standard) dense.push_back(name);
    }
    return dense;
  }();
  return names;
}

bool same_bytes(const MethodMemory& a, const MethodMemory& b) {
  return a.frozen_bytes == b.frozen_bytes && a.trainable_bytes == b.trainable_bytes &&
         a.gradient_bytes == b.gradient_bytes && a.optimizer_bytes == b.optimizer_bytes &&
         a.activation_bytes == b.activation_bytes && a.workspace_bytes == b.workspace_bytes;
}

}  // namespace

std::vector<ParamSpec> LoraLesson::params() const {
  return {
      {.key = "d",
       .label = "outputs d (rows of W)",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 16,
       .max = 512,
       .help = "the trained layer's W is d x k"},
      {.key = "k",
       .label = "inputs k (columns of W)",
       .type = ParamType::Integer,
       .default_text = "256",
       .min = 16,
       .max = 512,
       .help = "also the number of training inputs n (orthogonal, so the loss is ||W' - W*||^2 / d)"},
      {.key = "true_rank",
       .label = "rank of the true update",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 16,
       .help = "W* = W + an update of this rank + noise: where the final loss against r has its knee"},
      {.key = "noise",
       .label = "noise in W*",
       .type = ParamType::Real,
       .default_text = "0.001",
       .min = 0,
       .max = 1,
       .help = "the noise's share of the starting loss (the low-rank update's is 1)"},
      {.key = "alpha",
       .label = "LoRA alpha",
       .type = ParamType::Real,
       .default_text = "8",
       .min = 0.001,
       .max = 1024,
       .help = "the update is (alpha / r) B A"},
      {.key = "steps",
       .label = "training steps",
       .type = ParamType::Integer,
       .default_text = "300",
       .min = 10,
       .max = 20000,
       .help = "Adam steps of every training, on all n inputs at once"},
      {.key = "lr",
       .label = "learning rate",
       .type = ParamType::Real,
       .default_text = "0.01",
       .min = 1e-6,
       .max = 1,
       .help = "Adam's, decayed to 0 along a half cosine"},
      {.key = "r",
       .label = "rank r",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 512,
       .help = "QLoRA's rank in a run (at most min(d, k)), and the calculator's"},
      {.key = "model",
       .label = "calculator: model preset",
       .type = ParamType::Choice,
       .default_text = "llama-2-7b",
       .choices = dense_presets(),
       .help = "a dense model's config from assets/models"},
      {.key = "config",
       .label = "calculator: config.json (overrides model)",
       .type = ParamType::File,
       .default_text = "",
       .help = "a Hugging Face config.json of a dense model"},
      {.key = "targets",
       .label = "calculator: adapted matrices",
       .type = ParamType::Choice,
       .default_text = "qkvo",
       .choices = kTargetChoices,
       .help = "qkvo: the attention projections q, k, v, o; all: every linear layer of the blocks"},
      {.key = "micro_batch",
       .label = "calculator: micro-batch",
       .type = ParamType::Integer,
       .default_text = "1",
       .min = 1,
       .max = 4096,
       .help = "sequences per step, for the activations"},
      {.key = "seq",
       .label = "calculator: sequence length",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 1,
       .max = 1048576,
       .unit = "tokens",
       .help = "tokens per sequence, for the activations"},
      // Inference is timed on a layer of a served model's size, whatever the trained layer's: by default a prompt's
      // 256 tokens through one 1024 x 1024 projection, where on a CPU the products' multiply-adds, not the calls'
      // fixed costs, take the time (a GPU needs a larger layer for that: LoraLesson::gpu_params).
      {.key = "serve_width",
       .label = "inference: layer width",
       .type = ParamType::Integer,
       .default_text = "1024",
       .min = 16,
       .max = 16384,
       .help = "the timed inference layer is serve_width x serve_width (its d = k)"},
      {.key = "serve_tokens",
       .label = "inference: tokens",
       .type = ParamType::Integer,
       .default_text = "256",
       .min = 1,
       .max = 16384,
       .unit = "tokens",
       .help = "inputs through the timed inference layer at once"},
      max_minutes_param(),
  };
}

LoraParams LoraLesson::read_params(const ParamValues& values) const {
  LoraParams p;
  p.d = values.integer("d");
  p.k = values.integer("k");
  p.true_rank = int(values.integer("true_rank"));
  p.noise = values.real("noise");
  p.alpha = values.real("alpha");
  p.steps = int(values.integer("steps"));
  p.lr = values.real("lr");
  p.r = int(values.integer("r"));
  p.model = values.text("model");
  p.config = values.text("config");
  p.targets = static_cast<Targets>(choice_index(values, "targets", kTargetChoices));
  p.micro_batch = values.integer("micro_batch");
  p.seq = values.integer("seq");
  p.serve_width = values.integer("serve_width");
  p.serve_tokens = values.integer("serve_tokens");
  p.max_minutes = values.real("max_minutes");
  return p;
}

void LoraLesson::check_params(const LoraParams& p, BackendKind) const {
  const std::int64_t smaller = std::min(p.d, p.k);
  if (p.r > smaller)
    throw BadInput(
        fmt::format("parameter 'r': value '{}' is above min(d, k) = {} (B A has rank at most that); "
                    "allowed: 1 to {}",
                    p.r, smaller, smaller));
  (void)lora_lesson::calculate(p);  // throws BadInput naming 'model' or 'config'
}

RunBudget LoraLesson::budget_of(const LoraParams& p, BackendKind backend) const {
  const double d = double(p.d), k = double(p.k), n = double(p.k), steps = double(p.steps);
  RunBudget budget;
  // On CUDA, the inference layer at the largest swept r: W and W', the inputs, B and A, two outputs and A x, with a
  // cuBLAS handle's workspace on top.
  const double width = double(p.serve_width), tokens = double(p.serve_tokens), rank = double(kSweptRanks.back());
  const bool on_gpu = backend == BackendKind::Cuda;
  if (on_gpu)
    budget.device_bytes =
        4.0 * (2 * width * width + width * tokens + 2 * width * rank + 2 * width * tokens + rank * tokens) +
        kCublasHandleBytes;
  // The task (W, W*, x, x^T, targets), full fine-tuning's four d x k arrays, and the checks' copies; then the
  // inference layer (W, W', the inputs), three outputs and the check's sums of magnitudes in doubles (|W|, |x| and
  // the sums).
  budget.host_bytes = 4.0 * (4 * d * k + 2 * d * n) + 4.0 * (4 * d * k + 2 * d * n) + 8.0 * 3 * d * k +
                      4.0 * (2 * width * width + 4 * width * tokens) + 8.0 * (width * width + 2 * width * tokens);
  // Every step: full 4 d k n FLOP, each of the six adapter trainings 2 d k n for the frozen product; QLoRA
  // dequantizes d k weights a step, the merge checks sum d n k (r + 1) terms, Jacobi ~ 12 sweeps of 3 min^2 max.
  // Inference, at each swept r: on the CPU both paths timed (warm-up and repeats) and the check's sums of
  // magnitudes; on a GPU only the CPU's reference output and those sums.
  const double product_flop = 2 * width * width * tokens;
  const double products_per_rank = on_gpu ? 2.0 : 2.0 * (kForwardTiming.warmup + kForwardTiming.repeats) + 1;
  const double inference_flop = double(kSweptRanks.size()) * products_per_rank * product_flop;
  const double blas_flop = steps * d * k * n * (4 + 2 * 6) + inference_flop;
  double merge_terms = 0;
  for (int r : kSweptRanks) merge_terms += 4 * d * n * k * (r + 1);
  merge_terms += 4 * d * n * k * (p.r + 1);
  const double smaller = std::min(d, k), larger = std::max(d, k);
  const double naive_flop = steps * d * k * 10 + merge_terms + 2 * 12 * 3 * smaller * smaller * larger;
  // On the CPU the adapter's own products are timed alone too, for at least min_total_us at each r.
  const double products_alone_s = on_gpu ? 0 : double(kSweptRanks.size()) * kForwardTiming.min_total_us * 1e-6;
  budget.cpu_seconds = estimated_seconds(blas_flop, kBlasGflopsPerThread, 1) +
                       estimated_seconds(naive_flop, kNaiveLoopGflopsPerThread, 1) + products_alone_s;
  budget.max_minutes = p.max_minutes;
  budget.sizes = "parameters 'd', 'k', 'serve_width' and 'serve_tokens'";
  budget.cpu_work = fmt::format(
      "7 trainings of {} steps on a {} x {} layer, inference on {} tokens through {} x {}, and their checks", p.steps,
      p.d, p.k, p.serve_tokens, p.serve_width, p.serve_width);
  budget.smaller = "d, k, steps, serve_width or serve_tokens";
  return budget;
}

LoraTheory LoraLesson::theory_of(const LoraParams& p) const {
  LoraTheory t;
  t.d = p.d;
  t.k = p.k;
  t.n = p.k;
  t.true_rank = p.true_rank;
  t.swept_ranks = kSweptRanks;
  for (int r : kSweptRanks) t.trainable_by_rank.push_back(lora::lora_parameters(p.d, p.k, r));
  t.full_trainable = p.d * p.k;
  t.r = p.r;
  t.trainable_at_r = lora::lora_parameters(p.d, p.k, p.r);
  t.trainable_share_at_r = double(t.trainable_at_r) / double(t.full_trainable);
  if (p.r <= std::min(p.d, p.k))
    t.memory = {closed_form(lora::Method::Full, p, 0), closed_form(lora::Method::Lora, p, p.r),
                closed_form(lora::Method::Qlora, p, p.r)};
  t.nf4_scale_bits = 32.0 / lora::kNf4Block;
  t.nf4_double_quant_scale_bits = 8.0 / lora::kNf4Block + 32.0 / (lora::kNf4Block * 256.0);
  t.double_quant_saving_bits = t.nf4_scale_bits - t.nf4_double_quant_scale_bits;
  t.nf4_base_bits_per_parameter = 8.0 * double(lora::nf4_double_quant_bytes(p.d, p.k)) / double(p.d * p.k);
  t.course_full = t.course_d * t.course_d;
  t.course_r8 = lora::lora_parameters(t.course_d, t.course_d, 8);
  t.course_r16 = lora::lora_parameters(t.course_d, t.course_d, 16);
  t.course_r8_percent = 100.0 * double(t.course_r8) / double(t.course_full);
  t.course_r16_percent = 100.0 * double(t.course_r16) / double(t.course_full);
  t.calculator = lora_lesson::calculate(p);
  t.inference_width = p.serve_width;
  t.inference_tokens = p.serve_tokens;
  for (int r : kSweptRanks)
    t.adapter_flop_share_by_rank.push_back(lora::adapter_flop_share(p.serve_width, p.serve_width, r));
  return t;
}

std::shared_ptr<const LoraSteps> LoraLesson::step_data_of(const LoraParams& p) const {
  auto steps = std::make_shared<LoraSteps>();
  steps->theory = theory_of(p);
  return steps;
}

namespace {

Series loss_series(const std::string& id, const std::string& name, const std::vector<double>& loss) {
  Series s{id, name, "measured", "step", "", "loss (mean squared output error)", "", {}};
  for (std::size_t i = 0; i < loss.size(); ++i) s.points.push_back({double(i), loss[i], loss[i], loss[i]});
  return s;
}

TrainingRun training_run(const lora::TrainResult& r, lora::Method method, int rank, const MethodMemory& closed,
                         double best_loss) {
  TrainingRun t;
  t.method = lora::method_name(method);
  t.r = method == lora::Method::Full ? 0 : rank;
  t.trainable_parameters = r.trainable_parameters;
  t.initial_loss = r.loss.front();
  t.final_loss = r.final_loss();
  t.best_rank_r_loss = best_loss;
  const TimeSpread time = spread_of(r.step_time);
  t.step_us = time.us;
  t.step_min_us = time.min_us;
  t.step_max_us = time.max_us;
  t.ledger = method_memory(method, rank, r.trainable_parameters, r.peak_bytes);
  t.ledger.total_bytes = r.ledger_total_peak_bytes;
  t.ledger_matches_closed_form = same_bytes(t.ledger, closed) && t.trainable_parameters == closed.trainable_parameters;
  if (method != lora::Method::Full) {
    t.merge_max_abs_diff = r.merge.max_abs_diff;
    t.merge_share_of_bound = r.merge.worst_share_of_bound;
    t.merge_agrees = r.merge.agrees();
  }
  return t;
}

// Inference: the adapter path against the merged weight at every swept r, on the served-size layer, with the
// measured extra time and the extra multiply-adds as series.
// `worst_share_of_bound`: the largest output difference over every r, as a share of fp32's rounding bound.
template <class Device>
std::vector<lora_lesson::ForwardPoint> measure_inference(const LoraParams& p, RunResult& result,
                                                         const std::function<void()>& cancelled,
                                                         double& worst_share_of_bound) {
  std::vector<lora_lesson::ForwardPoint> points;
  Series overhead{
      "forward_overhead", "adapter left unmerged (measured)", "measured", "rank r", "", "extra time", "%", {}};
  Series flop_share{"forward_flop_share",
                    "its extra multiply-adds, r (d + k) / (d k)",
                    "theory",
                    "rank r",
                    "",
                    "extra time",
                    "%",
                    {}};
  Series products{"forward_adapter_products",
                  "its two thin products timed alone (measured)",
                  "measured",
                  "rank r",
                  "",
                  "extra time",
                  "%",
                  {}};
  for (int rank : kSweptRanks) {
    const lora::ForwardTiming timing = Device::time(
        lora::make_inference_layer(p.serve_width, p.serve_width, p.serve_tokens, rank, float(p.alpha) / float(rank)),
        kForwardTiming, cancelled);
    lora_lesson::ForwardPoint point;
    point.r = rank;
    const TimeSpread adapter = spread_of(timing.adapter), merged = spread_of(timing.merged);
    point.adapter_us = adapter.us, point.adapter_min_us = adapter.min_us, point.adapter_max_us = adapter.max_us;
    point.merged_us = merged.us, point.merged_min_us = merged.min_us, point.merged_max_us = merged.max_us;
    point.repeats = timing.adapter.repeats;
    point.overhead = adapter.us / merged.us - 1;
    point.flop_share = lora::adapter_flop_share(p.serve_width, p.serve_width, rank);
    if (timing.adapter_products) point.products_share = spread_of(*timing.adapter_products).us / merged.us;
    point.agrees = timing.check.agrees();
    worst_share_of_bound = std::max(worst_share_of_bound, timing.check.worst_share_of_bound);
    overhead.points.push_back({double(rank), 100 * point.overhead, 100 * point.overhead, 100 * point.overhead});
    flop_share.points.push_back({double(rank), 100 * point.flop_share, 100 * point.flop_share, 100 * point.flop_share});
    if (point.products_share) {
      const double percent = 100 * *point.products_share;
      products.points.push_back({double(rank), percent, percent, percent});
    }
    points.push_back(point);
  }
  result.series.push_back(std::move(overhead));
  result.series.push_back(std::move(flop_share));
  if (!products.points.empty()) result.series.push_back(std::move(products));
  return points;
}

// The inference part on the run's backend: on a GPU the adapter forward is timed there, the trainings stay on the CPU.
void measure_inference_on(BackendKind backend, const LoraParams& p, RunPlan& plan, RunResult& result,
                          const std::function<void()>& cancelled, LoraMeasured& m) {
  if (backend == BackendKind::Cuda) {
    plan.start("inference on the GPU: the adapter path against the merged weight");
    m.forward = measure_inference<lora::CudaLoraForward>(p, result, cancelled, m.forward_worst_share_of_bound);
    m.forward_on_gpu = true;
    m.forward_wrong =
        !std::all_of(m.forward.begin(), m.forward.end(), [](const lora_lesson::ForwardPoint& f) { return f.agrees; });
    result.backend.notes.push_back(
        "on GPU: the adapter forward against the merged weight, cuBLAS fp32, timed with CUDA events, its outputs held "
        "against the CPU's; the fine-tuning runs on the CPU");
  } else {
    plan.start("inference: the adapter path against the merged weight");
    double worst_share_of_bound = 0;  // reported by a GPU run only: the CPU's check is check_merged's, per point
    m.forward = measure_inference<lora::CpuLoraForward>(p, result, cancelled, worst_share_of_bound);
  }
}

// The run's verdicts: the knee of the final loss against r, the ledgers and merges, QLoRA against LoRA at one r.
void judge(const LoraParams& p, const lora::TrainResult& qlora, const lora::TrainResult& lora_at_r, RunResult& result,
           LoraMeasured& m) {
  const double largest_rank_loss = m.trainings[kSweptRanks.size()].final_loss;
  for (std::size_t i = 0; i < kSweptRanks.size(); ++i)
    if (m.trainings[1 + i].final_loss <= kKneeFactor * largest_rank_loss) {
      m.knee_rank = kSweptRanks[i];
      break;
    }
  m.knee_at_true_rank = m.knee_rank == p.true_rank;
  m.all_ledgers_match = std::all_of(m.trainings.begin(), m.trainings.end(),
                                    [](const TrainingRun& t) { return t.ledger_matches_closed_form; });
  m.all_merges_agree =
      std::all_of(m.trainings.begin(), m.trainings.end(),
                  [](const TrainingRun& t) { return t.method == "full" || t.merge_agrees; }) &&
      std::all_of(m.forward.begin(), m.forward.end(), [](const lora_lesson::ForwardPoint& f) { return f.agrees; });
  m.qlora_over_lora_final_loss = qlora.final_loss() / lora_at_r.final_loss();
  if (!m.all_merges_agree)
    result.backend.notes.push_back("an adapter path differs from its merged weight by more than fp32 rounding allows");
}

}  // namespace

RunResult LoraLesson::run_with(const LoraParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  result.backend.timer = "steady_clock";
  result.backend.notes.push_back("one CPU thread (OpenBLAS sgemm); all arrays fp32");
  const double trainings = 2.0 + double(kSweptRanks.size());
  RunPlan plan(ctx.control, 1 + trainings + 1);
  plan.start("building the task and the singular values of W* - W");
  const lora::Problem problem = lora::make_problem(p.d, p.k, p.true_rank, p.noise, kProblemSeed);
  const std::vector<double> sigma = lora::singular_values(lora::target_gap(problem, problem.w), p.d, p.k);
  const std::vector<double> sigma_nf4 =
      lora::singular_values(lora::target_gap(problem, lora::nf4_dequantized_base(problem)), p.d, p.k);
  const auto cancelled = [&] { ctx.control.check_cancelled(); };

  LoraMeasured m;
  lora::TrainConfig config{
      .method = lora::Method::Full, .r = 0, .alpha = float(p.alpha), .steps = p.steps, .learning_rate = float(p.lr)};
  plan.start("full fine-tuning: every weight trained");
  const lora::TrainResult full = lora::train(problem, config, cancelled);
  m.trainings.push_back(training_run(full, lora::Method::Full, 0, closed_form(lora::Method::Full, p, 0), 0));
  result.series.push_back(loss_series("loss_full", "full fine-tuning", full.loss));

  Series final_lora{"final_loss_lora", "LoRA, final loss (measured)", "measured", "rank r", "", "final loss", "", {}};
  Series best_lora{
      "best_loss_lora", "least loss of rank r (Eckart-Young)", "theory", "rank r", "", "final loss", "", {}};
  for (int rank : kSweptRanks) {
    plan.start(fmt::format("LoRA at r = {}", rank));
    config.method = lora::Method::Lora;
    config.r = rank;
    const lora::TrainResult run = lora::train(problem, config, cancelled);
    const double best = lora::eckart_young_loss(sigma, rank, p.d);
    m.trainings.push_back(training_run(run, lora::Method::Lora, rank, closed_form(lora::Method::Lora, p, rank), best));
    result.series.push_back(
        loss_series(fmt::format("loss_lora_r{}", rank), fmt::format("LoRA r = {}", rank), run.loss));
    final_lora.points.push_back({double(rank), run.final_loss(), run.final_loss(), run.final_loss()});
    best_lora.points.push_back({double(rank), best, best, best});
  }
  plan.start(fmt::format("QLoRA at r = {}: NF4 base, double-quantized scales", p.r));
  config.method = lora::Method::Qlora;
  config.r = p.r;
  const lora::TrainResult qlora = lora::train(problem, config, cancelled);
  m.trainings.push_back(training_run(qlora, lora::Method::Qlora, p.r, closed_form(lora::Method::Qlora, p, p.r),
                                     lora::eckart_young_loss(sigma_nf4, p.r, p.d)));
  result.series.push_back(loss_series("loss_qlora", fmt::format("QLoRA r = {}", p.r), qlora.loss));
  plan.start(fmt::format("LoRA at r = {} on the fp32 base, beside QLoRA", p.r));
  config.method = lora::Method::Lora;
  const lora::TrainResult lora_at_r = lora::train(problem, config, cancelled);
  m.trainings.push_back(training_run(lora_at_r, lora::Method::Lora, p.r, closed_form(lora::Method::Lora, p, p.r),
                                     lora::eckart_young_loss(sigma, p.r, p.d)));
  result.series.push_back(loss_series("loss_lora_at_r", fmt::format("LoRA r = {} (fp32 base)", p.r), lora_at_r.loss));
  result.series.push_back(std::move(final_lora));
  result.series.push_back(std::move(best_lora));

  measure_inference_on(ctx.backend, p, plan, result, cancelled, m);
  judge(p, qlora, lora_at_r, result, m);
  result.backend.repeats = p.steps - 1;
  result.measured = make_values(std::move(m));
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

std::string LoraLesson::text_report(const RunResult& r) const {
  const auto* m = r.measured_as<LoraMeasured>();
  if (m == nullptr) return {};
  std::string out = "\ntrainings (fp32, one CPU thread; step = forward, backward and Adam on all inputs):\n";
  for (const TrainingRun& t : m->trainings)
    out += fmt::format(
        "  {:<5} r={:<3} trainable {:>9}  loss {:.3e} -> {:.3e} (rank-r least {:.3e})  step {:>10}  ledger {:>10} {}\n",
        t.method, t.r, t.trainable_parameters, t.initial_loss, t.final_loss, t.best_rank_r_loss,
        format_duration_us(t.step_us), format_bytes_binary(double(t.ledger.total_bytes)),
        t.ledger_matches_closed_form ? "= closed form" : "DIFFERS from the closed form");
  out += fmt::format("knee of the final loss against r: r = {} ({})\n", m->knee_rank,
                     m->knee_at_true_rank ? "the true rank, as expected" : "NOT the true rank");
  out += fmt::format("merged weight W + (alpha/r) B A against the adapter path: {}\n",
                     m->all_merges_agree ? "the same outputs within fp32 rounding" : "DIFFERENT");
  out += fmt::format("QLoRA's final loss over LoRA's at the same r: {:.3g}\n", m->qlora_over_lora_final_loss);
  out +=
      fmt::format("inference, the adapter unmerged against the merged weight (one forward pass over all inputs{}):\n",
                  m->forward_on_gpu ? ", on the GPU with cuBLAS; the trainings above ran on the CPU" : "");
  for (const lora_lesson::ForwardPoint& f : m->forward)
    out += fmt::format(
        "  r={:<3} adapter {:>10}  merged {:>10}  extra {:+6.1f}%  (extra multiply-adds {:.1f}%{})\n", f.r,
        format_duration_us(f.adapter_us), format_duration_us(f.merged_us), 100 * f.overhead, 100 * f.flop_share,
        f.products_share ? fmt::format("; its thin products alone {:.1f}%", 100 * *f.products_share) : "");
  if (m->forward_on_gpu)
    out += fmt::format("the GPU's outputs against the CPU's adapter path: at worst {:.3g} of fp32's rounding bound\n",
                       m->forward_worst_share_of_bound);
  out += std::string(lora_lesson::activation_note()) + "\n";
  return out;
}

}  // namespace dlsys
