#pragma once
// The formats gradients travel in (wire.h does the rounding and the 16-bit ring). Plain C++17, for CUDA files too.
#include <string>

namespace dlsys::ddp {

enum class WireFormat { Fp32, Bf16, Fp16 };

inline int wire_bytes_per_element(WireFormat f) { return f == WireFormat::Fp32 ? 4 : 2; }
std::string wire_name(WireFormat f);  // "fp32", "bf16", "fp16"

}  // namespace dlsys::ddp
