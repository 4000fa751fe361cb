#pragma once
// The LoRA lesson's parameters as read once from the checked values (the specs are in lora_lesson.cpp).
#include <cstdint>
#include <string>

namespace dlsys::lora_lesson {

enum class Targets { Attention, AllLinear };  // q, k, v, o; or every linear layer of the blocks

struct LoraParams {
  // The layer trained in a run: W (d, k), a target W* = W + a rank-true_rank update + noise.
  std::int64_t d = 0, k = 0;
  int true_rank = 0;
  double noise = 0;  // the noise's share of the loss (the update's is 1)
  double alpha = 0;  // LoRA's scale is alpha / r
  int steps = 0;
  double lr = 0;  // Adam's peak learning rate
  int r = 0;      // QLoRA's rank in the run, and the calculator's
  // The calculator's model: a preset, or a config.json that overrides it.
  std::string model;
  std::string config;
  Targets targets = Targets::Attention;
  std::int64_t micro_batch = 0, seq = 0;
  // The inference layer, timed with the adapter merged and unmerged: serve_tokens inputs through a square
  // serve_width x serve_width projection.
  std::int64_t serve_width = 0, serve_tokens = 0;
  double max_minutes = 0;
};

}  // namespace dlsys::lora_lesson
