#pragma once
// The parameters the `bubble` and `schedules` lessons share, read once from the checked values (the specs are
// pipeline_lesson::param_specs). Checks across them are in setup_of (pipeline_lesson.h).
#include <string>
#include <vector>

#include "engine/params.h"
#include "kernels/pipeline/executor.h"
#include "kernels/pipeline/schedule.h"

namespace dlsys::pipeline_lesson {

// What the b cost means, in the order of the spec's choices: the full backward (DeepSeek-V3) or the input gradient
// alone (zero-bubble paper).
enum class Notation { Full, Input };
const std::vector<std::string>& notation_choices();

struct PipelineParams {
  pipeline::ScheduleKind schedule = pipeline::ScheduleKind::GPipe;
  int p = 0;  // pipeline devices
  int m = 0;  // micro-batches
  int v = 0;  // chunks per device (interleaved)
  Notation notation = Notation::Full;
  double f = 0, b = 0, w = 0, fb = 0, p2p = 0;  // cost units
  std::string b_text, w_text, fb_text;          // b, w and fb as written, for the messages that quote them
  int imbalance = 1;                            // MLP blocks of the last model stage
  int hidden = 0;
  int microbatch = 0;  // rows per micro-batch
  pipeline::ExecutionMode mode = pipeline::ExecutionMode::Auto;
  int repeats = 0;
  double max_minutes = 0;
  std::vector<int> sweep;  // bubble only: the m values of the measured sweep
  std::string sweep_text;
};

// Reads every shared parameter, and the sweep where the lesson has one.
PipelineParams read_pipeline_params(const ParamValues& values);

}  // namespace dlsys::pipeline_lesson
