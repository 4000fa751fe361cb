#pragma once
// The CUDA variants, callable from code that never includes a CUDA header. Without the CUDA library, each call
// throws RunFailure saying why (cuda/*_calls.cpp). Every variant takes heads x (n, d) row-major tensors (batch x heads
// folded into one count) and writes O in fp32.
//   v1_naive           - standard attention: S = scale Q K^T for all heads into device memory (cuBLAS strided-batched),
//                        a softmax kernel rewrites it into P, then O = P V (cuBLAS). fp32, or bf16 Q, K, V and P with
//                        fp32 scores and accumulation. heads n^2 scores of device scratch.
//   v2_flash           - FlashAttention-2's order in its plainest form, fp32, any d, tiles from sram/br/bc
//                        (cuda/flash_general.cu).
//   v3_flash_registers - fp32 with register micro-tiles and cp.async double buffering; d = 32, 64, 128
//                        (cuda/flash_registers.cu).
//   v4_flash_tensor    - bf16 tensor cores (mma.sync), fp32 accumulators and softmax; d = 32, 64, 128
//                        (cuda/flash_tensor.cu).
// No flash variant needs device memory beyond q, k, v and o: its tiles live in shared memory and registers.
#include <cstdint>

#include "engine/errors.h"
#include "engine/measure.h"
#include "kernels/attention/gpu_tiles.h"
#include "kernels/attention/tile_math.h"

namespace dlsys::attention::cuda {

enum class Variant { Naive, Flash, FlashRegisters, FlashTensor };
enum class Precision { Fp32, Bf16 };

inline const char* variant_name(Variant v) {
  switch (v) {
    case Variant::Naive:
      return "v1_naive";
    case Variant::Flash:
      return "v2_flash";
    case Variant::FlashRegisters:
      return "v3_flash_registers";
    case Variant::FlashTensor:
      return "v4_flash_tensor";
  }
  return "?";
}
inline const char* precision_name(Precision p) { return p == Precision::Bf16 ? "bf16" : "fp32"; }

// The flash kernel a run in this precision uses at this d: bf16 has only the tensor-core kernel (d = 32, 64, 128);
// fp32 takes the register-tile kernel where it has a fast path, the plain one elsewhere.
inline bool bf16_supports_d(std::int64_t d) { return gpu::tensor::supports(d); }
inline Variant fastest_flash(Precision precision, std::int64_t d) {
  if (precision == Precision::Bf16) return Variant::FlashTensor;
  return gpu::registers::supports(d) ? Variant::FlashRegisters : Variant::Flash;
}

// Device memory standard attention needs beyond q, k, v and o: the fp32 scores of every head, and for bf16 a second
// n x n buffer for P in bf16 (the next product's input).
inline std::int64_t naive_device_scratch_bytes(std::int64_t heads, std::int64_t n, Precision precision) {
  return heads * n * n * (precision == Precision::Bf16 ? 4 + 2 : 4);
}

struct Request {
  Variant variant = Variant::Naive;
  Precision precision = Precision::Fp32;  // v1_naive runs in either; v2 and v3 are fp32, v4 bf16
  std::int64_t heads = 1;
  Tiling tiling;  // v2_flash only
};

struct RunStats {
  TimingStats timing;
  std::int64_t device_scratch_bytes = 0;  // global memory beyond q, k, v, o (naive: S, and P in bf16)
  std::int64_t shared_bytes_per_block = 0;
};

// Copies q, k, v (heads, n, d) to device 0 (as bf16 for bf16 runs: pass values already rounded to bf16, see
// round_to_bf16, so nothing is lost on the way), runs the variant (options.warmup untimed, then options.repeats timed
// with CUDA events), copies the last O back into o (fp32). Throws BadInput when the variant cannot take this
// precision or d, when its tiles need more shared memory than a block may have, or when standard attention's scores
// do not fit in the device's free memory; RunFailure on any CUDA or cuBLAS error (device memory is freed on every
// path).
RunStats run(const Request& request, const Problem& problem, const float* q, const float* k, const float* v, float* o,
             const MeasureOptions& options);

// One head in fp32 (what the roofline lesson measures): `variant` with these tiles for v2_flash.
inline RunStats run(Variant variant, const Problem& problem, const Tiling& tiling, const float* q, const float* k,
                    const float* v, float* o, const MeasureOptions& options) {
  return run(Request{variant, Precision::Fp32, 1, tiling}, problem, q, k, v, o, options);
}

}  // namespace dlsys::attention::cuda
