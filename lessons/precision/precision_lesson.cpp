#include "lessons/precision/precision_lesson.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/backend.h"
#include "engine/units.h"
#include "kernels/precision/float_format.h"
#include "kernels/precision/loss_scaler.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/precision/exact_decimal.h"
#include "lessons/precision/gpu_formats.h"
#include "lessons/precision/precision_problem.h"
#include "lessons/precision/precision_steps.h"
#include "lessons/precision/precision_train.h"
#include "lessons/run_file.h"

namespace dlsys {

using namespace precision;

std::vector<ParamSpec> PrecisionLesson::params() const {
  return {
      {.key = "format",
       .label = "format",
       .type = ParamType::Choice,
       .default_text = "fp16",
       .choices = {"fp32", "fp16", "bf16"},
       .help = "the format whose limits, rounding and run the report shows (the run trains all four ways)"},
      {.key = "scaling",
       .label = "dynamic loss scaling",
       .type = ParamType::Choice,
       .default_text = "on",
       .choices = {"on", "off"},
       .help = "for the chosen format's run: GradScaler's state machine, or none"},
      {.key = "round",
       .label = "round a value",
       .type = ParamType::Text,
       .default_text = "",
       .help = "a decimal number such as 0.1 or 1e-8: run rounds it into the format and shows its bits instead of "
               "training; empty: train"},
      {.key = "steps",
       .label = "training steps",
       .type = ParamType::Integer,
       .default_text = "200",
       .min = 2,
       .max = 100000,
       .help = "Adam steps of batch 256, for each of the four runs"},
      {.key = "loss_weight",
       .label = "loss weight",
       .type = ParamType::Real,
       .default_text = "0.0001220703125",
       .min = 1e-30,
       .max = 1,
       .help = "the loss is this x the mean squared error; 2^-13 puts this small MLP's gradients where a large "
               "network's sit; 1 leaves them large enough for fp16 without scaling"},
      {.key = "init_scale",
       .label = "initial loss scale",
       .type = ParamType::Real,
       .default_text = "65536",
       .min = 1,
       .max = 1e30,
       .help = "GradScaler's default: 65536 = 2^16"},
      {.key = "growth_interval",
       .label = "growth interval",
       .type = ParamType::Integer,
       .default_text = "5",
       .min = 1,
       .max = 1000000,
       .unit = "steps",
       .help = "clean steps before the scale doubles; GradScaler's default is 2000, too long to see in 200 steps"},
      {.key = "learning_rate",
       .label = "Adam learning rate",
       .type = ParamType::Real,
       .default_text = "0.01",
       .min = 1e-7,
       .max = 1,
       .help = "the same for every format"},
      {.key = "gemm_n",
       .label = "GPU GEMM size n",
       .type = ParamType::Integer,
       .default_text = "4096",
       .min = 16,
       .max = 16384,
       .help = "with --backend cuda: the n x n GEMM timed on FP32, TF32, FP16 and BF16 inputs"},
      max_minutes_param(),
  };
}

PrecisionParams PrecisionLesson::read_params(const ParamValues& values) const {
  return {.format = static_cast<Format>(choice_index(values, "format", {"fp32", "fp16", "bf16"})),
          .scaling = values.text("scaling") == "on",
          .round = values.text("round"),
          .steps = int(values.integer("steps")),
          .loss_weight = values.real("loss_weight"),
          .init_scale = values.real("init_scale"),
          .growth_interval = int(values.integer("growth_interval")),
          .learning_rate = values.real("learning_rate"),
          .gemm_n = values.integer("gemm_n"),
          .max_minutes = values.real("max_minutes")};
}

void PrecisionLesson::check_params(const PrecisionParams& p, BackendKind) const {
  if (!p.round.empty() && !round_decimal_text(p.round, layout_of(Format::Fp32)))
    throw BadInput(fmt::format(
        "parameter 'round': value '{}' is not a number; allowed: a decimal number within the double range, such as "
        "0.1, -65519 or 3e-8 ({})",
        p.round, kNumberRule));
}

RunBudget PrecisionLesson::budget_of(const PrecisionParams& p, BackendKind) const {
  RunBudget budget;
  // On a GPU: the GEMMs' fp32 operands and result, and two 16-bit operands.
  const double n = double(p.gemm_n);
  budget.device_bytes = 4.0 * 3 * n * n + 2.0 * 2 * n * n;
  budget.sizes = "parameter 'gemm_n'";
  if (!p.round.empty()) return budget;  // rounding one value trains nothing
  budget.cpu_seconds = precision_cpu_run_seconds(p);
  budget.max_minutes = p.max_minutes;
  budget.cpu_work = fmt::format(
      "{} trainings of {} steps, {:.3g} FLOP per step at {:g} GFLOP/s on one thread, every tensor rounded "
      "in software, and {:g} s for the bit patterns and histograms",
      precision_trainings(p), p.steps, precision_step_flops(), kTiledLoopGflopsPerThread, kPrecisionFixedSeconds);
  budget.smaller = "steps";
  return budget;
}

int precision_trainings(const PrecisionParams& p) {
  // fp32, fp16 without and with scaling, bf16; a run of the chosen format with scaling when it is not among them.
  return (p.format == Format::Fp32 || p.format == Format::Bf16) && p.scaling ? 5 : 4;
}

double precision_cpu_run_seconds(const PrecisionParams& p) {
  const double flop = precision_step_flops() * double(p.steps) * precision_trainings(p);
  return kPrecisionFixedSeconds + estimated_seconds(flop, kTiledLoopGflopsPerThread, 1);
}

PrecisionTheory PrecisionLesson::theory_of(const PrecisionParams& p) const {
  const Layout& l = layout_of(p.format);
  PrecisionTheory t;
  t.format = l.name;
  t.exponent_bits = l.exponent_bits;
  t.mantissa_bits = l.mantissa_bits;
  t.bias = l.bias();
  t.max_finite = max_finite(l);
  t.min_normal = min_normal(l);
  t.min_subnormal = min_subnormal(l);
  t.epsilon = epsilon(l);
  t.parameters = parameter_count(precision_mlp_shape());
  t.model_state_bytes = t.parameters * t.bytes_per_parameter;
  constexpr double kSevenB = 7e9, kRanks = 8;
  t.allreduce_bytes_fp32_7b = 2 * (kRanks - 1) / kRanks * 4 * kSevenB;
  t.allreduce_bytes_16bit_7b = 2 * (kRanks - 1) / kRanks * 2 * kSevenB;
  const ScalerConfig pytorch;
  t.init_scale = p.init_scale;
  t.growth_factor = pytorch.growth_factor;
  t.backoff_factor = pytorch.backoff_factor;
  t.growth_interval = p.growth_interval;
  t.pytorch_growth_interval = pytorch.growth_interval;
  t.loss_weight = p.loss_weight;
  return t;
}

std::shared_ptr<const PrecisionSteps> PrecisionLesson::step_data_of(const PrecisionParams& p) const {
  return make_precision_steps(p);
}

namespace {

RoundedValue round_typed_value(const std::string& typed, const Layout& layout) {
  const Rounded r = *round_decimal_text(typed, layout);
  const double input = *parse_real_text(typed);
  RoundedValue v;
  v.input = typed;
  v.input_exact = format_exact(input, 60);
  v.rounded = r.value;
  v.rounded_exact = format_exact(r.value, 60);
  v.bits_hex = bits_hex(r.bits, layout);
  v.bit_fields = bit_fields(r.bits, layout);
  v.error = std::isfinite(r.value) ? r.value - input : r.value;
  v.relative_error = std::isfinite(r.value) && input != 0 ? (r.value - input) / std::fabs(input) : 0.0;
  v.overflow = r.overflow;
  v.flushed = r.flushed;
  v.subnormal = r.subnormal;
  v.tie = r.tie;
  return v;
}

}  // namespace

namespace {

// The run on one device (kernels/precision/precision_devices.h): the trainings in software on the host, then, where
// the device has 16-bit formats of its own, those set beside the software rounding.
template <typename Device>
void run_on(const PrecisionParams& p, RunContext& ctx, const Device& device, RunResult& result) {
  result.backend.timer = "steady_clock";
  result.backend.repeats = 1;
  PrecisionMeasured measured;
  const bool trains = p.round.empty();  // a rounding query only rounds one value
  const double formats_weight = Device::kHasOwnFormats ? kGpuFormatsWeight : 0;
  RunPlan plan(ctx.control, trains ? double(training_count(p)) + formats_weight : 1);
  if (!trains) {
    measured.rounding = round_typed_value(p.round, layout_of(p.format));
  } else {
    result.backend.notes.push_back(
        "fp16 and bf16 are emulated: each tensor is rounded in software, bit for bit, and held in fp32 arrays (one "
        "thread, OpenBLAS sgemm with fp32 accumulation)");
    TrainingRuns runs = run_trainings(p, plan);
    measured.training = std::move(runs.training);
    result.series = std::move(runs.series);
    if constexpr (Device::kHasOwnFormats) {
      result.backend.notes.push_back(Device::kOwnFormatsNote);
      measured.gpu = measure_gpu_formats(device, p.gemm_n, 5, plan);
    }
  }
  result.measured = make_values(std::move(measured));
  plan.finish();
}

}  // namespace

RunResult PrecisionLesson::run_with(const PrecisionParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  if (ctx.backend == BackendKind::Cuda)
    run_on(p, ctx, CudaPrecision(), result);
  else
    run_on(p, ctx, CpuPrecision(), result);
  finish_result(result, ctx.ledger);
  return result;
}

std::string PrecisionLesson::text_report(const RunResult& r) const {
  const auto* m = r.measured_as<PrecisionMeasured>();
  if (m == nullptr) return {};
  const PrecisionParams p = read_params(recorded_params(*this, r));
  if (m->rounding) {
    const RoundedValue& v = *m->rounding;
    std::string out = fmt::format("\n{} in {}:\n", v.input, layout_of(p.format).name);
    out += fmt::format("  nearest double  {}\n", v.input_exact);
    out += fmt::format("  rounded         {}\n", v.rounded_exact);
    out += fmt::format("  bits            {}  ({})\n", v.bit_fields, v.bits_hex);
    if (v.overflow) out += "  beyond the largest finite value by at least half a spacing: inf\n";
    if (v.flushed) out += "  below half the smallest subnormal: flushed to zero\n";
    if (v.subnormal) out += "  a subnormal: fewer significant bits than a normal value\n";
    if (v.tie) out += "  exactly halfway between two neighbours: rounded to the even one\n";
    return out;
  }
  if (!m->training) return {};
  const Training& t = *m->training;
  std::string out = fmt::format("\nfinal loss after {} steps (noise floor {:.3g}):\n", p.steps, t.noise_floor);
  for (const TrainingSummary* s : {&t.fp32, &t.fp16_unscaled, &t.fp16_scaled, &t.bf16})
    out += fmt::format("  {:<22} {:.4g}  ({:.3g} x fp32; {:.2f}% of gradient values flushed to zero; {} skipped)\n",
                       s->label, s->final_loss, s->final_loss / t.fp32.final_loss, 100 * s->underflow_fraction,
                       s->skipped_steps);
  const bool default_problem =
      p.loss_weight == 0.0001220703125 && p.steps == 200 && p.learning_rate == 0.01 && p.init_scale == 65536;
  out += "what the lesson expects of its default problem:\n";
  out += fmt::format("  fp16 without scaling ends at {:.1f}x fp32's loss: {}\n", t.unscaled_over_fp32,
                     t.unscaled_as_expected ? "far worse (ten times or more), as expected: its gradients were lost"
                                            : "NOT far worse than fp32, which the lesson does not expect");
  out += fmt::format("  fp16 with loss scaling ends at {:.3f}x fp32's loss: {}\n", t.scaled_over_fp32,
                     t.scaled_as_expected ? "within a few percent, as expected"
                                          : "NOT within a few percent of fp32, which the lesson does not expect");
  if (!default_problem)
    out += "  (these expectations are for the default loss_weight, steps, learning_rate and init_scale)\n";
  if (const GpuFormats* g = m->gpu ? &*m->gpu : nullptr) {
    out += fmt::format(
        "on the GPU: {} fp32 values rounded by CUDA, {} fp16 and {} bf16 results differ from the "
        "software rounding\n",
        g->values_checked, g->fp16_mismatches, g->bf16_mismatches);
    out += fmt::format("cuBLAS GEMM, n = {} (median call; error of sampled entries against fp32 inputs in double):\n",
                       g->gemm_n);
    for (const GpuGemmRate& rate : g->gemm)
      out += fmt::format("  {:<5} {:8.1f} TFLOP/s  (fastest {:.1f})  error {:.2g}\n", rate.format, rate.tflops,
                         rate.tflops_best, rate.max_rel_err);
  }
  return out;
}

}  // namespace dlsys
