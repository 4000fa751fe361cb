#pragma once
// The experts: E small MLPs, y = relu(x W1) W2 with W1 (H, F) and W2 (F, H), no biases; each a pair of OpenBLAS
// GEMMs over the rows routed to it. The dense MLP of the same active parameters is the same function with F' = k F.
#include <cstdint>
#include <vector>

#include "kernels/moe/moe_shape.h"

namespace dlsys::moe {

struct Experts {
  int experts = 0;
  std::int64_t hidden = 0, ffn = 0;
  std::vector<float> w1;  // (E, H, F)
  std::vector<float> w2;  // (E, F, H)
  const float* w1_of(int e) const { return w1.data() + std::int64_t(e) * hidden * ffn; }
  const float* w2_of(int e) const { return w2.data() + std::int64_t(e) * ffn * hidden; }
};

// Random weights, scale 1/sqrt(fan-in), each expert its own.
Experts make_experts(int experts, std::int64_t hidden, std::int64_t ffn, std::uint64_t seed);

// y (rows, H) = relu(x (rows, H) W1 (H, F)) W2 (F, H); `scratch` holds at least rows x F floats.
void mlp_forward(const float* w1, const float* w2, std::int64_t hidden, std::int64_t ffn, const float* x,
                 std::int64_t rows, float* scratch, float* y);
// The same in double, one dot product at a time: the oracle for mlp_forward.
std::vector<double> mlp_reference(const float* w1, const float* w2, std::int64_t hidden, std::int64_t ffn,
                                  const float* x, std::int64_t rows);

}  // namespace dlsys::moe
