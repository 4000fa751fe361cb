#pragma once
// The element-wise and row-wise pieces of the transformer layer, for fp32 ranks and the double reference alike:
// values that depend only on a global index (so a rank can fill its own shard without the others), dropout, layer
// norm, GeLU and the causal softmax, each with its backward. The per-element functions (the hash, the fill, the
// dropout mask, GeLU and its derivative) are host and device functions: the CUDA ranks call these same lines, so a
// GPU rank draws the same values and drops the same elements as a CPU rank.
#include <cmath>
#include <cstdint>

#include "kernels/common/host_device.h"

namespace dlsys::tensor {

// Which tensor a value or a dropout mask belongs to: part of the hash, so tensors differ.
enum class Site : std::uint32_t {
  Input = 1,
  OutputGradient,
  Wqkv,
  Wo,
  W1,
  W2,
  Norm1Gain,
  Norm2Gain,
  AttentionDropout,
  AttentionOutDropout,
  MlpOutDropout,
};

// A 64-bit mix of (site, index) (splitmix64's finaliser): every element gets its own value from its global index
// alone, whichever rank computes it and in whatever order.
DLSYS_HOST_DEVICE inline std::uint64_t site_hash(Site site, std::uint64_t index) {
  std::uint64_t z = index * 0x9E3779B97F4A7C15ull + (static_cast<std::uint64_t>(site) << 56) + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [-scale, scale), rounded to fp32 first so the fp32 ranks and the double reference start equal.
DLSYS_HOST_DEVICE inline float site_uniform(Site site, std::uint64_t index, float scale) {
  const double u = static_cast<double>(site_hash(site, index) >> 40) / static_cast<double>(1ull << 24);  // [0, 1)
  return static_cast<float>((2.0 * u - 1.0) * scale);
}

// Dropout keeps an element with probability 1 - p; kept elements are scaled by 1 / (1 - p).
inline constexpr double kDropoutProbability = 0.1;
DLSYS_HOST_DEVICE inline std::uint8_t dropout_keep(Site site, std::uint64_t index) {
  const double u = static_cast<double>(site_hash(site, index) >> 40) / static_cast<double>(1ull << 24);
  return u >= kDropoutProbability ? 1 : 0;
}
template <typename T>
DLSYS_HOST_DEVICE constexpr T dropout_scale() {
  return static_cast<T>(1.0 / (1.0 - kDropoutProbability));
}

inline constexpr double kNormEpsilon = 1e-5;

// One row of layer norm: y = (x - mean) / sqrt(var + eps) * gain + bias.
template <typename T>
void layer_norm_row(const T* x, const T* gain, const T* bias, T* y, std::int64_t h) {
  T mean = 0, var = 0;
  for (std::int64_t i = 0; i < h; ++i) mean += x[i];
  mean /= static_cast<T>(h);
  for (std::int64_t i = 0; i < h; ++i) var += (x[i] - mean) * (x[i] - mean);
  const T rstd = T(1) / std::sqrt(var / static_cast<T>(h) + static_cast<T>(kNormEpsilon));
  for (std::int64_t i = 0; i < h; ++i) y[i] = (x[i] - mean) * rstd * gain[i] + bias[i];
}

// Its backward from the stored input (mean and 1/std are recomputed, not stored: they are not among the tensors the
// activation formula counts). dx = rstd (g - mean(g) - xhat mean(g xhat)) with g = dy * gain, xhat the normalised x;
// accumulates (+=) into dx, dgain and dbias.
template <typename T>
void layer_norm_backward_row(const T* x, const T* gain, const T* dy, T* dx, T* dgain, T* dbias, std::int64_t h) {
  T mean = 0, var = 0;
  for (std::int64_t i = 0; i < h; ++i) mean += x[i];
  mean /= static_cast<T>(h);
  for (std::int64_t i = 0; i < h; ++i) var += (x[i] - mean) * (x[i] - mean);
  const T rstd = T(1) / std::sqrt(var / static_cast<T>(h) + static_cast<T>(kNormEpsilon));
  T g_mean = 0, gx_mean = 0;
  for (std::int64_t i = 0; i < h; ++i) {
    const T xhat = (x[i] - mean) * rstd, g = dy[i] * gain[i];
    g_mean += g;
    gx_mean += g * xhat;
    dgain[i] += dy[i] * xhat;
    dbias[i] += dy[i];
  }
  g_mean /= static_cast<T>(h);
  gx_mean /= static_cast<T>(h);
  for (std::int64_t i = 0; i < h; ++i) {
    const T xhat = (x[i] - mean) * rstd;
    dx[i] += rstd * (dy[i] * gain[i] - g_mean - xhat * gx_mean);
  }
}

// GeLU, tanh form (as GPT-2 and Megatron-LM use): 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))).
template <typename T>
DLSYS_HOST_DEVICE T gelu(T z) {
  const T c = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
  return T(0.5) * z * (T(1) + std::tanh(c * (z + T(0.044715) * z * z * z)));
}
template <typename T>
DLSYS_HOST_DEVICE T gelu_derivative(T z) {
  const T c = static_cast<T>(0.7978845608028654);
  const T inner = c * (z + T(0.044715) * z * z * z);
  const T th = std::tanh(inner);
  return T(0.5) * (T(1) + th) + T(0.5) * z * (T(1) - th * th) * c * (T(1) + T(3 * 0.044715) * z * z);
}

// Row i of a causal softmax over scores (s): keys 0..i are visible, later keys get probability 0.
template <typename T>
void causal_softmax_row(T* row, std::int64_t i, std::int64_t s) {
  T largest = row[0];
  for (std::int64_t j = 1; j <= i; ++j) largest = row[j] > largest ? row[j] : largest;
  T sum = 0;
  for (std::int64_t j = 0; j <= i; ++j) sum += row[j] = std::exp(row[j] - largest);
  for (std::int64_t j = 0; j <= i; ++j) row[j] /= sum;
  for (std::int64_t j = i + 1; j < s; ++j) row[j] = 0;
}

}  // namespace dlsys::tensor
