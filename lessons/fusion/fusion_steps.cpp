#include "lessons/fusion/fusion_steps.h"

#include "lessons/fusion/fusion_lesson.h"

namespace dlsys::fusion {

namespace {

OpSequence finish(OpSequence s) {
  for (const ElementOp& op : s.ops)
    if (op.kind == OpKind::Read || op.kind == OpKind::Write) ++s.memory_ops;
  s.bytes_per_element = kElementBytes * s.memory_ops;
  return s;
}

}  // namespace

OpSequence add_relu_sequence(Bias bias, bool fused) {
  const OpKind bias_read = bias == Bias::Full ? OpKind::Read : OpKind::Cached;
  if (fused)
    return finish({"fused: one kernel",
                   {"add_bias_relu"},
                   {{0, OpKind::Read, "read x[i]"},
                    {0, bias_read, bias == Bias::Full ? "read b[i]" : "read b[j] (from cache)"},
                    {0, OpKind::Compute, "t = x + b"},
                    {0, OpKind::Register, "t stays in a register"},
                    {0, OpKind::Compute, "y = max(t, 0)"},
                    {0, OpKind::Write, "write y[i]"}}});
  return finish({"unfused: two kernels",
                 {"add_bias", "relu"},
                 {{0, OpKind::Read, "read x[i]"},
                  {0, bias_read, bias == Bias::Full ? "read b[i]" : "read b[j] (from cache)"},
                  {0, OpKind::Compute, "t = x + b"},
                  {0, OpKind::Write, "write t[i]"},
                  {1, OpKind::Read, "read t[i]"},
                  {1, OpKind::Compute, "y = max(t, 0)"},
                  {1, OpKind::Write, "write y[i]"}}});
}

OpSequence cos_cos_sequence(bool fused) {
  if (fused)
    return finish({"fused: one kernel",
                   {"cos_cos"},
                   {{0, OpKind::Read, "read x[i]"},
                    {0, OpKind::Compute, "c = cos(x)"},
                    {0, OpKind::Register, "c stays in a register"},
                    {0, OpKind::Compute, "y = cos(c)"},
                    {0, OpKind::Write, "write y[i]"}}});
  return finish({"unfused: two kernels",
                 {"cos", "cos"},
                 {{0, OpKind::Read, "read x[i]"},
                  {0, OpKind::Compute, "x1 = cos(x)"},
                  {0, OpKind::Write, "write x1[i]"},
                  {1, OpKind::Read, "read x1[i]"},
                  {1, OpKind::Compute, "x2 = cos(x1)"},
                  {1, OpKind::Write, "write x2[i]"}}});
}

std::shared_ptr<const FusionSteps> make_steps(const FusionParams& params) {
  auto s = std::make_shared<FusionSteps>();
  s->theory = fusion_theory(params);
  s->bias = s->theory.bias;
  s->add_relu_unfused = add_relu_sequence(params.bias, false);
  s->add_relu_fused = add_relu_sequence(params.bias, true);
  s->cos_unfused = cos_cos_sequence(false);
  s->cos_fused = cos_cos_sequence(true);
  return s;
}

}  // namespace dlsys::fusion
