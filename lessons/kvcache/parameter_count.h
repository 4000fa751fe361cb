#pragma once
// Parameters of a decoder from its config, exactly, in the layout its family uses (model_config.h): every matrix,
// bias and norm vector. Multi-token-prediction modules (DeepSeek-V3's num_nextn_predict_layers) are not counted:
// they serve speculative decoding, not the model's own forward pass.
#include <cstdint>
#include <optional>
#include <string>

#include "lessons/kvcache/model_config.h"

namespace dlsys::kvcache {

struct ParameterCount {
  std::int64_t total = 0;  // every weight of the model
  // Weights one token's forward pass multiplies by: all but the embedding tables (a lookup reads one row; when the
  // output layer is tied to them they count once, as that layer) and the routed experts the token does not use.
  // This is the convention of DeepSeek-V3's "37B activated" (36.6B without the input embedding) and Mixtral's "13B".
  std::int64_t active = 0;
  bool active_known = true;         // false for a mixture of experts whose file does not say num_experts_per_tok
  std::int64_t lookup_only = 0;     // embedding tables used only as lookups (input embeddings, GPT-2 positions)
  std::int64_t routed_expert = 0;   // parameters of one routed expert
  std::int64_t routed_layers = 0;   // layers with routed experts
  std::int64_t routed_experts = 0;  // experts per routed layer
};

// nullopt when the config lacks a size the count needs (model.weights_missing names it). Throws BadInput when the
// count overflows 64 bits.
std::optional<ParameterCount> count_parameters(const ModelConfig& model);

// The total, for configs known to be complete. Throws BadInput naming the missing keys otherwise.
std::int64_t parameter_count(const ModelConfig& model);

// "intermediate_size and vocab_size": the missing keys as a phrase for messages.
std::string missing_keys_phrase(const ModelConfig& model);

}  // namespace dlsys::kvcache
