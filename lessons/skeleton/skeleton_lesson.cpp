#include "lessons/skeleton/skeleton_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "lessons/common/repeats_param.h"
#include "lessons/common/run_plan.h"
#include "lessons/common/run_time_limit.h"

namespace dlsys {

using skeleton::Op;
using skeleton::SkeletonMeasured;
using skeleton::SkeletonParams;
using skeleton::SkeletonTheory;

namespace {
const std::vector<std::string> kOpChoices = {"scale", "axpy"};  // in the order of skeleton::Op
}  // namespace

std::vector<ParamSpec> SkeletonLesson::params() const {
  return {
      {.key = "n",
       .label = "elements n",
       .type = ParamType::Integer,
       .default_text = "1048576",
       .min = 1,
       .max = 1 << 30,
       .help = "floats per array"},
      {.key = "op",
       .label = "operation",
       .type = ParamType::Choice,
       .default_text = "scale",
       .choices = kOpChoices,
       .help = "scale: y = 2x; axpy: y = 2x + y"},
      repeats_param("timed calls after one checked warm-up call"),
      max_minutes_param(),
  };
}

SkeletonParams SkeletonLesson::read_params(const ParamValues& values) const {
  return {.n = values.integer("n"),
          .op = static_cast<Op>(choice_index(values, "op", kOpChoices)),
          .repeats = static_cast<int>(values.integer("repeats")),
          .max_minutes = values.real("max_minutes")};
}

SkeletonTheory SkeletonLesson::theory_of(const SkeletonParams& p) const {
  SkeletonTheory t;
  t.arrays = p.op == Op::Axpy ? 3 : 2;  // axpy reads x and y and writes y
  t.flop = (p.op == Op::Axpy ? 2.0 : 1.0) * double(p.n);
  t.bytes = 4.0 * t.arrays * double(p.n);
  t.intensity = t.flop / t.bytes;
  return t;
}

RunBudget SkeletonLesson::budget_of(const SkeletonParams& p, BackendKind) const {
  RunBudget budget;
  budget.host_bytes = 2 * 4.0 * double(p.n);                          // x and y
  budget.cpu_seconds = (1.0 + p.repeats) * theory_of(p).bytes / 1e9;  // memory passes at 1 GB/s
  budget.max_minutes = p.max_minutes;
  budget.sizes = "parameter 'n'";
  budget.cpu_work = fmt::format("{} calls over {} floats at 1 GB/s", 1 + p.repeats, p.n);
  budget.smaller = "n or repeats";
  return budget;
}

RunResult SkeletonLesson::run_with(const SkeletonParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  RunPlan plan(ctx.control, 2);
  plan.start("filling the arrays");
  const auto n = static_cast<std::size_t>(p.n);
  HostBuffer<float> x(ctx.ledger, "x", n), y(ctx.ledger, "y", n);
  for (std::size_t i = 0; i < n; ++i) x.data()[i] = float(i % 7);
  auto call = [&] {
    for (std::size_t i = 0; i < n; ++i) y.data()[i] = 2 * x.data()[i] + (p.op == Op::Axpy ? y.data()[i] : 0.0f);
  };
  auto check = [&] {  // after one call from y = 0: y = 2x for both operations
    double err = 0;
    for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::fabs(double(y.data()[i]) - 2.0 * x.data()[i]));
    return err;
  };
  std::fill(y.data(), y.data() + n, 0.0f);
  plan.start(fmt::format("y = 2x{} on {} floats", p.op == Op::Axpy ? " + y" : "", n));
  const CheckedTiming point = measure_checked(call, check, 0.0, MeasureOptions{.warmup = 1, .repeats = p.repeats},
                                              [&] { ctx.control.check_cancelled(); });
  SkeletonMeasured m;
  m.time_us = point.time.median_us;
  m.time_min_us = point.time.min_us;
  m.time_max_us = point.time.max_us;
  m.gbps = theory_of(p).bytes / (m.time_us * 1e3);
  m.max_abs_err = point.max_error;
  m.wrong = point.wrong() ? 1 : 0;
  result.backend.repeats = point.time.repeats;
  result.measured = make_values(std::move(m));
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
