#pragma once
// What the fusion steps draw before a run: the memory operations one element of y = ReLU(x + b) and of
// x.cos().cos() goes through, unfused and fused, in order and by kernel launch, with what each costs in main-memory
// traffic for the chosen bias.
#include <memory>
#include <string>
#include <vector>

#include "engine/params.h"
#include "kernels/fusion/fusion_math.h"
#include "lessons/common/step_data.h"
#include "lessons/fusion/fusion_params.h"
#include "lessons/fusion/fusion_values.h"

namespace dlsys::fusion {

enum class OpKind {
  Read,      // an array element read from main memory
  Write,     // an element written to main memory
  Cached,    // read, but from a cache: the broadcast bias after its first use
  Register,  // a value kept in a register between two operations: no memory at all
  Compute,   // arithmetic on registers
};

struct ElementOp {
  int launch = 0;  // which kernel launch it belongs to (0-based)
  OpKind kind = OpKind::Read;
  std::string what;  // "read x[i]", "t = x[i] + b[j]", ...
};

// One way to compute an element: its operations in order and what they add up to.
struct OpSequence {
  std::string name;                       // "unfused: two kernels"
  std::vector<std::string> launch_names;  // "add", "relu"
  std::vector<ElementOp> ops;
  int memory_ops = 0;  // operations that reach main memory (Read and Write)
  double bytes_per_element = 0;
};

struct FusionSteps final : StepData {
  std::string bias;  // broadcast | full
  OpSequence add_relu_unfused, add_relu_fused;
  OpSequence cos_unfused, cos_fused;
  FusionTheory theory;
};

OpSequence add_relu_sequence(Bias bias, bool fused);
OpSequence cos_cos_sequence(bool fused);
std::shared_ptr<const FusionSteps> make_steps(const FusionParams& params);

}  // namespace dlsys::fusion
