// The checkpointing lesson's parameters, the one place it refuses them, its closed forms and its report.
#include "lessons/checkpointing/checkpointing_lesson.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/errors.h"
#include "engine/units.h"
#include "kernels/training/checkpointed_step_cuda.h"
#include "lessons/common/repeats_param.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/kvcache/model_config.h"

namespace dlsys {

using checkpointing::CheckpointingParams;

namespace {

constexpr int kMostLayers = 96;

std::vector<std::string> model_choices() { return kvcache::preset_names(); }

}  // namespace

std::vector<ParamSpec> CheckpointingLesson::params() const {
  return {
      {.key = "layers",
       .label = "layers L",
       .type = ParamType::Integer,
       .default_text = "48",
       .min = 1,
       .max = kMostLayers,
       .help = "residual MLP blocks in the stack"},
      {.key = "k",
       .label = "checkpoint every k layers",
       .type = ParamType::Integer,
       .default_text = "3",
       .min = 1,
       .max = kMostLayers,
       .help = "layers per segment; must divide L (k = 3 keeps L0, L3, L6, ...; k = L keeps only the input)"},
      {.key = "width",
       .label = "width w",
       .type = ParamType::Integer,
       .default_text = "256",
       .min = 8,
       .max = 2048,
       .help = "the block's input and output width (the course's 1024, scaled down)"},
      {.key = "expansion",
       .label = "hidden layer e x w",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 8,
       .help = "the block is w -> e w -> w (the course's 1024 -> 4096 -> 1024: e = 4)"},
      {.key = "rows",
       .label = "batch rows r",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = 4096,
       .help = "rows of the training batch (tokens)"},
      repeats_param("timed pairs of steps (plain, checkpointed) per k, after one checked step of each"),
      {.key = "model",
       .label = "calculator model",
       .type = ParamType::Choice,
       .default_text = "llama-2-7b",
       .choices = model_choices(),
       .help = "the real model the calculator sizes"},
      {.key = "config",
       .label = "config.json (overrides model)",
       .type = ParamType::File,
       .default_text = "",
       .help = "a Hugging Face config.json: layers, hidden size and heads"},
      {.key = "seq",
       .label = "sequence length s",
       .type = ParamType::Integer,
       .default_text = "4096",
       .min = 1,
       .max = 1048576,
       .unit = "tokens"},
      {.key = "micro_batch",
       .label = "micro-batch b",
       .type = ParamType::Integer,
       .default_text = "1",
       .min = 1,
       .max = 4096,
       .unit = "sequences"},
      max_minutes_param(),
  };
}

CheckpointingParams CheckpointingLesson::read_params(const ParamValues& values) const {
  return {.layers = int(values.integer("layers")),
          .segment_layers = int(values.integer("k")),
          .width = int(values.integer("width")),
          .expansion = int(values.integer("expansion")),
          .rows = int(values.integer("rows")),
          .repeats = int(values.integer("repeats")),
          .model = values.text("model"),
          .config = values.text("config"),
          .seq = values.integer("seq"),
          .micro_batch = values.integer("micro_batch"),
          .max_minutes = values.real("max_minutes")};
}

void CheckpointingLesson::check_params(const CheckpointingParams& p, BackendKind) const {
  if (p.segment_layers > p.layers)
    throw BadInput(fmt::format("parameter 'k': value '{}' is more layers than the stack has (L = {}); allowed: 1 to L",
                               p.segment_layers, p.layers));
  if (p.layers % p.segment_layers != 0) {
    std::vector<int> divisors;
    for (int k = 1; k <= p.layers; ++k)
      if (p.layers % k == 0) divisors.push_back(k);
    throw BadInput(fmt::format(
        "parameter 'k': value '{}' does not divide L = {}, so the segments would differ in length; allowed: {}",
        p.segment_layers, p.layers, fmt::join(divisors, ", ")));
  }
  checkpointing::calculator_of(p);  // refuses a preset or config.json that cannot be sized
}

double checkpointing_cpu_run_seconds(const CheckpointingParams& p, BackendKind backend) {
  const checkpointing::CheckpointingTheory t = checkpointing::stack_theory(p);
  if (backend == BackendKind::Cuda) return estimated_seconds(3 * t.forward_flop, kBlasGflopsPerThread, 1);
  const double divisors = double(t.divisors.size());
  const double flop = (divisors + 1) * 3 * t.forward_flop + divisors * 4 * t.forward_flop +  // the checked steps
                      (1 + p.repeats) * t.forward_flop +                                     // the forward alone
                      divisors * (1 + p.repeats) * 7 * t.forward_flop;                       // the timed pairs
  return estimated_seconds(flop, kBlasGflopsPerThread, 1);
}

RunBudget CheckpointingLesson::budget_of(const CheckpointingParams& p, BackendKind backend) const {
  const checkpointing::CheckpointingTheory t = checkpointing::stack_theory(p);
  const double parameters = double(training::parameter_count(p.shape()));
  RunBudget budget;
  // Weights, three sets of gradients (the plain step's, a checkpointed step's, the device's own or the CPU
  // reference's), the data, the forward pass's activations, and the plain step's activations with its backward's
  // buffers.
  budget.host_bytes = 4 * 4 * parameters + 2.0 * double(t.boundary_bytes) + 2.0 * double(t.keep_all_peak_bytes) +
                      3.0 * double(t.layer_bytes);
  if (backend == BackendKind::Cuda) budget.device_bytes = double(training::cuda::gpu_stack_bytes(p.shape(), p.rows));
  budget.cpu_seconds = checkpointing_cpu_run_seconds(p, backend);
  budget.max_minutes = p.max_minutes;
  budget.sizes = fmt::format("parameters 'layers' = {}, 'width' = {}, 'expansion' = {}, 'rows' = {}", p.layers, p.width,
                             p.expansion, p.rows);
  budget.cpu_work =
      backend == BackendKind::Cuda
          ? fmt::format(
                "the CPU's plain step, the reference for the GPU's gradients: 12 r w^2 e FLOP a layer at {:g} "
                "GFLOP/s",
                kBlasGflopsPerThread)
          : fmt::format(
                "{} values of k, each a checked step and {} timed pairs of steps, 12 r w^2 e FLOP a layer for the "
                "plain step, 16 checkpointed, at {:g} GFLOP/s",
                t.divisors.size(), 1 + p.repeats, kBlasGflopsPerThread);
  budget.smaller = "layers, width, expansion, rows or repeats";
  return budget;
}

checkpointing::CheckpointingTheory CheckpointingLesson::theory_of(const CheckpointingParams& p) const {
  checkpointing::CheckpointingTheory t = checkpointing::stack_theory(p);
  t.calculator = checkpointing::calculator_of(p);
  return t;
}

std::shared_ptr<const checkpointing::CheckpointingSteps> CheckpointingLesson::step_data_of(
    const CheckpointingParams& p) const {
  return checkpointing::make_steps(p, theory_of(p));
}

std::string CheckpointingLesson::text_report(const RunResult& result) const {
  const auto* t = result.theory_as<checkpointing::CheckpointingTheory>();
  if (t == nullptr) return {};
  const checkpointing::CalculatorTheory& c = t->calculator;
  std::string out = fmt::format(
      "\nThe stack: L = {}, k = {}, w = {}, e = {}, r = {}; a checkpoint {} B, a layer's activations {} B\n", t->layers,
      t->segment_layers, t->width, t->expansion, t->rows, t->boundary_bytes, t->layer_bytes);
  out += fmt::format(
      "  peak activations: keep everything {}, every k = {}: {} ({} less); least at k = {} ({}), "
      "sqrt(L / (1 + e)) = {}\n",
      format_bytes_both(double(t->keep_all_peak_bytes)), t->segment_layers,
      format_bytes_both(double(t->checkpointed_peak_bytes)), format_number(100 * t->memory_saving, 3) + " %", t->best_k,
      format_bytes_both(double(t->best_k_peak_bytes)), format_number(t->best_k_real, 3));
  out += fmt::format("  step time: one extra forward, (F + F + 2F) / (F + 2F) = {}\n", format_number(t->time_ratio, 4));
  out += fmt::format(
      "\nCalculator [EXT] (Korthikanti et al. 2022, 16-bit, a GPT layer's formula): {}, s = {}, b = {}, "
      "L = {}, h = {}, a = {}\n",
      c.model, c.seq, c.micro_batch, c.layers, c.hidden, c.heads);
  out += fmt::format("  no recompute   s b h (34 + 5 a s / h) a layer: {}\n", format_bytes_both(c.bytes_none));
  out += fmt::format("  selective      s b h 34 a layer:               {} ({} less)\n",
                     format_bytes_both(c.bytes_selective), format_number(100 * c.selective_saving, 3) + " %");
  out += fmt::format("  full           L 2 s b h + one layer:          {} ({} less)\n", format_bytes_both(c.bytes_full),
                     format_number(100 * c.full_saving, 3) + " %");
  const auto* m = result.measured_as<checkpointing::CheckpointingMeasured>();
  if (m == nullptr) return out;
  out += fmt::format(
      "\nMeasured ({}; each checkpointed step timed in alternation with a plain one):\n",
      m->on_gpu ? "on the GPU with cuBLAS, device memory in the ledger, CUDA events" : "memory ledger, steady_clock");
  out += "     k   peak activations (ledger)   formula          step      plain     ratio   gradients\n";
  for (const checkpointing::SegmentMeasured& s : m->sweep)
    out += fmt::format("  {:>4}   {:>24}   {:>12}   {:>9}   {:>9}   {:>5.3f}   {}\n", s.segment_layers,
                       s.peak_activation_bytes, s.peak_formula_bytes, format_duration_us(s.step_us),
                       format_duration_us(s.keep_all_us), s.time_ratio, s.gradients_identical ? "identical" : "DIFFER");
  out += fmt::format(
      "benchmark: peak activations keep everything {} B, k = {} {} B ({}), least measured at k = {}; step time x{:.3f} "
      "(theory {:.4f}; 1 + measured forward / plain step = {:.3f}); gradients {}\n",
      m->keep_all_peak_bytes, t->segment_layers, m->checkpointed_peak_bytes,
      m->peaks_match_formula ? "ledger = formula at every k" : "ledger DIFFERS from the formula", m->measured_best_k,
      m->time_ratio, t->time_ratio, m->predicted_time_ratio,
      m->all_gradients_identical ? "bit-identical at every k" : "DIFFER");
  if (m->on_gpu)
    out += fmt::format(
        "GPU plain step against the CPU's: gradients {:.2e} of the largest, loss {:.2e} (tolerance {:g}){}\n",
        m->max_rel_err_gpu_vs_cpu, m->loss_rel_err_gpu_vs_cpu, m->gpu_vs_cpu_tolerance,
        m->checks_wrong ? "; A CHECK FAILED" : "");
  return out;
}

}  // namespace dlsys
