#include "lessons/zero/zero_steps.h"

#include <fmt/format.h>

#include "kernels/training/mlp_stack.h"
#include "kernels/zero/sharded_training.h"
#include "kernels/zero/zero_memory.h"
#include "lessons/zero/zero_calculator.h"
#include "lessons/zero/zero_lesson.h"

namespace dlsys::zero_lesson {

std::vector<StageBar> stage_bars(double psi, double ranks, double activation_bytes) {
  std::vector<StageBar> bars;
  for (int stage = 0; stage <= zero::kMaxStage; ++stage) {
    const zero::ModelStateBytes b = zero::model_state_bytes(stage, psi, ranks);
    bars.push_back({stage, b.weights, b.gradients, b.optimizer, activation_bytes,
                    zero::comm_elements_per_step(stage, psi), zero::ring_comm_elements_per_step(stage, psi, ranks)});
  }
  return bars;
}

namespace {

double states(int stage, double psi, double ranks) { return zero::model_state_bytes(stage, psi, ranks).total(); }

std::vector<WorkedNumber> course_numbers() {
  return {
      {"one parameter, mixed-precision Adam", "2 + 2 + 4 + 4 + 4 B", 16},
      {"7B parameters, 16-bit weights alone (inference)", "7e9 x 2 B", 7e9 * 2},
      {"7B parameters, training model states (the course's 112 GB)", "7e9 x 16 B", states(0, 7e9, 1)},
  };
}

std::vector<WorkedNumber> paper_numbers() {
  const double psi = 7.5e9, n = 64;
  return {
      {"stage 0 (DDP)", "(2 + 2 + 12) x 7.5e9", states(0, psi, n)},
      {"stage 1", "(2 + 2) x 7.5e9 + 12 x 7.5e9 / 64", states(1, psi, n)},
      {"stage 2", "2 x 7.5e9 + (2 + 12) x 7.5e9 / 64", states(2, psi, n)},
      {"stage 3", "(2 + 2 + 12) x 7.5e9 / 64", states(3, psi, n)},
  };
}

std::vector<WorkedNumber> gpt3_numbers() {
  const double psi = 175e9;
  CalculatorInput in;
  in.parameters = psi;
  in.gpu_bytes = 80e9;
  const std::int64_t n3 = min_ranks_to_fit(in, 3);
  return {
      {"fp32 weights alone: the lecture's \"700 GB\"", "175e9 x 4 B", 4 * psi},
      {"16-bit weights alone", "175e9 x 2 B", 2 * psi},
      {"training model states, replicated (DDP)", "175e9 x 16 B", states(0, psi, 1)},
      {"stage 3 on 64 ranks, per rank", "175e9 x 16 B / 64", states(3, psi, 64)},
      {"stage 3: the fewest 80 GB GPUs for the model states alone", fmt::format("N = {}: 175e9 x 16 B / {}", n3, n3),
       states(3, psi, double(n3))},
  };
}

Series factor_series(const char* id, const std::string& name, const char* role) {
  return Series{id, name, role, "ranks N", "", "stage 0's bytes / this stage's", "x", {}};
}

std::vector<Series> factor_curves() {
  Series s1 = factor_series("factor_stage1", "stage 1: 16/(4+12/N)", "theory");
  Series s2 = factor_series("factor_stage2", "stage 2: 16/(2+14/N)", "theory");
  Series s3 = factor_series("factor_stage3", "stage 3: N", "theory");
  Series l1 = factor_series("limit_stage1", "lecture's 4x", "theory");
  Series l2 = factor_series("limit_stage2", "lecture's 8x", "theory");
  for (double ranks : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024}) {
    auto add = [&](Series& s, double y) { s.points.push_back({ranks, y, y, y}); };
    add(s1, zero::reduction_factor(1, ranks));
    add(s2, zero::reduction_factor(2, ranks));
    add(s3, zero::reduction_factor(3, ranks));
    add(l1, zero::reduction_limit(1, ranks));
    add(l2, zero::reduction_limit(2, ranks));
  }
  return {s1, s2, s3, l1, l2};
}

}  // namespace

std::shared_ptr<const ZeroSteps> make_steps(const ZeroParams& params, const ZeroTheory& theory) {
  auto steps = std::make_shared<ZeroSteps>();
  steps->mode = params.mode;
  steps->theory = theory;
  steps->bars = stage_bars(theory.parameters, theory.ranks, theory.activation_bytes_per_rank);
  steps->course = course_numbers();
  steps->paper = paper_numbers();
  steps->gpt3 = gpt3_numbers();
  steps->factors = factor_curves();
  const training::StackShape shape{.layers = params.layers, .width = params.width};
  steps->lab_parameters = training::parameter_count(shape);
  steps->lab_ranks = params.n;
  steps->lab_shards_evenly = zero::shards_evenly(shape, steps->lab_ranks);
  if (steps->lab_shards_evenly)
    for (int stage = 0; stage <= zero::kMaxStage; ++stage)
      steps->lab_model_state_bytes.push_back(
          zero::exact_model_state_bytes(stage, steps->lab_parameters, steps->lab_ranks).total());
  steps->op_order = zero_op_order(params);
  return steps;
}

}  // namespace dlsys::zero_lesson
