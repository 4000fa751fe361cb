// The checkpointing lesson's run: the stack trained one step without checkpointing and one at every divisor k of L,
// each step's activation peak read from the memory ledger, its gradients compared bit for bit with the plain step's,
// and its time measured in alternation with the plain step's; on the CPU or on GPU 0 (checkpointing_devices.h), where
// the plain step's gradients are also held against the CPU's.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "engine/address_space.h"
#include "engine/measure.h"
#include "kernels/ddp/trainer.h"
#include "kernels/training/checkpointed_step.h"
#include "kernels/training/checkpointing_devices.h"
#include "lessons/checkpointing/checkpointing_lesson.h"
#include "lessons/common/run_plan.h"

namespace dlsys {

using checkpointing::CheckpointingParams;

namespace {

constexpr std::uint32_t kSeed = 22;
// The GPU's plain step against the CPU's: cuBLAS and OpenBLAS sum each product in other orders, and the difference
// grows through the 2 L products between a gradient and the loss (a few 1e-6 per product, relative to the largest
// gradient); 1e-3 leaves room for the deepest stacks and still catches a wrong layout or a missed layer.
constexpr double kGpuVsCpuTolerance = 1e-3;

// The plain step on the CPU, against which a GPU run's is checked (its own ledger: the run's counts the GPU's bytes).
void check_against_cpu(const training::StackShape& shape, const std::vector<float>& weights,
                       const training::DataSet& data, int rows, const std::vector<float>& gpu_gradients,
                       checkpointing::CheckpointingMeasured& m) {
  MemoryLedger cpu_ledger;
  std::vector<float> cpu_gradients(gpu_gradients.size());
  const double cpu_loss = training::train_step(shape, weights.data(), data.inputs.data(), data.targets.data(), rows,
                                               training::kKeepEverything, cpu_ledger, cpu_gradients.data());
  m.on_gpu = true;
  m.max_rel_err_gpu_vs_cpu = ddp::max_rel_err(gpu_gradients, cpu_gradients);
  m.loss_rel_err_gpu_vs_cpu = std::abs(m.loss - cpu_loss) / std::abs(cpu_loss);
  m.gpu_vs_cpu_tolerance = kGpuVsCpuTolerance;
}

template <class Device>
void run_on(const CheckpointingParams& p, const checkpointing::CheckpointingTheory& theory, RunContext& ctx,
            RunPlan& plan, RunResult& result) {
  const training::StackShape shape = p.shape();
  const std::vector<float> weights = training::initial_weights(shape, kSeed);
  const training::DataSet data = training::make_data_set(shape, p.rows, kSeed);
  const auto parameters = std::size_t(training::parameter_count(shape));
  Device device(shape, weights, data, p.rows, ctx.ledger);
  const CallTimer timer = device.timer();
  std::vector<float> plain_gradients(parameters), gradients(parameters);
  ctx.ledger.reset_peaks();
  checkpointing::CheckpointingMeasured m;
  device.step(training::kKeepEverything);
  m.loss = device.loss();
  device.gradients(plain_gradients);
  m.keep_all_peak_bytes = ctx.ledger.peak_bytes(training::kActivationTag);
  m.peaks_match_formula =
      m.keep_all_peak_bytes == training::step_activation_peak_bytes(shape, p.rows, training::kKeepEverything);
  m.all_gradients_identical = true;
  if (Device::kOnGpu) check_against_cpu(shape, weights, data, p.rows, plain_gradients, m);
  // The forward pass alone, every activation kept: the extra work a checkpointed step does.
  m.forward_us = measure([&] { device.forward(); }, MeasureOptions{.warmup = 1, .repeats = p.repeats},
                         [&] { ctx.control.check_cancelled(); }, timer)
                     .median_us;
  Series peaks =
      checkpointing::series_over_k("measured", "peak_measured", "peak activations (ledger)", "peak activations", "B");
  Series ratios = checkpointing::series_over_k("measured", "time_measured", "step time / plain step (measured)",
                                               "step time / plain step", "");
  std::int64_t least_peak = m.keep_all_peak_bytes + 1;
  for (int k : theory.divisors) {
    plan.start(fmt::format("checkpoint every k = {} layers", k));
    checkpointing::SegmentMeasured s;
    s.segment_layers = k;
    ctx.ledger.reset_peaks();
    device.step(k);
    const double loss = device.loss();
    device.gradients(gradients);
    s.peak_activation_bytes = ctx.ledger.peak_bytes(training::kActivationTag);
    s.peak_formula_bytes = training::step_activation_peak_bytes(shape, p.rows, k);
    s.gradients_identical =
        loss == m.loss && std::memcmp(gradients.data(), plain_gradients.data(), parameters * sizeof(float)) == 0;
    const auto [plain, checkpointed] =
        measure_pair([&] { device.step(training::kKeepEverything); }, [&] { device.step(k); },
                     MeasureOptions{.warmup = 0, .repeats = p.repeats}, [&] { ctx.control.check_cancelled(); }, timer);
    s.step_us = checkpointed.median_us;
    s.step_min_us = checkpointed.min_us;
    s.step_max_us = checkpointed.max_us;
    s.keep_all_us = plain.median_us;
    s.time_ratio = s.step_us / s.keep_all_us;
    m.peaks_match_formula = m.peaks_match_formula && s.peak_activation_bytes == s.peak_formula_bytes;
    m.all_gradients_identical = m.all_gradients_identical && s.gradients_identical;
    if (s.peak_activation_bytes < least_peak) {
      least_peak = s.peak_activation_bytes;
      m.measured_best_k = k;
    }
    if (k == p.segment_layers) {
      m.checkpointed_peak_bytes = s.peak_activation_bytes;
      m.keep_all_step_us = s.keep_all_us;
      m.checkpointed_step_us = s.step_us;
      m.time_ratio = s.time_ratio;
      m.predicted_time_ratio = 1 + m.forward_us / s.keep_all_us;
    }
    peaks.points.push_back(
        {double(k), double(s.peak_activation_bytes), double(s.peak_activation_bytes), double(s.peak_activation_bytes)});
    ratios.points.push_back(
        {double(k), s.time_ratio, checkpointed.min_us / s.keep_all_us, checkpointed.max_us / s.keep_all_us});
    result.backend.repeats = checkpointed.repeats;
    m.sweep.push_back(s);
  }
  result.backend.timer = Device::kTimer;
  if (Device::kOnGpu) {
    m.checks_wrong = !m.peaks_match_formula || !m.all_gradients_identical ||
                     m.max_rel_err_gpu_vs_cpu > kGpuVsCpuTolerance || m.loss_rel_err_gpu_vs_cpu > kGpuVsCpuTolerance;
    result.backend.notes.push_back(
        "activations in GPU 0's memory, from a stream-ordered pool of the run's own, counted in the ledger while each "
        "buffer lives; the step enqueued on the default stream, timed with CUDA events around it");
    result.backend.notes.push_back(fmt::format(
        "the plain step's gradients against the CPU's (OpenBLAS): {:.1e} of the largest, loss {:.1e} (tolerance {:g})",
        m.max_rel_err_gpu_vs_cpu, m.loss_rel_err_gpu_vs_cpu, m.gpu_vs_cpu_tolerance));
  }
  const auto steps = checkpointing::make_steps(p, theory);
  result.series = {peaks, steps->peak_formula, steps->keep_all_line, ratios, steps->time_formula};
  result.measured = make_values(std::move(m));
}

}  // namespace

RunResult CheckpointingLesson::run_with(const CheckpointingParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const checkpointing::CheckpointingTheory theory = theory_of(p);
  RunPlan plan(ctx.control, 1 + double(theory.divisors.size()));
  set_openblas_threads(1);  // a pool waiting on a core another program holds made a quick run 7x slower
  plan.start("the plain step: every layer's activations kept");
  if (ctx.backend == BackendKind::Cuda)
    run_on<training::CudaCheckpointing>(p, theory, ctx, plan, result);
  else
    run_on<training::CpuCheckpointing>(p, theory, ctx, plan, result);
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
