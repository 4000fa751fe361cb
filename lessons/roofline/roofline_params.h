#pragma once
// The roofline lesson's parameters as read once from the checked values (the specs are in roofline_lesson.cpp).
#include <cstdint>
#include <vector>

#include "engine/params.h"

namespace dlsys::roofline {

struct RooflineParams {
  std::vector<std::int64_t> k;  // the sweep's FMAs per element
  std::int64_t bytes = 0;       // each array of STREAM, the sweep and softmax, and the decode weights
  std::int64_t gemm_n = 0;      // n x n x n for the placed matmul kernels
  std::int64_t attention_n = 0;
  std::int64_t model_dim = 0;      // the decode GEMV's columns, the prefill GEMM's d x d
  std::int64_t prompt_tokens = 0;  // the prefill GEMM's rows
  std::vector<std::int64_t> tiny_sizes;
  int repeats = 0;
  int threads = 0;
  double max_minutes = 0;
};

RooflineParams read_roofline_params(const ParamValues& values);

}  // namespace dlsys::roofline
