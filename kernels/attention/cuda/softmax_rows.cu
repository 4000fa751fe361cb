// Standard attention's middle pass: P = softmax(S) row by row over the n x n scores of every head, S already scaled by
// the product. One warp per row: each lane keeps an online max and sum over its float4 chunks (one read of S), the
// warp merges the 32 partial (max, sum) pairs with shuffles, and a second read writes P in the precision of the next
// product (fp32, or bf16 for the bf16 path). Keys the causal mask hides get P = 0.
#include "kernels/attention/cuda/device_ops.cuh"
#include "kernels/attention/cuda/launchers.h"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::attention::cuda {

namespace {

constexpr int kRowsPerBlock = 8;  // one warp each

__device__ __forceinline__ void store(float* p, float value) { *p = value; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float value) { *p = __float2bfloat16_rn(value); }
__device__ __forceinline__ void store4(float* p, float4 x) { *reinterpret_cast<float4*>(p) = x; }
__device__ __forceinline__ void store4(__nv_bfloat16* p, float4 x) {
  const uint2 packed{ops::pack_bf16(x.x, x.y), ops::pack_bf16(x.z, x.w)};
  *reinterpret_cast<uint2*>(p) = packed;
}

// Folds x into a lane's running (max, sum of exp2((s - max) log2e)).
__device__ __forceinline__ void fold(float x, float& m, float& l) {
  if (x == -INFINITY) return;
  if (x > m) {
    l = l * exp2f((m - x) * ops::kLog2e) + 1.0f;
    m = x;
  } else {
    l += exp2f((x - m) * ops::kLog2e);
  }
}

// VEC = 4 when n is a multiple of 4 (rows then start 16-byte aligned), else 1.
template <int VEC, typename Out>
__global__ void softmax_rows_kernel(const float* s, Out* p, std::int64_t rows, std::int64_t n, bool causal) {
  const int lane = int(threadIdx.x) % 32;
  const std::int64_t row = std::int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const std::int64_t visible = causal ? row % n + 1 : n;  // row % n: the query's index within its head
  const float* s_row = s + row * n;
  Out* p_row = p + row * n;

  float m = -INFINITY, l = 0.0f;
  for (std::int64_t j = std::int64_t(lane) * VEC; j < visible; j += 32 * VEC) {
    if constexpr (VEC == 4) {
      const float4 x = *reinterpret_cast<const float4*>(s_row + j);
      fold(x.x, m, l);
      fold(j + 1 < visible ? x.y : -INFINITY, m, l);
      fold(j + 2 < visible ? x.z : -INFINITY, m, l);
      fold(j + 3 < visible ? x.w : -INFINITY, m, l);
    } else {
      fold(s_row[j], m, l);
    }
  }
  const float row_max = ops::group_max<32>(m);  // finite: every row sees at least one key
  const float row_sum = ops::group_sum<32>(m == -INFINITY ? 0.0f : l * exp2f((m - row_max) * ops::kLog2e));
  const float inverse = 1.0f / row_sum;
  auto weight = [&](float x, std::int64_t j) {
    return j < visible ? exp2f((x - row_max) * ops::kLog2e) * inverse : 0.0f;
  };
  for (std::int64_t j = std::int64_t(lane) * VEC; j < n; j += 32 * VEC) {
    if constexpr (VEC == 4) {
      const float4 x = j < visible ? *reinterpret_cast<const float4*>(s_row + j) : make_float4(0, 0, 0, 0);
      store4(p_row + j, make_float4(weight(x.x, j), weight(x.y, j + 1), weight(x.z, j + 2), weight(x.w, j + 3)));
    } else {
      store(p_row + j, weight(j < visible ? s_row[j] : 0.0f, j));
    }
  }
}

template <typename Out>
void launch(const float* s, Out* p, std::int64_t rows, std::int64_t n, bool causal, cudaStream_t stream) {
  const unsigned blocks = unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  if (n % 4 == 0)
    softmax_rows_kernel<4, Out><<<blocks, kRowsPerBlock * 32, 0, stream>>>(s, p, rows, n, causal);
  else
    softmax_rows_kernel<1, Out><<<blocks, kRowsPerBlock * 32, 0, stream>>>(s, p, rows, n, causal);
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_softmax_rows(const float* s, float* p, std::int64_t rows, std::int64_t n, bool causal,
                         cudaStream_t stream) {
  launch(s, p, rows, n, causal, stream);
}
void launch_softmax_rows(const float* s, __nv_bfloat16* p, std::int64_t rows, std::int64_t n, bool causal,
                         cudaStream_t stream) {
  launch(s, p, rows, n, causal, stream);
}

}  // namespace dlsys::attention::cuda
