// The LoRA layer's two forward passes on cuBLAS (see lora_cuda.h), product for product as time_adapter_forward in
// kernels/lora/cpu/lora.cpp.
#include <cstddef>
#include <tuple>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/common/cuda/row_major_sgemm.h"
#include "kernels/common/device_buffer.h"
#include "kernels/lora/lora_cuda.h"

namespace dlsys::lora::cuda {

namespace {

constexpr int kGpu = 0;
// The legacy default stream: cuda_event_timer() records its events there.
const cudaStream_t kStream = nullptr;

using dlsys::cuda::row_major_sgemm;

}  // namespace

GpuForwardTiming time_forward_gpu(const InferenceLayer& l, const MeasureOptions& options,
                                  const std::function<void()>& between) {
  dlsys::cuda::Resources resources;
  const auto upload = [&](const std::vector<float>& host) {
    float* device = resources.floats(kGpu, std::int64_t(host.size()));
    DLSYS_CUDA_CHECK(cudaMemcpy(device, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice));
    return device;
  };
  const float *w = upload(l.w), *xt = upload(l.xt), *b = upload(l.b), *a = upload(l.a), *merged = upload(l.merged);
  const std::int64_t outputs = l.d * l.n;
  float* y = resources.floats(kGpu, outputs);
  float* y_merged = resources.floats(kGpu, outputs);
  float* h = resources.floats(kGpu, std::int64_t(l.r) * l.n);
  const cublasHandle_t blas = resources.blas(kGpu, kStream);
  const auto adapter = [&] {
    row_major_sgemm(blas, w, xt, y, l.d, l.n, l.k, 1.0f, 0.0f);
    row_major_sgemm(blas, a, xt, h, l.r, l.n, l.k, 1.0f, 0.0f);
    row_major_sgemm(blas, b, h, y, l.d, l.n, l.r, l.scale, 1.0f);
  };
  const auto merged_forward = [&] { row_major_sgemm(blas, merged, xt, y_merged, l.d, l.n, l.k, 1.0f, 0.0f); };
  GpuForwardTiming t;
  std::tie(t.adapter, t.merged) =
      measure_pair(adapter, merged_forward, options, between, dlsys::cuda::cuda_event_timer());
  t.adapter_output.resize(std::size_t(outputs));
  t.merged_output.resize(std::size_t(outputs));
  DLSYS_CUDA_CHECK(
      cudaMemcpy(t.adapter_output.data(), y, sizeof(float) * std::size_t(outputs), cudaMemcpyDeviceToHost));
  DLSYS_CUDA_CHECK(
      cudaMemcpy(t.merged_output.data(), y_merged, sizeof(float) * std::size_t(outputs), cudaMemcpyDeviceToHost));
  return t;
}

}  // namespace dlsys::lora::cuda
