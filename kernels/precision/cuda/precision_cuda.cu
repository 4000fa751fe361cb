// CUDA's 16-bit conversions and cuBLAS GEMMs on 16-bit storage (see precision_cuda.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/launch.h"
#include "kernels/precision/precision_cuda.h"

namespace dlsys::precision::cuda {

namespace {

using dlsys::cuda::DeviceArray;

__global__ void round_kernel(const float* in, std::uint16_t* fp16, std::uint16_t* bf16, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    fp16[i] = __half_as_ushort(__float2half_rn(in[i]));
    bf16[i] = __bfloat16_as_ushort(__float2bfloat16_rn(in[i]));
  }
}

__global__ void to_half_kernel(const float* in, __half* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2half_rn(in[i]);
}

__global__ void to_bf16_kernel(const float* in, __nv_bfloat16* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}

}  // namespace

DeviceRounding round_on_device(const std::vector<float>& values) {
  const auto n = static_cast<std::int64_t>(values.size());
  DeviceArray<float> in(values.size());
  DeviceArray<std::uint16_t> fp16(values.size()), bf16(values.size());
  DLSYS_CUDA_CHECK(cudaMemcpy(in.get(), values.data(), in.bytes(), cudaMemcpyHostToDevice));
  round_kernel<<<dlsys::cuda::grid_stride_blocks(n), dlsys::cuda::kGridStrideThreads>>>(in.get(), fp16.get(),
                                                                                        bf16.get(), n);
  DLSYS_CUDA_CHECK(cudaGetLastError());
  DeviceRounding out;
  out.fp16_bits.resize(values.size());
  out.bf16_bits.resize(values.size());
  DLSYS_CUDA_CHECK(cudaMemcpy(out.fp16_bits.data(), fp16.get(), fp16.bytes(), cudaMemcpyDeviceToHost));
  DLSYS_CUDA_CHECK(cudaMemcpy(out.bf16_bits.data(), bf16.get(), bf16.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

TimingStats gemm(GemmFormat format, std::int64_t n, const float* a, const float* b, float* c,
                 const MeasureOptions& options) {
  const std::size_t count = std::size_t(n * n);
  DeviceArray<float> d_a(count), d_b(count), d_c(count);
  DLSYS_CUDA_CHECK(cudaMemcpy(d_a.get(), a, d_a.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(d_b.get(), b, d_b.bytes(), cudaMemcpyHostToDevice));
  // 16-bit copies of the inputs (2 bytes each); fp32 and TF32 read the fp32 arrays.
  DeviceArray<std::uint16_t> h_a(count), h_b(count);
  const unsigned blocks = dlsys::cuda::grid_stride_blocks(std::int64_t(count));
  const int threads = dlsys::cuda::kGridStrideThreads;
  cudaDataType_t input_type = CUDA_R_32F;
  const void *in_a = d_a.get(), *in_b = d_b.get();
  if (format == GemmFormat::Fp16) {
    to_half_kernel<<<blocks, threads>>>(d_a.get(), reinterpret_cast<__half*>(h_a.get()), std::int64_t(count));
    to_half_kernel<<<blocks, threads>>>(d_b.get(), reinterpret_cast<__half*>(h_b.get()), std::int64_t(count));
    input_type = CUDA_R_16F;
  } else if (format == GemmFormat::Bf16) {
    to_bf16_kernel<<<blocks, threads>>>(d_a.get(), reinterpret_cast<__nv_bfloat16*>(h_a.get()), std::int64_t(count));
    to_bf16_kernel<<<blocks, threads>>>(d_b.get(), reinterpret_cast<__nv_bfloat16*>(h_b.get()), std::int64_t(count));
    input_type = CUDA_R_16BF;
  }
  DLSYS_CUDA_CHECK(cudaGetLastError());
  if (input_type != CUDA_R_32F) in_a = h_a.get(), in_b = h_b.get();
  const cublasComputeType_t compute = format == GemmFormat::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;

  cublasHandle_t handle = nullptr;
  DLSYS_CUDA_CHECK(cublasCreate(&handle));
  TimingStats stats;
  try {
    const float one = 1.0f, zero = 0.0f;
    const int m = static_cast<int>(n);
    // Row-major C = A B is column-major C^T = B^T A^T: pass B first.
    auto launch = [&] {
      DLSYS_CUDA_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, in_b, input_type, m, in_a,
                                    input_type, m, &zero, d_c.get(), CUDA_R_32F, m, compute, CUBLAS_GEMM_DEFAULT));
    };
    stats = dlsys::cuda::time_with_events(launch, options);
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
  cublasDestroy(handle);
  DLSYS_CUDA_CHECK(cudaMemcpy(c, d_c.get(), d_c.bytes(), cudaMemcpyDeviceToHost));
  return stats;
}

}  // namespace dlsys::precision::cuda
