#pragma once
// The mixture-of-experts lesson's parameters as read once from the checked values (the specs are in moe_lesson.cpp).
#include <cstdint>
#include <string>

#include "kernels/moe/moe_shape.h"
#include "lessons/common/process_placement.h"

namespace dlsys::moe_lesson {

struct MoeParams {
  moe::MoeShape shape;    // tokens per rank, hidden, ffn, experts, top_k, capacity_factor, ranks
  bool aux_loss = false;  // train the router on Switch's balance loss before the layer runs
  double skew = 0;        // the router's lean towards the first experts: Zipf exponent of its bias
  double link_gbps = 0;   // the links between rank threads emulate wires of this bandwidth; 0: memory copies only
  int repeats = 0;
  double max_minutes = 0;
  Launcher launcher = Launcher::Threads;  // the ranks as threads of this process, or one MPI process each
  std::string ranks_text;                 // 'ranks' as given, for a refusal to quote
};

// Router training when the balance loss is on: steps of gradient descent at this rate, on rank 0's micro-batch.
inline constexpr int kBalanceSteps = 100;
inline constexpr double kBalanceLearningRate = 2.0;

}  // namespace dlsys::moe_lesson
