#pragma once
// The model whose real weights this lesson quantizes: the precision lesson's teacher-student regression with wider
// hidden layers (16 -> 256 -> 256 -> 16), trained in fp32 with Adam. Its weights have the shapes training gives
// them, and its data are the inputs the output error is measured on.
#include <cstdint>
#include <vector>

#include "kernels/precision/mixed_precision_mlp.h"

namespace dlsys::quant {

struct TrainedModel {
  precision::MlpShape shape;
  precision::MlpLayout layout;
  std::vector<float> weights;  // flat, as mlp_layout says
  std::vector<float> inputs;   // (samples, inputs)
  int samples = 0;
  double final_loss = 0;
};

inline precision::MlpShape quant_model_shape() { return {.inputs = 16, .hidden = 256, .outputs = 16}; }

TrainedModel train_quant_model(int steps);

// The model's three weight matrices: (rows, cols) and their offset in the flat weights.
struct WeightMatrix {
  const char* name;
  std::int64_t offset, rows, cols;
};
std::vector<WeightMatrix> weight_matrices(const TrainedModel& model);

}  // namespace dlsys::quant
