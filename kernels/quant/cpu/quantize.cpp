// Quantizers of quantize.h: group statistics, codes, and double quantisation of the scales.
#include "kernels/quant/quantize.h"

#include <algorithm>
#include <cmath>

namespace dlsys::quant {

namespace {

constexpr const char* kSchemeNames[] = {"absmax", "affine", "nf4"};
constexpr const char* kGranularityNames[] = {"tensor", "channel", "block"};

struct GroupRange {
  std::int64_t row_begin, row_end, col_begin, col_end;
};

// The weights sharing one stored scale.
GroupRange group_range(const QuantizedMatrix& q, std::int64_t group) {
  switch (q.spec.granularity) {
    case Granularity::Tensor:
      return {0, q.rows, 0, q.cols};
    case Granularity::Channel:
      return {group, group + 1, 0, q.cols};
    case Granularity::Block:
      break;
  }
  const std::int64_t row = group / q.segments_per_row, seg = group % q.segments_per_row;
  return {row, row + 1, seg * q.segment, std::min(q.cols, (seg + 1) * q.segment)};
}

std::int64_t group_of(const QuantizedMatrix& q, std::int64_t row, std::int64_t seg) {
  switch (q.spec.granularity) {
    case Granularity::Tensor:
      return 0;
    case Granularity::Channel:
      return row;
    case Granularity::Block:
      break;
  }
  return row * q.segments_per_row + seg;
}

std::uint32_t nearest_nf4(float normalised) {
  std::uint32_t best = 0;
  float best_distance = INFINITY;
  for (std::uint32_t i = 0; i < kNf4Levels.size(); ++i) {
    const float distance = std::fabs(normalised - kNf4Levels[i]);
    if (distance < best_distance) best = i, best_distance = distance;
  }
  return best;
}

void store_code(QuantizedMatrix& q, std::int64_t row, std::int64_t col, std::uint32_t code) {
  if (q.packed()) {
    std::uint8_t& byte = q.codes[std::size_t(row * q.row_bytes + col / 2)];
    byte = std::uint8_t(col % 2 == 0 ? (byte & 0xF0u) | code : (byte & 0x0Fu) | (code << 4));
  } else {
    q.codes[std::size_t(row * q.row_bytes + col)] = std::uint8_t(code);
  }
}

// QLoRA's second level: the scales minus their mean, symmetric 8-bit codes per block of 256 scales.
std::vector<float> double_quantized(QuantizedMatrix& q, const std::vector<float>& scales) {
  double mean = 0;
  for (float s : scales) mean += s;
  q.scale_mean = float(mean / double(scales.size()));
  const std::size_t blocks = (scales.size() + kDoubleQuantBlock - 1) / kDoubleQuantBlock;
  q.second_scales.assign(blocks, 1.0f);
  q.scale_codes.assign(scales.size(), 0);
  std::vector<float> restored(scales.size());
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t begin = b * kDoubleQuantBlock, end = std::min(scales.size(), begin + kDoubleQuantBlock);
    float largest = 0;
    for (std::size_t i = begin; i < end; ++i) largest = std::max(largest, std::fabs(scales[i] - q.scale_mean));
    const float second = largest > 0 ? largest / 127.0f : 1.0f;
    q.second_scales[b] = second;
    for (std::size_t i = begin; i < end; ++i) {
      const float code = std::clamp(std::nearbyint((scales[i] - q.scale_mean) / second), -127.0f, 127.0f);
      q.scale_codes[i] = std::int8_t(code);
      restored[i] = q.scale_mean + second * code;
    }
  }
  return restored;
}

}  // namespace

std::optional<Scheme> find_scheme(std::string_view name) {
  for (int i = 0; i < 3; ++i)
    if (name == kSchemeNames[i]) return Scheme(i);
  return std::nullopt;
}
std::optional<Granularity> find_granularity(std::string_view name) {
  for (int i = 0; i < 3; ++i)
    if (name == kGranularityNames[i]) return Granularity(i);
  return std::nullopt;
}
const char* scheme_name(Scheme scheme) { return kSchemeNames[int(scheme)]; }
const char* granularity_name(Granularity granularity) { return kGranularityNames[int(granularity)]; }

std::uint32_t QuantizedMatrix::code(std::int64_t row, std::int64_t col) const {
  if (packed()) return (codes[std::size_t(row * row_bytes + col / 2)] >> (4 * (col % 2))) & 0xFu;
  return codes[std::size_t(row * row_bytes + col)];
}

float QuantizedMatrix::dequantized(std::int64_t row, std::int64_t col) const {
  const std::size_t at = std::size_t(row * segments_per_row + col / segment);
  const std::uint32_t u = code(row, col);
  if (spec.scheme == Scheme::Nf4) return scales[at] * kNf4Levels[u];
  return scales[at] * (float(u) - zeros[at]);
}

double scale_overhead_bits_per_param(const QuantSpec& spec, std::int64_t rows, std::int64_t cols) {
  const std::int64_t segment = spec.granularity == Granularity::Block ? std::min<std::int64_t>(spec.block, cols) : cols;
  const std::int64_t groups = spec.granularity == Granularity::Tensor    ? 1
                              : spec.granularity == Granularity::Channel ? rows
                                                                         : rows * ((cols + segment - 1) / segment);
  double bits = double(groups) * (spec.double_quant ? 8.0 : 32.0);
  if (spec.scheme == Scheme::Affine) bits += 8.0 * double(groups);  // a zero point in [0, 2^b - 1]
  if (spec.double_quant) bits += 32.0 * double((groups + kDoubleQuantBlock - 1) / kDoubleQuantBlock) + 32.0;
  return bits / (double(rows) * double(cols));
}

