#pragma once
// The one problem every format trains on: a seeded teacher-student regression small enough to train four times in
// seconds on two cores. Its loss is multiplied by `loss_weight` (a parameter) so that its gradients sit where a large
// network's do, far below 1 (see the lesson text).
#include "kernels/precision/mixed_precision_mlp.h"

namespace dlsys::precision {

inline MlpShape precision_mlp_shape() { return {.inputs = 16, .hidden = 64, .outputs = 16}; }

inline ProblemSpec precision_problem_spec() {
  return {.shape = precision_mlp_shape(),
          .batch = 256,
          .batches = 16,
          .target_scale = 1.0,
          .noise = 0.05,
          .teacher_gain = 1.0,
          .seed = 1};
}

// Floating-point operations of one training step (forward and backward, 2 per multiply-add), for run-time estimates.
inline double precision_step_flops() {
  const MlpShape s = precision_mlp_shape();
  const ProblemSpec p = precision_problem_spec();
  return 6.0 * p.batch * (double(s.inputs) * s.hidden + double(s.hidden) * s.hidden + double(s.hidden) * s.outputs);
}

}  // namespace dlsys::precision
