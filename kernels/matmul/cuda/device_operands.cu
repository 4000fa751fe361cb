// Operands on the device, and the one place a rung becomes a launch: the lab's kernels through launchers.h, the
// vendor's through cuBLAS in each precision. cuBLAS is column-major: a row-major matrix read column-major is its
// transpose, so asking for C^T = B^T A^T (dimensions n, m, k; B first) gives row-major C.
#include <cuda_bf16.h>

#include <memory>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/launch.h"
#include "kernels/matmul/cuda/launchers.h"
#include "kernels/matmul/matmul_cuda.h"

namespace dlsys::matmul::cuda {

namespace {

__global__ void round_to_bf16_kernel(const float* in, __nv_bfloat16* out, long long count) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < count; i += 256ll * gridDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}

}  // namespace

class DeviceOperandsOnGpu final : public DeviceOperands {
 public:
  DeviceOperandsOnGpu(const Shape& shape, const float* a, const float* b);
  TimingStats time(Rung rung, const MeasureOptions& options, int warp_tile = kLessonWarpTile) override;
  int best_warp_tile() override;
  void poison_output() override;
  void download_output(float* c) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct DeviceOperandsOnGpu::State {
  Shape shape;
  dlsys::cuda::DeviceArray<float> a, b, c;
  std::unique_ptr<dlsys::cuda::DeviceArray<__nv_bfloat16>> a16, b16;  // made on first use by a bf16 rung
  cublasHandle_t handle = nullptr;
  int best_warp_tile = -1;  // not tuned yet

  State(const Shape& s) : shape(s), a(s.m * s.k), b(s.k * s.n), c(s.m * s.n) {}
  ~State() {
    if (handle) cublasDestroy(handle);
  }
  cublasHandle_t cublas() {
    if (!handle) {
      DLSYS_CUDA_CHECK(cublasCreate(&handle));
      // Plain fp32 for cublasSgemm (the default, said explicitly): no TF32 tensor cores unless a rung asks for them.
      DLSYS_CUDA_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    }
    return handle;
  }
  void make_bf16() {
    if (a16) return;
    auto round = [](float* in, std::int64_t count) {
      auto out = std::make_unique<dlsys::cuda::DeviceArray<__nv_bfloat16>>(count);
      round_to_bf16_kernel<<<dlsys::cuda::grid_stride_blocks(count), dlsys::cuda::kGridStrideThreads>>>(in, out->get(),
                                                                                                        count);
      DLSYS_CUDA_CHECK(cudaGetLastError());
      return out;
    };
    a16 = round(a.get(), shape.m * shape.k);
    b16 = round(b.get(), shape.k * shape.n);
    DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void gemm_ex(const void* a_in, const void* b_in, cudaDataType type, cublasComputeType_t compute) {
    const float one = 1.0f, zero = 0.0f;
    const Shape& s = shape;
    DLSYS_CUDA_CHECK(cublasGemmEx(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &one, b_in, type,
                                  int(s.n), a_in, type, int(s.k), &zero, c.get(), CUDA_R_32F, int(s.n), compute,
                                  CUBLAS_GEMM_DEFAULT));
  }
  void launch(Rung rung, int warp_tile) {
    const Shape& s = shape;
    switch (rung) {
      case Rung::WarpTiled:
        return detail::launch_warptile(warp_tile, s, a.get(), b.get(), c.get());
      case Rung::Cublas: {
        const float one = 1.0f, zero = 0.0f;
        DLSYS_CUDA_CHECK(cublasSgemm(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &one, b.get(),
                                     int(s.n), a.get(), int(s.k), &zero, c.get(), int(s.n)));
        return;
      }
      case Rung::Tf32Mma:
        return detail::launch_tf32_mma(s, a.get(), b.get(), c.get());
      case Rung::CublasTf32:
        return gemm_ex(a.get(), b.get(), CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
      case Rung::Bf16Mma:
        return detail::launch_bf16_mma(s, a16->get(), b16->get(), c.get());
      case Rung::CublasBf16:
        return gemm_ex(a16->get(), b16->get(), CUDA_R_16BF, CUBLAS_COMPUTE_32F);
      default:
        return detail::launch_simt(rung, s, a.get(), b.get(), c.get());
    }
  }
};

DeviceOperandsOnGpu::DeviceOperandsOnGpu(const Shape& shape, const float* a, const float* b)
    : state_(std::make_unique<State>(shape)) {
  DLSYS_CUDA_CHECK(cudaMemcpy(state_->a.get(), a, state_->a.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(state_->b.get(), b, state_->b.bytes(), cudaMemcpyHostToDevice));
}

int DeviceOperandsOnGpu::best_warp_tile() {
  if (state_->best_warp_tile >= 0) return state_->best_warp_tile;
  const MeasureOptions options{.warmup = 1, .repeats = 2};
  int best = 0;
  double best_us = 0;
  for (int config = 0; config < int(kWarpTiles.size()); ++config) {
    const double us = time(Rung::WarpTiled, options, config).min_us;
    if (config == 0 || us < best_us) {
      best_us = us;
      best = config;
    }
  }
  return state_->best_warp_tile = best;
}

TimingStats DeviceOperandsOnGpu::time(Rung rung, const MeasureOptions& options, int warp_tile) {
  if (rung_info(rung).precision == Precision::Bf16) state_->make_bf16();  // rounded once, before any timing
  if (rung == Rung::WarpTiled && warp_tile == kTunedWarpTile) warp_tile = best_warp_tile();
  return dlsys::cuda::time_with_events([&] { state_->launch(rung, warp_tile); }, options);
}

void DeviceOperandsOnGpu::poison_output() {
  DLSYS_CUDA_CHECK(cudaMemset(state_->c.get(), 0xff, state_->c.bytes()));  // 0xffffffff is a NaN
}

void DeviceOperandsOnGpu::download_output(float* c) {
  DLSYS_CUDA_CHECK(cudaMemcpy(c, state_->c.get(), state_->c.bytes(), cudaMemcpyDeviceToHost));
}

std::unique_ptr<DeviceOperands> make_device_operands(const Shape& shape, const float* a, const float* b) {
  return std::make_unique<DeviceOperandsOnGpu>(shape, a, b);
}

}  // namespace dlsys::matmul::cuda
