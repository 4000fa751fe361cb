#pragma once
// A quantization spec's name in words.
#include <string>

#include "kernels/quant/quantize.h"

namespace dlsys::quant {

// "int8 absmax, per channel", "nf4, blocks of 64, double-quantized"
std::string spec_description(const QuantSpec& spec);

}  // namespace dlsys::quant
