#pragma once
// The names of the lab's floating-point formats (float_format.h converts between them). Plain C++17, for CUDA files
// too.
namespace dlsys::precision {

enum class Format { Fp32, Fp16, Bf16 };

}  // namespace dlsys::precision
