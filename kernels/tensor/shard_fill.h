#pragma once
// The values one rank starts from: its rows of the input x and of the gradient arriving from above, and its shards of
// the weights, each element drawn from its global index (layer_ops.h's site_uniform). Written once for the CPU ranks,
// the double reference and the CUDA ranks (which fill on the host and upload), so all three start from equal values.
#include <cmath>
#include <cstdint>

#include "kernels/tensor/layer_ops.h"
#include "kernels/tensor/layer_shape.h"

namespace dlsys::tensor {

// Where one rank keeps what it is filled with; sizes as in RankLayer: x and dout (local rows, h), W_qkv (h, 3h/t) as
// [Q | K | V] columns of this rank's heads, W_o (h/t, h), W_1 (h, 4h/t), W_2 (4h/t, h), norms (4h).
template <typename T>
struct RankFillTargets {
  T* x = nullptr;
  T* dout = nullptr;
  T* wqkv = nullptr;
  T* wo = nullptr;
  T* w1 = nullptr;
  T* w2 = nullptr;
  T* norms = nullptr;
};

// Column j of a W_qkv shard holds part (Q, K or V) j / (h/t), then this rank's heads within that part: its column in
// the unsharded (h, 3h) W_qkv.
inline std::int64_t wqkv_global_column(const LayerShape& s, int rank, std::int64_t j) {
  const std::int64_t hl = s.hidden_per_rank();
  return (j / hl) * s.hidden + rank * hl + j % hl;
}

template <typename T>
void fill_rank(const LayerShape& s, int rank, const RankFillTargets<T>& to) {
  const std::int64_t h = s.hidden, hl = s.hidden_per_rank(), f = s.ffn_per_rank();
  const std::int64_t row0 = s.first_local_token(rank), n_local = s.local_tokens();
  // The input and the gradient arriving from above: this rank's rows, by global index.
  for (std::int64_t i = 0; i < n_local * h; ++i) {
    to.x[i] = site_uniform(Site::Input, std::uint64_t(row0 * h + i), 1.0f);
    to.dout[i] = site_uniform(Site::OutputGradient, std::uint64_t(row0 * h + i), 1.0f);
  }
  // Weights scaled by 1 / sqrt(fan-in) so activations stay of order one. Each rank reads its shard's global indices.
  const float in_scale = float(1.0 / std::sqrt(double(h))), ffn_scale = float(1.0 / std::sqrt(4.0 * double(h)));
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < 3 * hl; ++j)
      to.wqkv[i * 3 * hl + j] =
          site_uniform(Site::Wqkv, std::uint64_t(i * 3 * h + wqkv_global_column(s, rank, j)), in_scale);
  for (std::int64_t i = 0; i < hl; ++i)
    for (std::int64_t j = 0; j < h; ++j)
      to.wo[i * h + j] = site_uniform(Site::Wo, std::uint64_t((rank * hl + i) * h + j), in_scale);
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < f; ++j)
      to.w1[i * f + j] = site_uniform(Site::W1, std::uint64_t(i * 4 * h + rank * f + j), in_scale);
  for (std::int64_t i = 0; i < f; ++i)
    for (std::int64_t j = 0; j < h; ++j)
      to.w2[i * h + j] = site_uniform(Site::W2, std::uint64_t((rank * f + i) * h + j), ffn_scale);
  // Gains near 1 and biases near 0, different per element so their gradients are checked element by element.
  for (std::int64_t i = 0; i < h; ++i) {
    to.norms[i] = T(1) + site_uniform(Site::Norm1Gain, std::uint64_t(i), 0.1f);
    to.norms[h + i] = site_uniform(Site::Norm1Gain, std::uint64_t(h + i), 0.1f);
    to.norms[2 * h + i] = T(1) + site_uniform(Site::Norm2Gain, std::uint64_t(i), 0.1f);
    to.norms[3 * h + i] = site_uniform(Site::Norm2Gain, std::uint64_t(h + i), 0.1f);
  }
}

}  // namespace dlsys::tensor
