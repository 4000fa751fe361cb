#pragma once
// The quant lesson's accuracy measurements on the trained model's real weights and activations: the chosen scheme's
// weight and output error, error against bits for each granularity beside the D^2 / 12 prediction, an outlier
// channel against per-tensor and per-token scales and LLM.int8()'s split, NF4 against integer 4-bit, and 2:4
// sparsity against unstructured pruning.
#include <vector>

#include "engine/run_result.h"
#include "kernels/quant/quantize.h"
#include "lessons/quant/quant_model.h"
#include "lessons/quant/quant_values.h"

namespace dlsys::quant {

// Fills the accuracy fields of `measured` and adds their series to `series`.
void measure_model_errors(const TrainedModel& model, const QuantSpec& chosen, double outlier_factor,
                          QuantMeasured& measured, std::vector<Series>& series);

// Relative error ||a - b|| / ||b|| over all elements.
double relative_error(const std::vector<float>& a, const std::vector<float>& b);

// The weights with W1, W2, W3 replaced by their quantized-then-dequantized values (biases stay fp32), and the mean
// squared weight error over the three (with the D^2 / 12 prediction when the scheme has uniform steps).
struct QuantizedModel {
  std::vector<float> weights;
  QuantError error;
};
QuantizedModel quantize_model(const TrainedModel& model, const QuantSpec& spec);

// The model's outputs on its first kOutputSamples inputs, fp32.
inline constexpr int kOutputSamples = 1024;
std::vector<float> model_outputs(const TrainedModel& model, const std::vector<float>& weights);

}  // namespace dlsys::quant
