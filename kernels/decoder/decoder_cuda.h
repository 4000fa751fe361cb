#pragma once
// The decode step's attention on the GPU, callable from code that never includes a CUDA header. Without CUDA in the
// build, or where the CUDA library cannot be loaded, the call throws RunFailure saying why. One new query per head
// reads every cached key and value once: about 2 x n x kv_dim x 4 bytes for 4 x n x d FLOPs, so the step is bound by
// memory bandwidth, which is why decode is (the roofline of Williams et al., CACM 2009).
#include <cstdint>

#include "engine/measure.h"
#include "kernels/decoder/shape.h"

namespace dlsys::decoder::cuda {

// Same contract as decoder::attention_row (kernels/decoder/decoder.h): q, out: (heads x head_dim); k, v: (n, kv_dim)
// row-major, the layer's cache. Copies to device 0, runs options.warmup untimed and options.repeats timed launches
// (CUDA events), copies `out` back. Throws RunFailure on any CUDA error; device memory is freed on every path.
TimingStats attention_row(const Shape& shape, const float* q, const float* k, const float* v, std::int64_t n,
                          float* out, const MeasureOptions& options);

// Bytes one decode-step attention reads from the cache: K and V rows of n tokens.
inline std::int64_t attention_cache_bytes(const Shape& shape, std::int64_t n) { return 2 * n * shape.kv_dim() * 4; }

}  // namespace dlsys::decoder::cuda
