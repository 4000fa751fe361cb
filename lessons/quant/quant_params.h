#pragma once
// The quant lesson's parameters as read once from the checked values (the specs are in quant_lesson.cpp): the chosen
// quantization as a spec (its scheme and granularity as the kernels' enums) and the run's sizes.
#include <cstdint>

#include "kernels/quant/quantize.h"

namespace dlsys::quant {

struct QuantParams {
  QuantSpec spec;          // bits, scheme, granularity, block, double_quant
  std::int64_t n = 0;      // the timed GEMV's n x n weights
  int repeats = 0;         // timed GEMVs per format
  double outlier = 0;      // the factor of the largest activation channel
  int model_steps = 0;     // Adam steps of the model whose weights are quantized
  int threads = 0;         // for every GEMV format alike
  double max_minutes = 0;  // the run's limit
};

}  // namespace dlsys::quant
