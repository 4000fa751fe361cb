// The host side of the CUDA attention variants: device buffers, the precision of the inputs, standard attention's
// cuBLAS products around the softmax kernel, and timing with CUDA events. The kernels live one idea per file:
// softmax_rows.cu, flash_general.cu (v2), flash_registers.cu (v3), flash_tensor.cu (v4).
#include <fmt/format.h>

#include <vector>

#include "engine/units.h"
#include "kernels/attention/attention_cuda.h"
#include "kernels/attention/cuda/launchers.h"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::attention::cuda {

namespace {

using dlsys::cuda::DeviceArray;
using bf16 = __nv_bfloat16;

// A cuBLAS handle released on every path.
class Cublas {
 public:
  Cublas() { DLSYS_CUDA_CHECK(cublasCreate(&handle_)); }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

void refuse_if_scores_do_not_fit(std::int64_t heads, std::int64_t n, Precision precision) {
  std::size_t free_bytes = 0, total_bytes = 0;
  DLSYS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::int64_t needed = naive_device_scratch_bytes(heads, n, precision);
  if (double(needed) > 0.95 * double(free_bytes))
    throw BadInput(fmt::format(
        "standard attention at n = {} with heads = {} in {} needs {} of device memory for the n x n scores of every "
        "head; the GPU has {} free; allowed: a smaller n or heads, or impl=flash",
        n, heads, precision_name(precision), format_bytes_both(double(needed)), format_bytes_both(double(free_bytes))));
}

// Standard attention, all heads at once. cuBLAS is column-major: row-major S (n, n) of a head is column-major
// S^T = K Q^T, and row-major O (n, d) is column-major O^T = V^T P^T.
template <typename T>
RunStats run_naive(const AttentionArgs<T>& a, Precision precision, const MeasureOptions& options) {
  refuse_if_scores_do_not_fit(a.heads, a.n, precision);
  const std::size_t scores = std::size_t(a.heads * a.n * a.n);
  DeviceArray<float> d_s(scores);                                    // s: (heads, n, n) fp32
  DeviceArray<bf16> d_p(precision == Precision::Bf16 ? scores : 1);  // p: (heads, n, n) bf16 (bf16 only)
  const Cublas cublas;
  const float scale = float(a.scale), one = 1.0f, zero = 0.0f;
  const int n = int(a.n), d = int(a.d), batch = int(a.heads);
  const long long stride_x = a.n * a.d, stride_s = a.n * a.n;
  RunStats stats;
  stats.timing = dlsys::cuda::time_with_events(
      [&] {
        if constexpr (std::is_same_v<T, float>) {
          DLSYS_CUDA_CHECK(cublasSgemmStridedBatched(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &scale, a.k, d,
                                                     stride_x, a.q, d, stride_x, &zero, d_s.get(), n, stride_s, batch));
          launch_softmax_rows(d_s.get(), d_s.get(), a.heads * a.n, a.n, a.causal, nullptr);
          DLSYS_CUDA_CHECK(cublasSgemmStridedBatched(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one, a.v, d,
                                                     stride_x, d_s.get(), n, stride_s, &zero, a.o, d, stride_x, batch));
        } else {
          DLSYS_CUDA_CHECK(cublasGemmStridedBatchedEx(
              cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &scale, a.k, CUDA_R_16BF, d, stride_x, a.q, CUDA_R_16BF,
              d, stride_x, &zero, d_s.get(), CUDA_R_32F, n, stride_s, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
          launch_softmax_rows(d_s.get(), d_p.get(), a.heads * a.n, a.n, a.causal, nullptr);
          DLSYS_CUDA_CHECK(cublasGemmStridedBatchedEx(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one, a.v,
                                                      CUDA_R_16BF, d, stride_x, d_p.get(), CUDA_R_16BF, n, stride_s,
                                                      &zero, a.o, CUDA_R_32F, d, stride_x, batch, CUBLAS_COMPUTE_32F,
                                                      CUBLAS_GEMM_DEFAULT));
        }
      },
      options);
  stats.device_scratch_bytes = naive_device_scratch_bytes(a.heads, a.n, precision);
  return stats;
}

std::int64_t flash_shared_bytes(const Request& r, std::int64_t d) {
  switch (r.variant) {
    case Variant::Flash:
      return flash_cuda_shared_elements(d, r.tiling) * std::int64_t(sizeof(float));
    case Variant::FlashRegisters:
      return gpu::registers::shared_floats(int(d)) * std::int64_t(sizeof(float));
    case Variant::FlashTensor:
      return gpu::tensor::shared_bytes(int(d));
    case Variant::Naive:
      break;
  }
  return 0;
}

// The fast kernels' tiles are fixed: at d = 128 the fp32 one needs 182 KiB per block, more than an A100 allows.
void refuse_if_shared_memory_short(const Request& r, std::int64_t d) {
  if (r.variant == Variant::Flash) return;  // launch_flash_general checks its own tiles
  int device = 0, optin_bytes = 0;
  DLSYS_CUDA_CHECK(cudaGetDevice(&device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const std::int64_t needed = flash_shared_bytes(r, d);
  if (needed > optin_bytes)
    throw BadInput(
        fmt::format("parameter 'd': value {} needs {} bytes of shared memory per block for {}; this GPU "
                    "allows {}; allowed: a smaller d",
                    d, needed, variant_name(r.variant), optin_bytes));
}

void refuse_unsupported(const Request& r, const Problem& p) {
  const bool bf16_variant = r.variant == Variant::FlashTensor;
  if (r.variant != Variant::Naive && bf16_variant != (r.precision == Precision::Bf16))
    throw BadInput(fmt::format("parameter 'precision': value '{}' is not allowed for {}; allowed: {}",
                               precision_name(r.precision), variant_name(r.variant), bf16_variant ? "bf16" : "fp32"));
  if (r.variant == Variant::FlashRegisters && !gpu::registers::supports(p.d))
    throw BadInput(unsupported_d_message(variant_name(r.variant), p.d));
  if ((r.variant == Variant::FlashTensor || (r.variant == Variant::Naive && r.precision == Precision::Bf16)) &&
      !bf16_supports_d(p.d))
    throw BadInput(
        fmt::format("parameter 'd': value {} is not allowed with precision=bf16; allowed: 32, 64 or 128 "
                    "(the tensor-core kernel's fast paths), or precision=fp32",
                    p.d));
  if (r.heads < 1 || p.n < 1) throw BadInput(fmt::format("heads = {}, n = {}: both must be at least 1", r.heads, p.n));
}

template <typename T>
RunStats run_on_device(const Request& r, const Problem& p, std::size_t count, const T* q, const T* k, const T* v,
                       float* o, const MeasureOptions& options) {
  DeviceArray<T> d_q(count), d_k(count), d_v(count);
  DeviceArray<float> d_o(count);
  DLSYS_CUDA_CHECK(cudaMemcpy(d_q.get(), q, d_q.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(d_k.get(), k, d_k.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(d_v.get(), v, d_v.bytes(), cudaMemcpyHostToDevice));
  // Poisoned: an element no kernel writes shows up as NaN in the error.
  DLSYS_CUDA_CHECK(cudaMemset(d_o.get(), 0xff, d_o.bytes()));
  const AttentionArgs<T> a{d_q.get(), d_k.get(), d_v.get(), d_o.get(), r.heads, p.n, p.d, p.causal, p.scale};
  RunStats stats;
  if (r.variant == Variant::Naive) {
    stats = run_naive(a, r.precision, options);
  } else {
    refuse_if_shared_memory_short(r, p.d);
    stats.timing = dlsys::cuda::time_with_events(
        [&] {
          if constexpr (std::is_same_v<T, float>) {
            if (r.variant == Variant::Flash)
              launch_flash_general(a, r.tiling, nullptr);
            else
              launch_flash_registers(a, nullptr);
          } else {
            launch_flash_tensor(a, nullptr);
          }
        },
        options);
    stats.shared_bytes_per_block = flash_shared_bytes(r, p.d);
  }
  DLSYS_CUDA_CHECK(cudaMemcpy(o, d_o.get(), d_o.bytes(), cudaMemcpyDeviceToHost));
  return stats;
}

}  // namespace

RunStats run(const Request& r, const Problem& p, const float* q, const float* k, const float* v, float* o,
             const MeasureOptions& options) {
  refuse_unsupported(r, p);
  const std::size_t count = std::size_t(r.heads * p.n * p.d);
  if (r.precision == Precision::Fp32) return run_on_device<float>(r, p, count, q, k, v, o, options);
  auto to_bf16 = [count](const float* x) {
    std::vector<bf16> out(count);
    for (std::size_t e = 0; e < count; ++e) out[e] = __float2bfloat16_rn(x[e]);
    return out;
  };
  const std::vector<bf16> q16 = to_bf16(q), k16 = to_bf16(k), v16 = to_bf16(v);
  return run_on_device<bf16>(r, p, count, q16.data(), k16.data(), v16.data(), o, options);
}

}  // namespace dlsys::attention::cuda
