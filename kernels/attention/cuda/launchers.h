#pragma once
// The attention kernels' launchers, on device pointers, for attention_cuda.cu to time and the benchmark to call
// through it. Tensors are (heads, n, d) row-major; o is always fp32.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "engine/errors.h"
#include "kernels/attention/tile_math.h"

namespace dlsys::attention::cuda {

template <typename T>
struct AttentionArgs {
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  float* o = nullptr;
  std::int64_t heads = 1, n = 0, d = 0;
  bool causal = false;
  double scale = 0;
};

inline std::string unsupported_d_message(const char* kernel, std::int64_t d) {
  return fmt::format("parameter 'd': value {} is not allowed for {}; allowed: 32, 64 or 128", d, kernel);
}

// Calls launch(std::integral_constant<int, D>{}) for the head dimensions the fast kernels are compiled for
// (D = 32, 64, 128); any other d is refused with a message naming `kernel`.
template <typename Launch>
void with_compiled_head_dim(std::int64_t d, const char* kernel, const Launch& launch) {
  switch (d) {
    case 32:
      return launch(std::integral_constant<int, 32>{});
    case 64:
      return launch(std::integral_constant<int, 64>{});
    case 128:
      return launch(std::integral_constant<int, 128>{});
    default:
      throw BadInput(unsupported_d_message(kernel, d));
  }
}

// v2_flash: any d, tiles from the lesson's sram/br/bc; one block per Q block and head.
void launch_flash_general(const AttentionArgs<float>& a, const Tiling& tiling, cudaStream_t stream);
// v3_flash_registers: d = 32, 64 or 128.
void launch_flash_registers(const AttentionArgs<float>& a, cudaStream_t stream);
// v4_flash_tensor: d = 32, 64 or 128.
void launch_flash_tensor(const AttentionArgs<__nv_bfloat16>& a, cudaStream_t stream);

// Standard attention's softmax over the rows of S (heads n rows of n, scaled already): P in fp32 (in place allowed)
// or bf16, zeros where the causal mask hides a key.
void launch_softmax_rows(const float* s, float* p, std::int64_t rows, std::int64_t n, bool causal, cudaStream_t stream);
void launch_softmax_rows(const float* s, __nv_bfloat16* p, std::int64_t rows, std::int64_t n, bool causal,
                         cudaStream_t stream);

}  // namespace dlsys::attention::cuda
