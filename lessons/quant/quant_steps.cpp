#include "lessons/quant/quant_steps.h"

#include <fmt/format.h>

#include "kernels/quant/quantize.h"
#include "lessons/quant/quant_spec.h"

namespace dlsys::quant {

std::shared_ptr<const QuantSteps> make_quant_steps(const QuantSpec& chosen) {
  auto steps = std::make_shared<QuantSteps>();
  steps->ridge_flop_per_byte = 989e12 / (steps->bandwidth_gbps * 1e9);
  for (const auto& [format, bytes] :
       std::vector<std::pair<const char*, double>>{{"fp32", 4}, {"fp16 / bf16", 2}, {"int8", 1}, {"int4 / nf4", 0.5}}) {
    DecodeRow row{format, bytes, bytes * steps->parameters, 0, 0, 2.0 / bytes};
    row.ms_per_token = row.model_bytes / (steps->bandwidth_gbps * 1e9) * 1e3;
    row.tokens_per_s = 1e3 / row.ms_per_token;
    steps->decode.push_back(row);
  }
  steps->nf4_levels.assign(kNf4Levels.begin(), kNf4Levels.end());
  // On a matrix as large as a 7B model's, the 32-bit second-level scale per tensor is negligible: the per-weight
  // figures are QLoRA's 32/64 and 8/64 + 32/(64 x 256).
  steps->nf4_overhead_bits = 32.0 / 64;
  steps->nf4_double_quant_overhead_bits = 8.0 / 64 + 32.0 / (64.0 * kDoubleQuantBlock);
  steps->nf4_constants_bytes = steps->parameters * steps->nf4_overhead_bits / 8;
  steps->nf4_double_quant_constants_bytes = steps->parameters * steps->nf4_double_quant_overhead_bits / 8;
  steps->chosen_label = spec_description(chosen);
  steps->chosen_code_bits = chosen.scheme == Scheme::Nf4 ? 4 : chosen.bits;
  steps->chosen_overhead_bits = scale_overhead_bits_per_param(chosen, 4096, 4096);
  steps->sparse_2_4_bytes_per_weight = (2 * 2.0 + 2 * 2.0 / 8) / 4;
  return steps;
}

}  // namespace dlsys::quant
