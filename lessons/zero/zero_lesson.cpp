// The ZeRO lesson's parameters, the one place it refuses them, and its closed forms.
#include "lessons/zero/zero_lesson.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <thread>

#include "engine/backend.h"
#include "engine/units.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/gpu_ring_plan.h"
#include "kernels/zero/zero_cuda.h"
#include "kernels/zero/zero_memory.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/kvcache/gpu_specs.h"
#include "lessons/kvcache/model_config.h"
#include "lessons/zero/zero_calculator.h"
#include "lessons/zero/zero_steps.h"

namespace dlsys {

using zero_lesson::ZeroParams;

namespace {

constexpr int kMostRunRanks = 64;

std::vector<std::string> gpu_ids() {
  std::vector<std::string> ids;
  for (const kvcache::GpuSpec& g : kvcache::gpu_specs()) ids.push_back(g.id);
  return ids;
}

std::vector<std::string> model_choices() {
  std::vector<std::string> names{"none"};
  for (const std::string& n : kvcache::preset_names()) names.push_back(n);
  return names;
}

}  // namespace

std::vector<ParamSpec> ZeroLesson::params() const {
  return {
      {.key = "mode",
       .label = "what to do",
       .type = ParamType::Choice,
       .default_text = "run",
       .choices = {"run", "theory"},
       .help = "run: train the lab's stack at stages 0-3; theory: the calculator alone, any model, nothing run"},
      {.key = "n",
       .label = "data-parallel ranks N",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 1048576,
       .help = "ranks (GPUs) sharing the batch; CPU threads in a run (at most 64 there)"},
      {.key = "stage",
       .label = "ZeRO stage",
       .type = ParamType::Integer,
       .default_text = "3",
       .min = 0,
       .max = 3,
       .help = "0 = DDP, 1 = optimizer states sharded, 2 = + gradients, 3 = + weights (FSDP)"},
      {.key = "layers",
       .label = "stack layers",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 256,
       .help = "residual MLP blocks of the lab's model (run)"},
      {.key = "width",
       .label = "stack width w",
       .type = ParamType::Integer,
       .default_text = "256",
       .min = 8,
       .max = 4096,
       .help = "each block has 2 w^2 weights; 2 w^2 must divide by N"},
      {.key = "rows",
       .label = "rows per rank",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 4096,
       .help = "each rank's share of the global batch (run)"},
      {.key = "steps",
       .label = "training steps",
       .type = ParamType::Integer,
       .default_text = "3",
       .min = 1,
       .max = 20,
       .help = "Adam steps at every stage (run)"},
      {.key = "dtype",
       .label = "16-bit format",
       .type = ParamType::Choice,
       .default_text = "bf16",
       .choices = {"bf16", "fp16"},
       .help = "working weights and gradients, stored as 2-byte values (fp16 without loss scaling here)"},
      {.key = "params",
       .label = "parameters Psi",
       .type = ParamType::Real,
       .default_text = "7.5e9",
       .min = 1,
       .max = 1e15,
       .help = "the calculator's model size when no preset or config is chosen"},
      {.key = "model",
       .label = "model preset",
       .type = ParamType::Choice,
       .default_text = "none",
       .choices = model_choices(),
       .help = "none: use params; else the preset's parameters, counted from its config"},
      {.key = "config",
       .label = "config.json (overrides model)",
       .type = ParamType::File,
       .default_text = "",
       .help = "a Hugging Face config.json; parameters counted exactly from its shape"},
      {.key = "gpu",
       .label = "GPU",
       .type = ParamType::Choice,
       .default_text = "h100-sxm",
       .choices = gpu_ids(),
       .help = "the memory to fit in (datasheet, GB = 1e9 bytes)"},
      {.key = "gpu_gb",
       .label = "GPU memory (overrides GPU)",
       .type = ParamType::Real,
       .default_text = "0",
       .min = 0,
       .max = 1e6,
       .unit = "GB",
       .help = "0: the chosen GPU's datasheet memory"},
      {.key = "micro_batch",
       .label = "micro-batch b",
       .type = ParamType::Integer,
       .default_text = "1",
       .min = 1,
       .max = 1024,
       .unit = "sequences",
       .help = "per rank, for the activations"},
      {.key = "seq",
       .label = "sequence length s",
       .type = ParamType::Integer,
       .default_text = "2048",
       .min = 1,
       .max = 131072,
       .unit = "tokens"},
      {.key = "checkpointing",
       .label = "activation checkpointing",
       .type = ParamType::Choice,
       .default_text = "off",
       .choices = {"off", "on"},
       .help = "on: keep each layer's input only and recompute one layer at a time"},
      max_minutes_param(),
  };
}

ZeroParams ZeroLesson::read_params(const ParamValues& values) const {
  return {.mode = static_cast<zero_lesson::Mode>(choice_index(values, "mode", {"run", "theory"})),
          .n = int(values.integer("n")),
          .stage = int(values.integer("stage")),
          .layers = int(values.integer("layers")),
          .width = int(values.integer("width")),
          .rows = int(values.integer("rows")),
          .steps = int(values.integer("steps")),
          .dtype = values.text("dtype") == "fp16" ? precision::Format::Fp16 : precision::Format::Bf16,
          .params = values.real("params"),
          .model = values.text("model"),
          .config = values.text("config"),
          .gpu = values.text("gpu"),
          .gpu_gb = values.real("gpu_gb"),
          .micro_batch = values.integer("micro_batch"),
          .seq = values.integer("seq"),
          .checkpointing = values.text("checkpointing") == "on",
          .max_minutes = values.real("max_minutes")};
}

zero::ZeroConfig zero_config(const ZeroParams& p, int stage) {
  zero::ZeroConfig c;
  c.shape = {.layers = p.layers, .width = p.width};
  c.ranks = p.n;
  c.stage = stage;
  c.rows_per_rank = p.rows;
  c.steps = p.steps;
  c.dtype = p.dtype;
  return c;
}

std::vector<int> zero_swept_ranks(const ZeroParams& p) {
  const zero::ZeroConfig c = zero_config(p, 0);
  std::set<int> ranks{c.ranks};
  for (int n : {1, 2, 4, 8, 16})
    if (zero::shards_evenly(c.shape, n)) ranks.insert(n);
  return {ranks.begin(), ranks.end()};
}

double zero_cpu_run_seconds(const ZeroParams& p) {
  const zero::ZeroConfig c = zero_config(p, 0);
  const double parameters = double(training::parameter_count(c.shape));
  double parameter_passes = 0, flop = 0;
  const auto training_of = [&](int ranks, int steps) {  // one stage's training
    parameter_passes += (steps + 1.0) * ranks * parameters;
    flop += 6.0 * parameters * c.rows_per_rank * ranks * steps;
  };
  for (int stage = 0; stage <= zero::kMaxStage; ++stage) training_of(c.ranks, c.steps);
  for (int n : zero_swept_ranks(p))
    for (int stage = 0; stage <= zero::kMaxStage; ++stage) training_of(n, 1);
  return estimated_seconds(flop, kBlasGflopsPerThread, 1) + parameter_passes * kZeroSecondsPerParameterPass;
}

namespace {

// What a run of the stack can train at all: ranks as threads, even shards, a data set that can be indexed.
void check_run_shape(const ZeroParams& p) {
  const zero::ZeroConfig c = zero_config(p, 0);
  if (c.ranks > kMostRunRanks)
    throw BadInput(fmt::format(
        "parameter 'n': value '{}' is too many rank threads for a run; allowed: 1 to {} (mode = theory takes any N)",
        c.ranks, kMostRunRanks));
  const std::int64_t per_layer = training::parameters_per_layer(c.shape);
  if (!zero::shards_evenly(c.shape, c.ranks))
    throw BadInput(fmt::format(
        "parameter 'n': value '{}' does not divide a layer's 2 w^2 = {} weights (width {}), so the shards would be "
        "uneven; allowed: a divisor of {}, or another width",
        c.ranks, per_layer, c.shape.width, per_layer));
  const std::int64_t rows = std::int64_t(c.rows_per_rank) * c.ranks;
  if (rows > (std::int64_t(1) << 30))
    throw BadInput(fmt::format("parameters 'rows' x 'n' = {} rows of data; allowed: at most 2^30", rows));
}

// On a GPU: the largest configuration the run trains (every stage at the chosen N and at each N of the sweep) on
// GPU 0, every rank when they are emulated there. A check of its own rather than the budget's device bytes: the message
// names the N that needs the most and whether its ranks are emulated on GPU 0.
void check_gpu_memory(const ZeroParams& p) {
  const CudaStatus& cuda = cuda_status();
  const bool nccl = collectives::cuda::nccl_compiled();
  double largest = 0;
  int largest_ranks = 1;
  for (int n : zero_swept_ranks(p))
    for (int stage = 0; stage <= zero::kMaxStage; ++stage) {
      zero::ZeroConfig c = zero_config(p, stage);
      c.ranks = n;
      const collectives::GpuPlacement placement = collectives::plan_gpu_placement(n, cuda.device_count, nccl);
      const double bytes = double(zero::cuda::gpu0_bytes_needed(c, placement));
      if (bytes > largest) {
        largest = bytes;
        largest_ranks = n;
      }
    }
  if (!device_memory().fits(largest)) {
    const zero::ZeroConfig c = zero_config(p, 0);
    throw BadInput(fmt::format(
        "parameters 'layers' = {}, 'width' = {}, 'n' = {}, 'rows' = {}: on the GPU the run needs {} on GPU 0 (N = {}: "
        "model states, activations and buffers of {} there) but only {} is free; lower layers, width, n or rows, or "
        "run on --backend cpu (mode = theory sizes any model)",
        c.shape.layers, c.shape.width, c.ranks, c.rows_per_rank, format_bytes_both(largest), largest_ranks,
        largest_ranks > cuda.device_count && largest_ranks > 1 ? "every rank, emulated" : "one rank",
        format_bytes_both(double(cuda.device.memory_free_bytes))));
  }
}

}  // namespace

void ZeroLesson::check_params(const ZeroParams& p, BackendKind backend) const {
  // Loads the preset or the config, which the steps draw in either mode: refuses a malformed one.
  zero_lesson::calculator_input(p);
  if (p.mode == zero_lesson::Mode::Theory) return;
  check_run_shape(p);
  if (backend == BackendKind::Cuda) check_gpu_memory(p);
}

// GPU memory is checked in check_params (check_gpu_memory).
RunBudget ZeroLesson::budget_of(const ZeroParams& p, BackendKind) const {
  RunBudget budget;
  if (p.mode == zero_lesson::Mode::Theory) return budget;
  const zero::ZeroConfig c = zero_config(p, 0);
  // The stages run one after another, so the largest (stage 0, everything replicated) sets the peak.
  zero::ZeroConfig largest = c;
  largest.ranks = zero_swept_ranks(p).back();
  budget.host_bytes = zero::training_bytes_bound(largest) + 4.0 * double(training::parameter_count(c.shape)) * 4;
  budget.sizes = fmt::format(
      "parameters 'layers' = {}, 'width' = {}, 'n' = {}, 'rows' = {} (16 bytes a parameter on every rank, plus "
      "activations and buffers; mode = theory sizes any model)",
      c.shape.layers, c.shape.width, c.ranks, c.rows_per_rank);
  budget.cpu_seconds = zero_cpu_run_seconds(p);
  budget.max_minutes = p.max_minutes;
  budget.cpu_work = fmt::format(
      "4 stages x {} steps on {} ranks, then a step per stage at N = {}: 6 FLOP per weight and row at {:g} "
      "GFLOP/s, {:g} ns per parameter of every rank",
      c.steps, c.ranks, fmt::join(zero_swept_ranks(p), ", "), kBlasGflopsPerThread, kZeroSecondsPerParameterPass * 1e9);
  budget.smaller = "layers, width, rows, steps or n";
  return budget;
}

zero_lesson::ZeroTheory ZeroLesson::theory_of(const ZeroParams& p) const {
  const bool run = p.mode == zero_lesson::Mode::Run;
  zero_lesson::CalculatorInput in = zero_lesson::calculator_input(p, !run);
  if (run) {
    const zero::ZeroConfig c = zero_config(p, p.stage);
    in.parameters = double(training::parameter_count(c.shape));
    in.psi_source = fmt::format("the lab's stack: {} layers x 2 x {}^2 weights", c.shape.layers, c.shape.width);
    in.shape_known = false;
  }
  return zero_lesson::calculate(in, p.n, p.stage);
}

// The steps draw the calculator's model (params, a preset or a config) in either mode, and the run's stack beside it.
std::shared_ptr<const zero_lesson::ZeroSteps> ZeroLesson::step_data_of(const ZeroParams& p) const {
  return zero_lesson::make_steps(p, zero_lesson::calculate(zero_lesson::calculator_input(p), p.n, p.stage));
}

}  // namespace dlsys
