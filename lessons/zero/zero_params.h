#pragma once
// The ZeRO lesson's parameters as read once from the checked values (the specs are in zero_lesson.cpp).
#include <cstdint>
#include <string>

#include "kernels/precision/format.h"

namespace dlsys::zero_lesson {

enum class Mode { Run, Theory };  // run: train the lab's stack at stages 0-3; theory: the calculator alone

struct ZeroParams {
  Mode mode = Mode::Run;
  int n = 0;      // data-parallel ranks N
  int stage = 0;  // 0-3
  // The lab's stack and its training (a run).
  int layers = 0, width = 0;
  int rows = 0;  // per rank
  int steps = 0;
  precision::Format dtype = precision::Format::Bf16;  // bf16 or fp16
  // The calculator's model: params, or a preset (model) or a config.json (config), which override it.
  double params = 0;
  std::string model;   // "none" or a preset's name
  std::string config;  // a path, or empty
  std::string gpu;     // a datasheet GPU's id
  double gpu_gb = 0;   // 0: the chosen GPU's memory
  std::int64_t micro_batch = 0, seq = 0;
  bool checkpointing = false;
  double max_minutes = 0;  // the run's limit
};

}  // namespace dlsys::zero_lesson
