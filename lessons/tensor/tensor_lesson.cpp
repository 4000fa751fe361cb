// The tensor lesson's parameters, the one place it refuses them, and its closed forms.
#include "lessons/tensor/tensor_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <thread>

#include "engine/backend.h"
#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/communicator.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/tensor/gpu_plan.h"
#include "kernels/tensor/rank_layer.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/tensor/tensor_steps.h"

namespace dlsys {

using tensor::LayerShape;
using tensor::TensorParams;

namespace {
// For the time estimate on a GPU only, deliberately low: an fp32 rate any recent GPU beats (an H100 does ~50 TFLOP/s
// on sgemm), and a launch cost per kernel that small heads make matter.
constexpr double kGpuFp32GflopsFloor = 5000;
constexpr double kGpuLaunchSeconds = 20e-6;
}  // namespace

// The ranges keep every byte count exact in 64 bits: 9 a s^2 b stays below 2^63 at a = 1024, s = 131072, b = 1024.
std::vector<ParamSpec> TensorLesson::params() const {
  return {
      {.key = "t",
       .label = "tensor-parallel ranks t",
       .type = ParamType::Integer,
       .default_text = "2",
       .min = 1,
       .max = 64,
       .help = "ranks sharing each layer (CPU threads, or GPUs or streams on one); must divide the heads"},
      {.key = "hidden",
       .label = "hidden size h",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 8,
       .max = 131072,
       .help = "model width; a multiple of the heads"},
      {.key = "heads",
       .label = "attention heads a",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 1024,
       .help = "each rank keeps a/t whole heads"},
      {.key = "seq",
       .label = "sequence length s",
       .type = ParamType::Integer,
       .default_text = "256",
       .min = 1,
       .max = 131072,
       .unit = "tokens"},
      {.key = "batch",
       .label = "micro-batch b",
       .type = ParamType::Integer,
       .default_text = "1",
       .min = 1,
       .max = 1024,
       .unit = "sequences"},
      {.key = "sp",
       .label = "sequence parallelism",
       .type = ParamType::Choice,
       .default_text = "off",
       .choices = {"off", "on"},
       .help = "on: layer norms and dropouts split along the sequence; all-reduce = reduce-scatter + all-gather"},
      {.key = "mode",
       .label = "what to do",
       .type = ParamType::Choice,
       .default_text = "run",
       .choices = {"run", "theory"},
       .help = "theory: the activation calculator alone, any size, nothing run"},
      {.key = "example",
       .label = "worked example",
       .type = ParamType::Choice,
       .default_text = "none",
       .choices = {"none", "course"},
       .help = "course: run only the course's 4x4 example (steps 1 and 2) on two ranks"},
      {.key = "hidden_sweep",
       .label = "sweep hidden sizes",
       .type = ParamType::SizeList,
       .default_text = "64..256",
       .min = 8,
       .max = 131072,
       .help = "h for compute and communication against h, at the chosen t and at t = 1"},
      {.key = "repeats",
       .label = "timed steps",
       .type = ParamType::Integer,
       .default_text = "3",
       .min = 1,
       .max = 50,
       .help = "forward + backward steps timed per configuration, after one untimed"},
      max_minutes_param(),
  };
}

TensorParams TensorLesson::read_params(const ParamValues& values) const {
  return {.shape = {.batch = values.integer("batch"),
                    .seq = values.integer("seq"),
                    .hidden = values.integer("hidden"),
                    .heads = values.integer("heads"),
                    .ranks = static_cast<int>(values.integer("t")),
                    .sequence_parallel = values.text("sp") == "on"},
          .mode = static_cast<tensor::TensorMode>(choice_index(values, "mode", {"run", "theory"})),
          .example = static_cast<tensor::TensorExample>(choice_index(values, "example", {"none", "course"})),
          .hidden_sweep = values.list("hidden_sweep"),
          .hidden_sweep_text = values.text("hidden_sweep"),
          .repeats = static_cast<int>(values.integer("repeats")),
          .max_minutes = values.real("max_minutes")};
}

std::vector<int> swept_ranks(const TensorParams& p) {
  const LayerShape& chosen = p.shape;
  std::set<int> ranks{chosen.ranks};
  for (int t : {1, 2, 4})
    if (chosen.heads % t == 0 && (!chosen.sequence_parallel || chosen.seq % t == 0)) ranks.insert(t);
  return {ranks.begin(), ranks.end()};
}

std::vector<std::int64_t> swept_hiddens(const TensorParams& p) {
  std::set<std::int64_t> hiddens{p.shape.hidden};
  for (double h : p.hidden_sweep) hiddens.insert(static_cast<std::int64_t>(h));
  return {hiddens.begin(), hiddens.end()};
}

std::vector<LayerShape> run_plan(const TensorParams& p) {
  const LayerShape& chosen = p.shape;
  std::vector<LayerShape> shapes{chosen};
  auto add = [&](LayerShape s) {
    for (const LayerShape& seen : shapes)
      if (seen.hidden == s.hidden && seen.ranks == s.ranks) return;
    shapes.push_back(s);
  };
  for (int t : swept_ranks(p)) {
    LayerShape s = chosen;
    s.ranks = t;
    add(s);
  }
  for (std::int64_t h : swept_hiddens(p))
    for (int t : {chosen.ranks, 1}) {
      LayerShape s = chosen;
      s.hidden = h;
      s.ranks = t;
      add(s);
    }
  return shapes;
}

namespace {

std::string divisors_text(std::int64_t n) {
  std::string out;
  for (std::int64_t d = 1; d <= n && out.size() < 60; ++d)
    if (n % d == 0) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return out;
}

// The rules every shape of the lesson keeps, each named by the parameter that breaks it.
void check_shape(const LayerShape& s) {
  if (s.hidden % s.heads != 0)
    throw BadInput(fmt::format(
        "parameter 'hidden': value '{}' is not allowed with heads = {} (each head takes hidden / heads columns); "
        "allowed: a multiple of {}",
        s.hidden, s.heads, s.heads));
  if (4 * s.hidden % s.ranks != 0)
    throw BadInput(fmt::format(
        "parameter 't': value '{}' is not allowed with hidden = {} (the MLP's 4h = {} columns are split over the "
        "ranks); allowed: a divisor of both 4h and heads: {}",
        s.ranks, s.hidden, 4 * s.hidden, divisors_text(std::gcd(4 * s.hidden, s.heads))));
  if (s.heads % s.ranks != 0)
    throw BadInput(
        fmt::format("parameter 't': value '{}' is not allowed with heads = {} (each rank keeps whole attention heads); "
                    "allowed: a divisor of {}: {}",
                    s.ranks, s.heads, s.heads, divisors_text(s.heads)));
  if (s.sequence_parallel && s.seq % s.ranks != 0)
    throw BadInput(fmt::format(
        "parameter 'seq': value '{}' is not allowed with sp = on and t = {} (each rank keeps seq / t positions); "
        "allowed: a multiple of {}",
        s.seq, s.ranks, s.ranks));
}

void check_sweep(const TensorParams& p) {
  const LayerShape& s = p.shape;
  for (double h : p.hidden_sweep)
    if (std::int64_t(h) % s.heads != 0)
      throw BadInput(fmt::format(
          "parameter 'hidden_sweep': value '{}' is not allowed with heads = {} ({} is not a multiple of the heads); "
          "allowed: multiples of {}",
          p.hidden_sweep_text, s.heads, h, s.heads));
}

double config_bytes(const LayerShape& s) {
  return double(s.ranks) * double(tensor::rank_buffer_counts(s).bytes(4)) +
         (s.ranks > 1 ? double(collectives::Communicator::link_bytes(s.ranks, {})) : 0.0);
}

double reference_bytes(const LayerShape& chosen) {
  LayerShape one = chosen;
  one.ranks = 1;
  one.sequence_parallel = false;
  return double(tensor::rank_buffer_counts(one).bytes(8));
}

// Forward + backward FLOP of one step, all ranks together: 72 s b h^2 for the GEMMs of the linears, 12 s^2 b h for
// attention's (the full s x s scores are computed, then masked).
double linear_flop(const LayerShape& s) { return 72.0 * double(s.tokens()) * double(s.hidden) * double(s.hidden); }
double attention_flop(const LayerShape& s) { return 12.0 * double(s.tokens()) * double(s.seq) * double(s.hidden); }
double step_flop(const LayerShape& s) { return linear_flop(s) + attention_flop(s); }
double cpu_step_seconds(const LayerShape& s) {
  return estimated_seconds(linear_flop(s), kBlasGflopsPerThread, 1) +
         estimated_seconds(attention_flop(s), kTensorAttentionGflops, 1);
}

// On the CPU: the largest configuration on every rank, and the double reference. A check of its own rather than the
// budget's host bytes: the message says what the bytes hold and which parameters lower them.
void check_host_memory(const TensorParams& p) {
  const LayerShape& chosen = p.shape;
  const std::vector<LayerShape> shapes = run_plan(p);
  double largest = 0;
  for (const LayerShape& s : shapes) largest = std::max(largest, config_bytes(s));
  const double needed = largest + reference_bytes(chosen);
  const HostMemory host = host_memory();
  if (!host.fits(needed))
    throw BadInput(fmt::format(
        "parameters 'hidden' = {}, 'seq' = {}, 'batch' = {}, 'heads' = {}: the run needs {} (the largest "
        "configuration's weights, gradients, activations and scratch on every rank, plus the double reference) but "
        "only {} of host memory is available; lower hidden, seq, batch or heads (mode = theory computes the "
        "formula at any size)",
        chosen.hidden, chosen.seq, chosen.batch, chosen.heads, format_bytes_both(needed),
        format_bytes_both(host.free_bytes)));
}

// On a GPU: each configuration's device memory on GPU 0 (every rank, when ranks are emulated there), and the double
// reference and the copies of the results on the host; checks of their own, whose messages name the configuration
// that needs the most and what the host's bytes hold.
void check_gpu_memory(const TensorParams& p) {
  const CudaStatus& cuda = cuda_status();
  const bool nccl = collectives::cuda::nccl_compiled();
  const LayerShape& chosen = p.shape;
  const std::vector<LayerShape> shapes = run_plan(p);
  double largest = 0;
  LayerShape largest_shape = chosen;
  for (const LayerShape& s : shapes) {
    const tensor::GpuPlacement placement = tensor::plan_gpu_placement(s.ranks, cuda.device_count, nccl);
    const double bytes = double(tensor::gpu0_bytes_needed(s, placement));
    if (bytes > largest) {
      largest = bytes;
      largest_shape = s;
    }
  }
  if (!device_memory().fits(largest))
    throw BadInput(fmt::format(
        "parameters 'hidden' = {}, 'seq' = {}, 'batch' = {}, 'heads' = {}: on the GPU the run needs {} on GPU 0 (t = "
        "{} at h = {}: weights, gradients, activations and scratch of {} there) but only {} is free; lower hidden, "
        "seq, batch or heads, or run on --backend cpu (mode = theory computes the formula at any size)",
        chosen.hidden, chosen.seq, chosen.batch, chosen.heads, format_bytes_both(largest), largest_shape.ranks,
        largest_shape.hidden,
        largest_shape.ranks > cuda.device_count && largest_shape.ranks > 1 ? "every rank, emulated" : "one rank",
        format_bytes_both(double(cuda.device.memory_free_bytes))));
  // The results come back to the host for the check: outputs, input gradients and weight gradients of every rank.
  const double copies = 4.0 * double(2 * chosen.tokens() * chosen.hidden + 12 * chosen.hidden * chosen.hidden +
                                     4 * chosen.hidden * chosen.ranks);
  const double needed = reference_bytes(chosen) + copies;
  const HostMemory host = host_memory();
  if (!host.fits(needed))
    throw BadInput(fmt::format(
        "parameters 'hidden' = {}, 'seq' = {}, 'batch' = {}, 'heads' = {}: the check needs {} of host memory (the "
        "unsharded layer in double and the copies of the GPU ranks' results) but only {} is available; lower hidden, "
        "seq, batch or heads",
        chosen.hidden, chosen.seq, chosen.batch, chosen.heads, format_bytes_both(needed),
        format_bytes_both(host.free_bytes)));
}

// The time on a GPU: the reference on one CPU thread, the steps at a deliberately low fp32 rate plus a launch cost per
// kernel (the attention runs head by head).
double gpu_run_seconds(const TensorParams& p) {
  const double steps = double(p.repeats + 1);
  double seconds = estimated_seconds(step_flop(p.shape), kBlasGflopsPerThread / 2, 1);  // dgemm: half sgemm's rate
  for (const LayerShape& s : run_plan(p)) {
    const double launches = 12.0 * double(s.batch * s.heads) + 40.0 * s.ranks;
    seconds += steps * (step_flop(s) / (kGpuFp32GflopsFloor * 1e9) + launches * kGpuLaunchSeconds);
  }
  return seconds;
}

// Whether the parameters run the layer at all: the calculator runs nothing, on any backend, at any size, and the
// course's example is four numbers on two CPU ranks, whatever the backend.
bool runs_layer(const TensorParams& p) {
  return p.mode == tensor::TensorMode::Run && p.example == tensor::TensorExample::None;
}

}  // namespace

double tensor_cpu_run_seconds(const TensorParams& p) {
  double seconds = cpu_step_seconds(p.shape);  // the unsharded reference, one step
  for (const LayerShape& s : run_plan(p)) seconds += double(p.repeats + 1) * cpu_step_seconds(s);
  return seconds;
}

void TensorLesson::check_params(const TensorParams& p, BackendKind backend) const {
  check_shape(p.shape);
  if (!runs_layer(p)) return;
  check_sweep(p);
  if (backend == BackendKind::Cuda)
    check_gpu_memory(p);
  else
    check_host_memory(p);
}

RunBudget TensorLesson::budget_of(const TensorParams& p, BackendKind backend) const {
  RunBudget budget;
  if (!runs_layer(p)) return budget;
  const std::size_t configurations = run_plan(p).size();
  budget.max_minutes = p.max_minutes;
  budget.smaller = "hidden, seq, batch, hidden_sweep or repeats";
  if (backend == BackendKind::Cuda) {
    budget.cpu_seconds = gpu_run_seconds(p);
    budget.cpu_work = fmt::format(
        "one double-precision step on the CPU at {:g} GFLOP/s, then {} configurations x {} steps of 72 s b "
        "h^2 + 12 s^2 b h FLOP on the GPU at {:g} GFLOP/s",
        kBlasGflopsPerThread / 2, configurations, double(p.repeats + 1), kGpuFp32GflopsFloor);
    return budget;
  }
  budget.cpu_seconds = tensor_cpu_run_seconds(p);
  budget.cpu_work = fmt::format(
      "{} configurations x {} steps and one double-precision step, each of 72 s b h^2 FLOP in the linears "
      "at {:g} GFLOP/s and 12 s^2 b h in attention at {:g} GFLOP/s",
      configurations, p.repeats + 1, kBlasGflopsPerThread, kTensorAttentionGflops);
  return budget;
}

tensor::TensorTheory TensorLesson::theory_of(const TensorParams& p) const {
  const LayerShape& s = p.shape;
  const bool sp = s.sequence_parallel;
  const std::int64_t sbh = s.tokens() * s.hidden;
  const double t = s.ranks, ring_share = (t - 1) / t;  // of a buffer, sent by each rank in a reduce-scatter
  const tensor::Parallelism parallelism = sp ? tensor::Parallelism::TensorSequence : tensor::Parallelism::Tensor;
  tensor::TensorTheory out;
  out.allreduces_per_layer_fwd = sp ? 0 : 2;
  out.allreduces_per_layer_bwd = sp ? 0 : 2;
  out.reduce_scatters_per_layer_fwd = sp ? 2 : 0;
  out.all_gathers_per_layer_fwd = sp ? 2 : 0;
  out.reduce_scatters_per_layer_bwd = sp ? 2 : 0;
  out.all_gathers_per_layer_bwd = sp ? 4 : 0;
  out.comm_elements_per_allreduce = sbh;
  out.comm_bytes_per_allreduce_per_rank = 2 * ring_share * double(sbh) * 4;
  // Without SP: 4 all-reduces. With SP: 10 reduce-scatters and all-gathers of s b h, and the norms' 4h all-reduce.
  out.comm_bytes_per_step_per_rank =
      sp ? 10 * ring_share * double(sbh) * 4 + 2 * ring_share * 4.0 * double(s.hidden) * 4
         : 4 * out.comm_bytes_per_allreduce_per_rank;
  out.activation_bytes_per_layer = tensor::korthikanti_bytes(s, parallelism).total();
  out.activation_formula = tensor::korthikanti_formula(parallelism);
  out.activation_seq = s.seq;
  out.activation_batch = s.batch;
  out.activation_hidden = s.hidden;
  out.activation_heads = s.heads;
  out.activation_t = s.ranks;
  out.activation_sp = sp;
  out.activation_bytes_no_parallel = tensor::korthikanti_bytes(s, tensor::Parallelism::None).total();
  out.activation_bytes_tensor = tensor::korthikanti_bytes(s, tensor::Parallelism::Tensor).total();
  out.activation_bytes_tensor_sequence = tensor::korthikanti_bytes(s, tensor::Parallelism::TensorSequence).total();
  out.lab_activation_bytes_per_rank = tensor::lab_layer_bytes(s).total();
  out.lab_activation_formula = sp ? "s b h (66/t + 9 a s / (h t))" : "s b h (18 + 48/t + 9 a s / (h t))";
  out.params_per_rank = tensor::params_per_rank(s);
  out.flops_per_step_per_rank = step_flop(s) / t;
  return out;
}

std::shared_ptr<const tensor::TensorSteps> TensorLesson::step_data_of(const TensorParams& p) const {
  return tensor::make_steps(p, theory_of(p));
}

}  // namespace dlsys
