#pragma once
// The LoRA calculator: for a real model (a preset or a config.json, read by the KV-cache lesson's parser), the
// adapters' parameter count at rank r on q, k, v, o or on every linear layer of the blocks, and the memory of full
// fine-tuning, LoRA and QLoRA: weights, gradients, optimizer states and activations.
#include "lessons/kvcache/model_config.h"
#include "lessons/lora/lora_params.h"
#include "lessons/lora/lora_values.h"

namespace dlsys::lora_lesson {

// Bytes per parameter the calculator assumes, as mixed-precision Adam trains (the ZeRO lesson's 2 + 2 + 12):
// 16-bit weights and gradients, fp32 master weights and Adam's two moments for every trainable parameter; the frozen
// base in 16 bits (LoRA) or, for the blocks' linear weights, NF4 with double quantization (QLoRA; embeddings, norms
// and the output layer stay in 16 bits).
inline constexpr double kWeightBytes = 2, kGradientBytes = 2, kOptimizerBytes = 12;

// The calculator at the parameters. Throws BadInput naming 'config' or 'model' for a file it cannot read or a model
// whose projections it does not size (mixture of experts, latent attention).
CalculatorTheory calculate(const LoraParams& params);
// The same for a model already read.
CalculatorTheory calculate(const kvcache::ModelConfig& model, const std::string& parameter, Targets targets, int r,
                           std::int64_t micro_batch, std::int64_t seq);

// Said on screen and in the report: activations are the base model's and do not shrink with LoRA.
const char* activation_note();

}  // namespace dlsys::lora_lesson
