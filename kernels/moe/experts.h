#pragma once
// The experts: E small MLPs, y = relu(x W1) W2 with W1 (H, F) and W2 (F, H), no biases; each a pair of OpenBLAS
// GEMMs over the rows routed to it. The dense MLP of the same active parameters is the same function with F' = k F.
#include <cstdint>
#include <memory>
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

// How far two fp32 evaluations of relu(x W1) W2 (OpenBLAS and cuBLAS, each summing in its own order) may differ, as
// a multiple of each output's sum of magnitudes M = (|x| |W1|) |W2|. One evaluation: the first product is within
// g_H M1 of exact (g_n = n u / (1 - n u), u = 2^-24, M1 = |x| |W1|), ReLU moves no value further from the exact one,
// and the second adds its own g_F on top of |relu| |W2| <= (1 + g_H) M: within (g_F (1 + g_H) + g_H) M. Two
// evaluations: twice that.
double mlp_rounding_factor(std::int64_t hidden, std::int64_t ffn);

// Outputs `y` (rows, H) of the MLP computed elsewhere against `reference` (the CPU's mlp_forward of the same rows),
// each output's difference against mlp_rounding_factor times its M (in double).
struct MlpCheck {
  double max_abs_diff = 0;
  double worst_share_of_bound = 0;  // max over outputs of |difference| / bound: at most 1 when they agree
  double largest_bound = 0;         // the largest bound any output had (absolute)
  bool agrees() const { return worst_share_of_bound <= 1; }
  void merge(const MlpCheck& other);
};
MlpCheck check_mlp_outputs(const float* w1, const float* w2, std::int64_t hidden, std::int64_t ffn, const float* x,
                           std::int64_t rows, const float* reference, const float* y);

// Where the expert-parallel layer runs one expert's MLP over its rows: y (rows, H) = relu(x W1_e) W2_e. Each rank's
// calls come from one thread at a time; different ranks call at once.
class ExpertMlps {
 public:
  virtual ~ExpertMlps() = default;
  virtual void forward(int rank, int expert, const float* x, std::int64_t rows, float* y) = 0;
  // Bytes allocated on a GPU for them (none on the CPU).
  virtual std::int64_t device_bytes() const { return 0; }
};

// On this CPU: mlp_forward (OpenBLAS), each rank with its own hidden rows.
class CpuExpertMlps final : public ExpertMlps {
 public:
  CpuExpertMlps(const Experts& experts, int ranks) : experts_(experts), hidden_rows_(std::size_t(ranks)) {}
  void forward(int rank, int expert, const float* x, std::int64_t rows, float* y) override;

 private:
  const Experts& experts_;
  std::vector<std::vector<float>> hidden_rows_;  // per rank: (rows, F)
};

}  // namespace dlsys::moe
