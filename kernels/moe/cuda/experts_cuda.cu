// The experts' MLPs on cuBLAS (see experts_cuda.h), product for product as mlp_forward in kernels/moe/cpu/experts.cpp.
#include <fmt/format.h>

#include <vector>

#include "engine/errors.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/common/cuda/launch.h"
#include "kernels/common/cuda/row_major_sgemm.h"
#include "kernels/moe/experts_cuda.h"

namespace dlsys::moe::cuda {

namespace {

__global__ void relu_in_place(float* a, std::int64_t n) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    a[i] = a[i] > 0.0f ? a[i] : 0.0f;
}

class GpuExpertsOnRankGpus final : public GpuExperts {
 public:
  GpuExpertsOnRankGpus(const Experts& experts, int ranks, std::int64_t max_rows, int devices)
      : hidden_(experts.hidden),
        ffn_(experts.ffn),
        max_rows_(max_rows),
        bytes_(gpu_experts_bytes(experts.experts, experts.hidden, experts.ffn, ranks, max_rows, devices)) {
    std::vector<Weights> weights;
    for (int gpu = 0; gpu < devices; ++gpu) {
      const auto upload = [&](const std::vector<float>& host) {
        float* device = resources_.floats(gpu, std::int64_t(host.size()));
        DLSYS_CUDA_CHECK(cudaMemcpy(device, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice));
        return device;
      };
      weights.push_back({upload(experts.w1), upload(experts.w2)});
    }
    for (int r = 0; r < ranks; ++r) {
      Rank rank;
      rank.gpu = r % devices;
      rank.weights = weights[std::size_t(rank.gpu)];
      rank.stream = resources_.stream_ordered_with_default(rank.gpu);
      rank.blas = resources_.blas(rank.gpu, rank.stream);
      rank.x = resources_.floats(rank.gpu, max_rows * hidden_);
      rank.hidden = resources_.floats(rank.gpu, max_rows * ffn_);
      rank.y = resources_.floats(rank.gpu, max_rows * hidden_);
      ranks_.push_back(rank);
    }
  }

  void forward(int rank, int expert, const float* x, std::int64_t rows, float* y) override {
    if (rows == 0) return;
    if (rows > max_rows_)
      throw RunFailure(fmt::format("an expert's call of {} rows exceeds the {} its GPU buffers hold", rows, max_rows_));
    const Rank& r = ranks_.at(std::size_t(rank));
    // Each rank is a host thread of its own: its current device is set here, not inherited.
    DLSYS_CUDA_CHECK(cudaSetDevice(r.gpu));
    const std::int64_t in = rows * hidden_, mid = rows * ffn_;
    DLSYS_CUDA_CHECK(cudaMemcpyAsync(r.x, x, sizeof(float) * std::size_t(in), cudaMemcpyHostToDevice, r.stream));
    const float* w1 = r.weights.w1 + std::int64_t(expert) * hidden_ * ffn_;
    const float* w2 = r.weights.w2 + std::int64_t(expert) * ffn_ * hidden_;
    dlsys::cuda::row_major_sgemm(r.blas, r.x, w1, r.hidden, rows, ffn_, hidden_, 1.0f, 0.0f);
    relu_in_place<<<dlsys::cuda::grid_stride_blocks(mid), dlsys::cuda::kGridStrideThreads, 0, r.stream>>>(r.hidden,
                                                                                                          mid);
    DLSYS_CUDA_CHECK(cudaGetLastError());
    dlsys::cuda::row_major_sgemm(r.blas, r.hidden, w2, r.y, rows, hidden_, ffn_, 1.0f, 0.0f);
    dlsys::cuda::download_and_wait(y, r.y, in, r.stream);
  }

  std::int64_t device_bytes() const override { return bytes_; }

 private:
  struct Weights {
    const float* w1 = nullptr;  // (E, H, F)
    const float* w2 = nullptr;  // (E, F, H)
  };
  struct Rank : dlsys::cuda::RankStream {
    int gpu = 0;
    Weights weights;  // on its GPU
    float *x = nullptr, *hidden = nullptr, *y = nullptr;
  };
  dlsys::cuda::Resources resources_;  // first: released last, after nothing uses it
  std::int64_t hidden_ = 0, ffn_ = 0, max_rows_ = 0, bytes_ = 0;
  std::vector<Rank> ranks_;
};

}  // namespace

std::unique_ptr<GpuExperts> make_gpu_experts(const Experts& experts, int ranks, std::int64_t max_rows, int devices) {
  return std::make_unique<GpuExpertsOnRankGpus>(experts, ranks, max_rows, devices);
}

}  // namespace dlsys::moe::cuda
