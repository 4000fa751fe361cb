#pragma once
// What the ZeRO lesson's steps draw before a run: the 16 bytes of one parameter, the course's and the paper's worked
// numbers (and what GPT-3 really takes), per-rank bars for every stage at the chosen model and N, the exact reduction
// factors against N beside the lecture's limits, and the lab's own stack sized by the same formulas.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/step_data.h"
#include "lessons/zero/zero_params.h"
#include "lessons/zero/zero_values.h"

namespace dlsys::zero_lesson {

// One rank's bytes at one stage, by kind, as the paper's figure 1 stacks them.
struct StageBar {
  int stage = 0;
  double weights = 0, gradients = 0, optimizer = 0, activations = 0;
  double comm_elements = 0;       // per step, the paper's count: 2 Psi, or 3 Psi at stage 3
  double ring_comm_elements = 0;  // what a ring sends per rank: k (N-1)/N Psi
  double total() const { return weights + gradients + optimizer + activations; }
};

// A worked number: what it is, the arithmetic, the bytes.
struct WorkedNumber {
  std::string what;
  std::string arithmetic;
  double bytes = 0;
};

struct ZeroSteps final : StepData {
  Mode mode = Mode::Run;             // theory: no run measures anything
  ZeroTheory theory;                 // at the chosen parameters
  std::vector<StageBar> bars;        // stages 0-3, the chosen model and N
  std::vector<WorkedNumber> course;  // 16 bytes a parameter, 7B -> 112 GB
  std::vector<WorkedNumber> paper;   // 7.5B on 64 ranks: 120, 31.4, 16.6, 1.9 GB
  std::vector<WorkedNumber> gpt3;    // 175B: the lecture's 700 GB and what training takes
  std::vector<Series> factors;       // stage 0 over stage s against N: exact curves (theory) and the limits
  // The lab's stack at the chosen N: Psi and the formula's exact bytes per rank at every stage.
  std::int64_t lab_parameters = 0;
  int lab_ranks = 0;
  bool lab_shards_evenly = false;
  std::vector<std::int64_t> lab_model_state_bytes;  // stages 0-3
  std::vector<Timeline> op_order;                   // one step's operations at stages 0-3, in cost units (no run)
};

std::shared_ptr<const ZeroSteps> make_steps(const ZeroParams& params, const ZeroTheory& theory);

// The bars of the paper's figure 1 for Psi parameters on N ranks, with `activation_bytes` on top of each.
std::vector<StageBar> stage_bars(double psi, double ranks, double activation_bytes);

}  // namespace dlsys::zero_lesson
