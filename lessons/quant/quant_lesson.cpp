#include "lessons/quant/quant_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/backend.h"
#include "engine/units.h"
#include "kernels/quant/gemv_devices.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/quant/quant_error.h"
#include "lessons/quant/quant_gemv_bench.h"
#include "lessons/quant/quant_model.h"
#include "lessons/quant/quant_spec.h"
#include "lessons/quant/quant_steps.h"
#include "lessons/run_file.h"

namespace dlsys {

using namespace quant;

std::vector<ParamSpec> QuantLesson::params() const {
  return {
      {.key = "bits",
       .label = "bits per weight",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 2,
       .max = 8,
       .help = "integer codes of 2 to 8 bits; nf4 is 4"},
      {.key = "scheme",
       .label = "scheme",
       .type = ParamType::Choice,
       .default_text = "absmax",
       .choices = {"absmax", "affine", "nf4"},
       .help = "absmax: symmetric, one scale; affine: a scale and a zero point; nf4: QLoRA's 16 NormalFloat levels"},
      {.key = "granularity",
       .label = "one scale per",
       .type = ParamType::Choice,
       .default_text = "channel",
       .choices = {"tensor", "channel", "block"},
       .help = "the whole matrix, each output channel (row), or each block of consecutive weights of a row"},
      {.key = "block",
       .label = "block",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = 65536,
       .unit = "weights",
       .help = "weights per block (granularity block); QLoRA uses 64"},
      {.key = "double_quant",
       .label = "double quantization",
       .type = ParamType::Choice,
       .default_text = "off",
       .choices = {"off", "on"},
       .help = "block scales stored in 8 bits, one fp32 scale per 256 of them (QLoRA); needs granularity block"},
      {.key = "n",
       .label = "GEMV size n (n x n)",
       .type = ParamType::Integer,
       .default_text = "4096",
       .min = 16,
       .max = 32768,
       .help = "the timed matrix-vector product's weight matrix"},
      {.key = "repeats",
       .label = "timed repeats",
       .type = ParamType::Integer,
       .default_text = "10",
       .min = 1,
       .max = 1000,
       .help = "median of this many GEMVs per format, each with the weights flushed from the caches first"},
      {.key = "outlier",
       .label = "outlier factor",
       .type = ParamType::Real,
       .default_text = "30",
       .min = 1,
       .max = 10000,
       .help = "the largest activation channel is multiplied by this"},
      {.key = "model_steps",
       .label = "model training steps",
       .type = ParamType::Integer,
       .default_text = "100",
       .min = 1,
       .max = 100000,
       .help = "Adam steps that train the model whose weights are quantized"},
      cpu_threads_param("for every GEMV format alike"),
      max_minutes_param(),
  };
}

namespace {

const std::vector<std::string> kSchemeChoices{"absmax", "affine", "nf4"};
const std::vector<std::string> kGranularityChoices{"tensor", "channel", "block"};

}  // namespace

QuantParams QuantLesson::read_params(const ParamValues& values) const {
  QuantParams p;
  p.spec.scheme = static_cast<Scheme>(choice_index(values, "scheme", kSchemeChoices));
  p.spec.granularity = static_cast<Granularity>(choice_index(values, "granularity", kGranularityChoices));
  p.spec.bits = int(values.integer("bits"));
  p.spec.block = int(values.integer("block"));
  p.spec.double_quant = values.text("double_quant") == "on";
  p.n = values.integer("n");
  p.repeats = int(values.integer("repeats"));
  p.outlier = values.real("outlier");
  p.model_steps = int(values.integer("model_steps"));
  p.threads = int(values.integer("threads"));
  p.max_minutes = values.real("max_minutes");
  return p;
}

void QuantLesson::check_params(const QuantParams& p, BackendKind) const {
  if (p.spec.scheme == Scheme::Nf4 && p.spec.bits != 4)
    throw BadInput(fmt::format(
        "parameter 'bits': value '{}' is not allowed with scheme nf4 (NormalFloat has 16 levels: 4 bits); allowed: 4",
        p.spec.bits));
  if (p.spec.double_quant && p.spec.granularity != Granularity::Block)
    throw BadInput(fmt::format(
        "parameter 'double_quant': value 'on' is not allowed with granularity {} (it quantizes the scales of many "
        "blocks); allowed: off, or granularity block",
        granularity_name(p.spec.granularity)));
}

RunBudget QuantLesson::budget_of(const QuantParams& p, BackendKind) const {
  RunBudget budget;
  budget.host_bytes = gemv_bench_bytes(p.n, p.spec);  // the weights in five formats
  // On a GPU one format's weights at a time and twice the L2 cache to flush it with (a few tens of MB), or the
  // STREAM triad's three arrays, whichever is larger.
  budget.device_bytes = std::max(4.0 * double(p.n) * double(p.n) + 256e6, kStreamTriadBytes);
  // Quantizing and checking each format walks every weight a few times at scalar speed; the model trains on one thread.
  const double weights = double(p.n) * double(p.n);
  const double model_flop = 6.0 * 256 * (16.0 * 256 * 2 + 256.0 * 256) * double(p.model_steps);
  budget.cpu_seconds = estimated_seconds(weights * 400 + model_flop, kNaiveLoopGflopsPerThread, 1);
  budget.max_minutes = p.max_minutes;
  budget.sizes = "parameter 'n'";
  budget.cpu_work = fmt::format("{} x {} weights quantized and checked in four formats, and {} training steps", p.n,
                                p.n, p.model_steps);
  budget.smaller = "n or model_steps";
  return budget;
}

QuantTheory QuantLesson::theory_of(const QuantParams& p) const {
  const QuantSpec& spec = p.spec;
  const std::int64_t n = p.n;
  QuantTheory t;
  t.bits = spec.scheme == Scheme::Nf4 ? 4 : spec.bits;
  t.scheme = scheme_name(spec.scheme);
  t.granularity = granularity_name(spec.granularity);
  t.block = spec.block;
  t.double_quant = spec.double_quant;
  t.bytes_per_weight = t.bits / 8.0;
  t.scale_overhead_bits_per_param = scale_overhead_bits_per_param(spec, n, n);
  t.stored_bits_per_weight = t.bits + t.scale_overhead_bits_per_param;
  t.container_bits = t.bits <= 4 ? 4 : 8;
  t.n = n;
  t.nf4_overhead_bits = 32.0 / 64;
  t.nf4_double_quant_overhead_bits = 8.0 / 64 + 32.0 / (64.0 * kDoubleQuantBlock);
  constexpr double kSevenB = 7e9;
  t.model_7b_16bit_bytes = 2 * kSevenB;
  t.model_7b_8bit_bytes = 1 * kSevenB;
  t.model_7b_4bit_bytes = 0.5 * kSevenB;
  t.model_7b_nf4_constants_bytes = kSevenB * t.nf4_overhead_bits / 8;
  t.model_7b_nf4_dq_constants_bytes = kSevenB * t.nf4_double_quant_overhead_bits / 8;
  return t;
}

std::shared_ptr<const QuantSteps> QuantLesson::step_data_of(const QuantParams& p) const {
  return make_quant_steps(p.spec);
}

namespace {

// The run on one device (kernels/quant/gemv_devices.h): the model and its errors on the CPU, the GEMVs on the device.
template <typename Device>
void run_on(const QuantParams& p, RunContext& ctx, const Device& device, RunResult& result) {
  result.backend.timer = Device::kTimer;
  result.backend.repeats = p.repeats;
  for (std::string& note : device.notes()) result.backend.notes.push_back(std::move(note));
  const QuantSpec& spec = p.spec;

  QuantMeasured m;
  // Training takes about a quarter of the run, quantizing and the errors a third, the GEMVs the rest.
  constexpr double kTrainWeight = 2.5, kQuantizeWeight = 3;
  RunPlan plan(ctx.control, kTrainWeight + kQuantizeWeight + gemv_bench_weight(spec));
  plan.start("training the model whose weights are quantized", kTrainWeight);
  const TrainedModel model = train_quant_model(p.model_steps);
  plan.start("quantizing the model's weights", kQuantizeWeight);
  measure_model_errors(model, spec, p.outlier, m, result.series);
  ctx.control.check_cancelled();

  GemvBench bench = run_gemv_bench({p.n, spec}, device, ctx.ledger, plan);
  m.bandwidth_gbps = bench.bandwidth_gbps;
  m.gemv = bench.timings;
  for (Series& s : bench.series) result.series.push_back(std::move(s));
  auto timing = [&](const std::string& key) {
    return *std::find_if(m.gemv.begin(), m.gemv.end(), [&](const GemvTiming& g) { return g.key == key; });
  };
  const std::string chosen_key = same_spec(spec, int8_gemv_spec())   ? "int8"
                                 : same_spec(spec, int4_gemv_spec()) ? "int4"
                                                                     : "chosen";
  m.fp32_gemv_us = timing("fp32").gemv_us;
  m.gemv_us = timing(chosen_key).gemv_us;
  m.speedup = m.fp32_gemv_us / m.gemv_us;
  m.int8_speedup = m.fp32_gemv_us / timing("int8").gemv_us;
  m.int8_as_expected = m.int8_speedup >= kInt8GemvSpeedupAtLeast;
  for (const GemvTiming& g : m.gemv)
    if (g.wrong)
      result.backend.notes.push_back(
          fmt::format("the {} GEMV differs from its double reference by {:.2g} of the terms' size: a kernel is wrong",
                      g.label, g.max_rel_err));
  result.measured = make_values(std::move(m));
  plan.finish();
}

}  // namespace

RunResult QuantLesson::run_with(const QuantParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  if (ctx.backend == BackendKind::Cuda)
    run_on(p, ctx, CudaGemv(p.repeats), result);
  else
    run_on(p, ctx, CpuGemv(p.threads, p.repeats, ctx.control), result);
  finish_result(result, ctx.ledger);
  return result;
}

std::string QuantLesson::text_report(const RunResult& r) const {
  const auto* m = r.measured_as<QuantMeasured>();
  if (m == nullptr) return {};
  const std::int64_t n = read_params(recorded_params(*this, r)).n;
  std::string out =
      fmt::format("\nGEMV at batch 1, {} x {} weights, flushed from the caches before each call:\n", n, n);
  const double fp32_us = m->fp32_gemv_us;
  // The ceiling as the run named it: a recorded run keeps the name its line was drawn with.
  const Series* line = r.find_series("gemv_bandwidth_line");
  out += fmt::format("  (% of the dashed line's bandwidth: {})\n",
                     line ? line->name : fmt::format("{:.1f} GB/s", m->bandwidth_gbps));
  for (const GemvTiming& g : m->gemv)
    out += fmt::format("  {:<38} {:5.3f} B/weight  {:>10}  {:7.1f} GB/s {:4.0f}%  {:4.2f}x fp32  {}\n", g.label,
                       g.bytes_per_weight, format_duration_us(g.gemv_us), g.gbps,
                       m->bandwidth_gbps > 0 ? 100 * g.gbps / m->bandwidth_gbps : 0.0, fp32_us / g.gemv_us,
                       g.wrong ? "WRONG against its reference" : "matches its reference");
  out += "what the lesson expects:\n";
  out += fmt::format("  int8 GEMV {:.2f}x faster than fp32 in this run: {}\n", m->int8_speedup,
                     m->int8_as_expected ? "at least twice as fast, as expected: time follows bytes per weight"
                                         : "NOT twice as fast, which the lesson does not expect");
  if (n != 4096) out += "  (the expectation is for n = 4096)\n";
  out += fmt::format(
      "outlier channel: per-tensor int8 error {:.3g} (without the outlier {:.3g}), per token {:.3g}, LLM.int8() split "
      "({} columns in 16 bits) {:.3g}\n",
      m->err_per_tensor_outlier, m->err_per_tensor_clean, m->err_per_token_outlier, m->split_columns, m->err_llm_int8);
  return out;
}

}  // namespace dlsys
