#include "lessons/fusion/fusion_lesson.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/backend.h"
#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/fusion/fusion_math.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/repeats_param.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/fusion/fusion_run.h"
#include "lessons/fusion/fusion_steps.h"

namespace dlsys {

using fusion::Bias;
using fusion::FusionTheory;

std::vector<ParamSpec> FusionLesson::params() const {
  return {
      {.key = "rows",
       .label = "rows B",
       .type = ParamType::Integer,
       .default_text = "4096",
       .min = 1,
       .max = 65536,
       .help = "x is B x C fp32; the course's shape is 4096 x 4096 (64 MiB per array)"},
      {.key = "cols",
       .label = "columns C",
       .type = ParamType::Integer,
       .default_text = "4096",
       .min = 1,
       .max = 65536,
       .help = "a broadcast bias has C elements"},
      {.key = "bias",
       .label = "bias of ReLU(x + b)",
       .type = ParamType::Choice,
       .default_text = "broadcast",
       .choices = {"broadcast", "full"},
       .help = "broadcast: shape C, as the course's code (stays in cache); full: shape B x C"},
      {.key = "chain",
       .label = "chain lengths L",
       .type = ParamType::SizeList,
       .default_text = "1,2,3,4,5,6,7,8",
       .min = 1,
       .max = 16,
       .help = "pointwise operations per chain, unfused (L passes) and fused (one); '1..8' doubles: 1, 2, 4, 8"},
      {.key = "small",
       .label = "in-cache array size",
       .type = ParamType::Bytes,
       .default_text = "64KiB",
       .min = 4096,
       .max = 16.0 * 1024 * 1024,
       .help = "one array of ReLU(x + b) for the step where everything fits in cache"},
      repeats_param("timed calls per measurement, after one warm-up"),
      cpu_threads_param("for every kernel alike"),
      max_minutes_param(),
  };
}

void FusionLesson::validate(const ParamValues& p, BackendKind backend) const {
  const double elements = double(p.integer("rows")) * double(p.integer("cols"));
  const double need = fusion::run_bytes(p);
  const HostMemory host = host_memory();
  if (!host.fits(need))
    throw BadInput(fmt::format(
        "parameters 'rows' and 'cols': {} x {} needs {} (four arrays of {} elements and a full bias) but only {} of "
        "host memory is available; lower rows or cols",
        p.integer("rows"), p.integer("cols"), format_bytes_both(need), elements,
        format_bytes_both(host.budget_bytes())));
  // On a GPU the same arrays live in device memory too (the host keeps its copies to check the outputs against).
  const DeviceMemory device = device_memory();
  if (backend == BackendKind::Cuda && !device.fits(need))
    throw BadInput(fmt::format(
        "parameters 'rows' and 'cols': {} x {} needs {} of GPU memory but GPU 0 has {} free; lower rows or cols",
        p.integer("rows"), p.integer("cols"), format_bytes_both(need), format_bytes_both(device.free_bytes)));
  refuse_if_longer_than_limit(p, fusion::run_seconds_estimate(p),
                              fmt::format("every pass's bytes over {} x {} at 1 GB/s, each timed call and warm-up",
                                          p.integer("rows"), p.integer("cols")),
                              "rows, cols, chain or repeats");
}

FusionTheory fusion_theory(const ParamValues& p) {
  FusionTheory t;
  t.rows = p.integer("rows");
  t.cols = p.integer("cols");
  t.bias = p.text("bias");
  const Bias bias = t.bias == "full" ? Bias::Full : Bias::Broadcast;
  t.bytes_unfused = fusion::bytes_unfused(bias, t.rows, t.cols);
  t.bytes_fused = fusion::bytes_fused(bias, t.rows, t.cols);
  t.byte_ratio = t.bytes_unfused / t.bytes_fused;
  t.launches_unfused = fusion::kLaunchesUnfused;
  t.launches_fused = fusion::kLaunchesFused;
  t.memory_ops_unfused = fusion::memory_ops_unfused(bias);
  t.memory_ops_fused = fusion::memory_ops_fused(bias);
  t.byte_ratio_broadcast =
      fusion::bytes_per_element_unfused(Bias::Broadcast) / fusion::bytes_per_element_fused(Bias::Broadcast);
  t.byte_ratio_full = fusion::bytes_per_element_unfused(Bias::Full) / fusion::bytes_per_element_fused(Bias::Full);
  t.cos_accesses_unfused = fusion::kCosCosAccessesUnfused;
  t.cos_accesses_fused = fusion::kCosCosAccessesFused;
  for (double length : p.list("chain")) {
    t.chain_lengths.push_back(length);
    t.chain_bytes_per_element_unfused.push_back(fusion::chain_bytes_per_element_unfused(std::int64_t(length)));
  }
  t.chain_bytes_per_element_fused = fusion::kChainBytesPerElementFused;
  t.small_bytes = double(p.integer("small"));
  return t;
}

std::shared_ptr<const LessonValues> FusionLesson::theory(const ParamValues& p) const {
  return make_values(fusion_theory(p));
}

std::shared_ptr<const StepData> FusionLesson::step_data(const ParamValues& p) const { return fusion::make_steps(p); }

RunResult FusionLesson::run(RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  fusion::run_fusion(ctx, result);
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
