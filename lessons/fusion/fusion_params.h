#pragma once
// The fusion lesson's parameters as read once from the checked values (the specs are in fusion_lesson.cpp).
#include <cstdint>
#include <vector>

#include "engine/params.h"
#include "kernels/fusion/fusion_math.h"

namespace dlsys::fusion {

struct FusionParams {
  std::int64_t rows = 0, cols = 0;  // x is rows x cols fp32
  Bias bias = Bias::Broadcast;      // of ReLU(x + b)
  std::vector<int> chain;           // pointwise operations per chain
  std::int64_t small_bytes = 0;     // one array of ReLU(x + b) for the in-cache step
  int repeats = 0;
  int threads = 0;
  double max_minutes = 0;
};

// The bias choices in the order of Bias, as the spec lists them and the theory names them.
const std::vector<std::string>& bias_choices();
FusionParams read_fusion_params(const ParamValues& values);

}  // namespace dlsys::fusion