QuantizedMatrix quantize(const float* w, std::int64_t rows, std::int64_t cols, const QuantSpec& spec) {
  QuantizedMatrix q;
  q.spec = spec;
  if (spec.scheme == Scheme::Nf4) q.spec.bits = 4;
  q.rows = rows;
  q.cols = cols;
  q.segment = spec.granularity == Granularity::Block ? std::min<std::int64_t>(spec.block, cols) : cols;
  q.segments_per_row = (cols + q.segment - 1) / q.segment;
  q.row_bytes = q.packed() ? (cols + 1) / 2 : cols;
  q.codes.assign(std::size_t(rows * q.row_bytes), 0);
  q.groups = spec.granularity == Granularity::Tensor    ? 1
             : spec.granularity == Granularity::Channel ? rows
                                                        : rows * q.segments_per_row;
  const int bits = q.spec.bits;
  const float levels = float((1 << bits) - 1), half_range = float((1 << (bits - 1)) - 1);

  // Each group's scale and zero point from its own values.
  std::vector<float> group_scales(std::size_t(q.groups)), group_zeros(std::size_t(q.groups));
  for (std::int64_t g = 0; g < q.groups; ++g) {
    const GroupRange r = group_range(q, g);
    float lo = 0, hi = 0, largest = 0;  // the range always holds 0, so 0 stays exact (PyTorch's observers do too)
    for (std::int64_t i = r.row_begin; i < r.row_end; ++i)
      for (std::int64_t j = r.col_begin; j < r.col_end; ++j) {
        const float v = w[i * cols + j];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        largest = std::max(largest, std::fabs(v));
      }
    float scale = 1, zero = 0;
    if (spec.scheme == Scheme::Affine) {
      scale = hi > lo ? (hi - lo) / levels : 1.0f;
      zero = std::clamp(std::nearbyint(-lo / scale), 0.0f, levels);
    } else if (spec.scheme == Scheme::Absmax) {
      scale = largest > 0 ? largest / half_range : 1.0f;
      zero = half_range + 1;  // codes 1 .. 2^b - 1 stand for -(2^(b-1) - 1) .. 2^(b-1) - 1
    } else {
      scale = largest > 0 ? largest : 1.0f;
    }
    group_scales[std::size_t(g)] = scale;
    group_zeros[std::size_t(g)] = zero;
  }

  // Codes, from the full-precision scales (as QLoRA quantizes the weights before it quantizes the scales).
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::size_t g = std::size_t(group_of(q, i, j / q.segment));
      const float v = w[i * cols + j], scale = group_scales[g];
      std::uint32_t u = 0;
      if (spec.scheme == Scheme::Nf4)
        u = nearest_nf4(v / scale);
      else if (spec.scheme == Scheme::Affine)
        u = std::uint32_t(std::clamp(std::nearbyint(v / scale) + group_zeros[g], 0.0f, levels));
      else
        u = std::uint32_t(std::clamp(std::nearbyint(v / scale), -half_range, half_range) + group_zeros[g]);
      store_code(q, i, j, u);
    }

  const std::vector<float> stored_scales = spec.double_quant ? double_quantized(q, group_scales) : group_scales;
  q.scales.resize(std::size_t(rows * q.segments_per_row));
  q.zeros.resize(q.scales.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t s = 0; s < q.segments_per_row; ++s) {
      const std::size_t g = std::size_t(group_of(q, i, s)), at = std::size_t(i * q.segments_per_row + s);
      q.scales[at] = stored_scales[g];
      q.zeros[at] = group_zeros[g];
    }
  return q;
}

void dequantize(const QuantizedMatrix& q, float* w) { dequantize_rows(q, 0, q.rows, w); }

void dequantize_rows(const QuantizedMatrix& q, std::int64_t row_begin, std::int64_t row_end, float* w) {
  for (std::int64_t i = row_begin; i < row_end; ++i)
    for (std::int64_t j = 0; j < q.cols; ++j) w[(i - row_begin) * q.cols + j] = q.dequantized(i, j);
}

QuantError quantization_error(const float* w, const QuantizedMatrix& q) {
  QuantError e;
  double squared = 0, noise = 0;
  for (std::int64_t i = 0; i < q.rows; ++i)
    for (std::int64_t j = 0; j < q.cols; ++j) {
      const double d = double(q.dequantized(i, j)) - double(w[i * q.cols + j]);
      squared += d * d;
      e.max_abs = std::max(e.max_abs, std::fabs(d));
      const double step = q.scales[std::size_t(i * q.segments_per_row + j / q.segment)];
      noise += step * step / 12.0;
    }
  const double count = double(q.rows) * double(q.cols);
  e.mse = squared / count;
  if (q.spec.scheme != Scheme::Nf4) e.uniform_noise_mse = noise / count;
  return e;
}

std::vector<std::uint8_t> prune_2_of_4(float* w, std::int64_t rows, std::int64_t cols) {
  std::vector<std::uint8_t> kept(std::size_t(rows * cols), 1);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j + 4 <= cols; j += 4) {
      float* g = w + i * cols + j;
      int first = 0, second = 1;  // the two largest magnitudes, the earlier one winning a tie
      if (std::fabs(g[1]) > std::fabs(g[0])) std::swap(first, second);
      for (int k = 2; k < 4; ++k) {
        if (std::fabs(g[k]) > std::fabs(g[first])) {
          second = first;
          first = k;
        } else if (std::fabs(g[k]) > std::fabs(g[second])) {
          second = k;
        }
      }
      for (int k = 0; k < 4; ++k)
        if (k != first && k != second) {
          g[k] = 0.0f;
          kept[std::size_t(i * cols + j + k)] = 0;
        }
    }
  return kept;
}

}  // namespace dlsys::quant
