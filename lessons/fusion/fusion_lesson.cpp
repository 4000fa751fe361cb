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
#include "lessons/fusion/fusion_size.h"
#include "lessons/fusion/fusion_steps.h"

namespace dlsys {

using fusion::Bias;
using fusion::FusionParams;
using fusion::FusionTheory;

std::vector<ParamSpec> FusionLesson::params() const {
  return {
      {.key = "rows",
       .label = "rows B",
       .type = ParamType::Integer,
       .default_text = std::to_string(fusion::default_side()),
       .min = 1,
       .max = 65536,
       .help = "x is B x C fp32; the course's shape is 4096 x 4096 (64 MiB per array), and the default is larger "
               "where x, t and y together fit in this machine's last-level cache (then they never reach memory)"},
      {.key = "cols",
       .label = "columns C",
       .type = ParamType::Integer,
       .default_text = std::to_string(fusion::default_side()),
       .min = 1,
       .max = 65536,
       .help = "a broadcast bias has C elements"},
      {.key = "bias",
       .label = "bias of ReLU(x + b)",
       .type = ParamType::Choice,
       .default_text = "broadcast",
       .choices = fusion::bias_choices(),
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

namespace fusion {

const std::vector<std::string>& bias_choices() {
  static const std::vector<std::string> choices = {"broadcast", "full"};  // in the order of Bias
  return choices;
}

FusionParams read_fusion_params(const ParamValues& values) {
  FusionParams p;
  p.rows = values.integer("rows");
  p.cols = values.integer("cols");
  p.bias = static_cast<Bias>(choice_index(values, "bias", bias_choices()));
  for (double length : values.list("chain")) p.chain.push_back(static_cast<int>(length));
  p.small_bytes = values.integer("small");
  p.repeats = static_cast<int>(values.integer("repeats"));
  p.threads = static_cast<int>(values.integer("threads"));
  p.max_minutes = values.real("max_minutes");
  return p;
}

}  // namespace fusion

FusionParams FusionLesson::read_params(const ParamValues& values) const { return fusion::read_fusion_params(values); }

// The memory checks keep their own messages (the arrays they count); the time check is the budget's.
void FusionLesson::check_params(const FusionParams& p, BackendKind backend) const {
  const double elements = double(p.rows) * double(p.cols);
  const double need = fusion::run_bytes(p);
  const HostMemory host = host_memory();
  if (!host.fits(need))
    throw BadInput(fmt::format(
        "parameters 'rows' and 'cols': {} x {} needs {} (four arrays of {} elements and a full bias) but only {} of "
        "host memory is available; lower rows or cols",
        p.rows, p.cols, format_bytes_both(need), elements, format_bytes_both(host.budget_bytes())));
  // On a GPU the same arrays live in device memory too (the host keeps its copies to check the outputs against).
  const DeviceMemory device = device_memory();
  if (backend == BackendKind::Cuda && !device.fits(need))
    throw BadInput(
        fmt::format("parameters 'rows' and 'cols': {} x {} needs {} of GPU memory but GPU 0 has {} free; lower rows "
                    "or cols",
                    p.rows, p.cols, format_bytes_both(need), format_bytes_both(device.free_bytes)));
}

RunBudget FusionLesson::budget_of(const FusionParams& p, BackendKind) const {
  return {
      .cpu_seconds = fusion::run_seconds_estimate(p),
      .max_minutes = p.max_minutes,
      .cpu_work = fmt::format("every pass's bytes over {} x {} at 1 GB/s, each timed call and warm-up", p.rows, p.cols),
      .smaller = "rows, cols, chain or repeats"};
}

FusionTheory fusion_theory(const FusionParams& p) {
  FusionTheory t;
  t.rows = p.rows;
  t.cols = p.cols;
  t.bias = fusion::bias_choices()[static_cast<std::size_t>(p.bias)];
  t.bytes_unfused = fusion::bytes_unfused(p.bias, t.rows, t.cols);
  t.bytes_fused = fusion::bytes_fused(p.bias, t.rows, t.cols);
  t.byte_ratio = t.bytes_unfused / t.bytes_fused;
  t.launches_unfused = fusion::kLaunchesUnfused;
  t.launches_fused = fusion::kLaunchesFused;
  t.memory_ops_unfused = fusion::memory_ops_unfused(p.bias);
  t.memory_ops_fused = fusion::memory_ops_fused(p.bias);
  t.byte_ratio_broadcast =
      fusion::bytes_per_element_unfused(Bias::Broadcast) / fusion::bytes_per_element_fused(Bias::Broadcast);
  t.byte_ratio_full = fusion::bytes_per_element_unfused(Bias::Full) / fusion::bytes_per_element_fused(Bias::Full);
  t.cos_accesses_unfused = fusion::kCosCosAccessesUnfused;
  t.cos_accesses_fused = fusion::kCosCosAccessesFused;
  for (int length : p.chain) {
    t.chain_lengths.push_back(length);
    t.chain_bytes_per_element_unfused.push_back(fusion::chain_bytes_per_element_unfused(length));
  }
  t.chain_bytes_per_element_fused = fusion::kChainBytesPerElementFused;
  t.small_bytes = double(p.small_bytes);
  return t;
}

FusionTheory FusionLesson::theory_of(const FusionParams& p) const { return fusion_theory(p); }

std::shared_ptr<const fusion::FusionSteps> FusionLesson::step_data_of(const FusionParams& p) const {
  return fusion::make_steps(p);
}

RunResult FusionLesson::run_with(const FusionParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  fusion::run_fusion(p, ctx, result);
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
