// The mesh's ranks' products on cuBLAS (see mesh_gemms_cuda.h), each as pipeline::mlp::openblas_gemm computes it on
// the CPU (kernels/pipeline/cpu/mlp_block.cpp).
#include <fmt/format.h>

#include <functional>
#include <vector>

#include "engine/errors.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/common/cuda/row_major_sgemm.h"
#include "kernels/mesh/mesh_gemms_cuda.h"

namespace dlsys::mesh::cuda {

namespace {

class RankGemmsOnGpus final : public RankGemms {
 public:
  RankGemmsOnGpus(int ranks, std::int64_t shard_elements, std::int64_t most_operand_elements, int devices)
      : shard_elements_(shard_elements),
        most_operand_(most_operand_elements),
        bytes_(gpu_rank_gemms_bytes(ranks, shard_elements, most_operand_elements)) {
    if (devices < 1) throw RunFailure(fmt::format("{} GPUs for the mesh's ranks; at least 1 is needed", devices));
    for (int r = 0; r < ranks; ++r) {
      Rank rank;
      rank.gpu = r % devices;
      // Not ordered with the default stream: the ranks' products overlap on the GPU as their threads do on the host
      // (the run times them with the host's clock, so no event pair on the default stream needs to bracket them).
      rank.stream = resources_.stream(rank.gpu);
      rank.blas = resources_.blas(rank.gpu, rank.stream);
      rank.weights = resources_.floats(rank.gpu, shard_elements);
      rank.a = resources_.floats(rank.gpu, most_operand_elements);
      rank.b = resources_.floats(rank.gpu, most_operand_elements);
      rank.c = resources_.floats(rank.gpu, most_operand_elements);
      ranks_.push_back(rank);
    }
  }

  void weights_changed(int rank, const float* host, std::int64_t elements) override {
    if (elements != shard_elements_)
      throw RunFailure(fmt::format("a shard of {} floats where the GPU holds {}", elements, shard_elements_));
    Rank& r = ranks_.at(std::size_t(rank));
    DLSYS_CUDA_CHECK(cudaSetDevice(r.gpu));  // each rank is a host thread of its own: its device is set here
    DLSYS_CUDA_CHECK(
        cudaMemcpyAsync(r.weights, host, sizeof(float) * std::size_t(elements), cudaMemcpyHostToDevice, r.stream));
    DLSYS_CUDA_CHECK(cudaStreamSynchronize(r.stream));  // the host may change the shard once this returns
    r.host_weights = host;
  }

  void gemm(int rank, bool trans_a, bool trans_b, int m, int n, int k, const float* a, const float* b, float beta,
            float* c) override {
    const Rank& r = ranks_.at(std::size_t(rank));
    DLSYS_CUDA_CHECK(cudaSetDevice(r.gpu));
    const std::int64_t c_elements = std::int64_t(m) * n;
    check_fits(c_elements);
    const float* on_a = on_gpu(r, a, std::int64_t(m) * k, r.a);
    const float* on_b = on_gpu(r, b, std::int64_t(k) * n, r.b);
    if (beta != 0.0f)  // the product adds to c: c goes up first
      DLSYS_CUDA_CHECK(
          cudaMemcpyAsync(r.c, c, sizeof(float) * std::size_t(c_elements), cudaMemcpyHostToDevice, r.stream));
    dlsys::cuda::row_major_sgemm(r.blas, trans_a, trans_b, on_a, on_b, r.c, m, n, k, 1.0f, beta);
    dlsys::cuda::download_and_wait(c, r.c, c_elements, r.stream);
  }

  std::int64_t device_bytes() const override { return bytes_; }

 private:
  struct Rank : dlsys::cuda::RankStream {
    int gpu = 0;
    float *weights = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
    const float* host_weights = nullptr;  // the host shard the copy in `weights` was made from
  };

  void check_fits(std::int64_t elements) const {
    if (elements > most_operand_)
      throw RunFailure(
          fmt::format("a product's operand of {} floats exceeds the {} its GPU buffers hold", elements, most_operand_));
  }

  // `host`'s `elements` floats on the GPU: inside the rank's shard, its copy there; anything else uploaded into
  // `buffer` on the rank's stream (ordered before the product that reads it).
  const float* on_gpu(const Rank& r, const float* host, std::int64_t elements, float* buffer) const {
    const std::less<const float*> before;
    if (r.host_weights && !before(host, r.host_weights) && !before(r.host_weights + shard_elements_, host + elements))
      return r.weights + (host - r.host_weights);
    check_fits(elements);
    DLSYS_CUDA_CHECK(
        cudaMemcpyAsync(buffer, host, sizeof(float) * std::size_t(elements), cudaMemcpyHostToDevice, r.stream));
    return buffer;
  }

  dlsys::cuda::Resources resources_;  // first: released last, after nothing uses it
  std::int64_t shard_elements_ = 0, most_operand_ = 0, bytes_ = 0;
  std::vector<Rank> ranks_;
};

}  // namespace

std::unique_ptr<RankGemms> make_gpu_rank_gemms(int ranks, std::int64_t shard_elements,
                                               std::int64_t most_operand_elements, int devices) {
  return std::make_unique<RankGemmsOnGpus>(ranks, shard_elements, most_operand_elements, devices);
}

}  // namespace dlsys::mesh::cuda
