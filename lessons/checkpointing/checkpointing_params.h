#pragma once
// The checkpointing lesson's parameters as read once from the checked values (the specs are in
// checkpointing_lesson.cpp).
#include <cstdint>
#include <string>

#include "kernels/training/mlp_stack.h"

namespace dlsys::checkpointing {

struct CheckpointingParams {
  // The lab's stack and its training step.
  int layers = 0;          // L
  int segment_layers = 0;  // k: a checkpoint every k layers; must divide L
  int width = 0;           // w
  int expansion = 0;       // e: the hidden layer is e w wide (the course's block: 4)
  int rows = 0;            // r: the batch's rows
  int repeats = 0;
  // The calculator's model: a preset, or a config.json that overrides it.
  std::string model;
  std::string config;
  std::int64_t seq = 0, micro_batch = 0;
  double max_minutes = 0;

  training::StackShape shape() const { return {.layers = layers, .width = width, .expansion = expansion}; }
};

}  // namespace dlsys::checkpointing
