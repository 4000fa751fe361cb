#pragma once
// The quant lesson's parameters as a quantization spec, and its name in words.
#include <string>

#include "engine/params.h"
#include "kernels/quant/quantize.h"

namespace dlsys::quant {

QuantSpec spec_from_params(const ParamValues& params);
// "int8 absmax, per channel", "nf4, blocks of 64, double-quantized"
std::string spec_description(const QuantSpec& spec);

}  // namespace dlsys::quant
