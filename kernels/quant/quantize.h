#pragma once
// Quantization of a weight matrix W (rows = output channels, cols = inputs, row-major) to b-bit integer codes:
//   absmax (symmetric): s = max|w| / (2^(b-1) - 1), q = clamp(round(w / s), -(2^(b-1) - 1), 2^(b-1) - 1);
//   affine (zero point): s = (max - min) / (2^b - 1), z = round(-min / s), q = clamp(round(w / s) + z, 0, 2^b - 1);
//   nf4 (QLoRA, Dettmers et al. 2023): w / absmax rounded to the nearest of 16 NormalFloat levels;
// with one scale per tensor, per output channel (row) or per block of `block` consecutive weights of a row.
// Every code is stored unsigned, u = q + offset (absmax: offset 2^(b-1); affine: the group's zero point), so one
// dequantisation serves both: w^ = s (u - z). Codes of 4 bits or fewer are packed two to a byte (the even element in
// the low nibble), wider ones one to a byte; each row starts on a byte.
// Double quantisation (QLoRA): the fp32 block scales are themselves quantized, to 8 bits in blocks of 256 after
// subtracting their mean (here with 8-bit integers; QLoRA uses 8-bit floats).
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace dlsys::quant {

enum class Scheme { Absmax, Affine, Nf4 };
enum class Granularity { Tensor, Channel, Block };

std::optional<Scheme> find_scheme(std::string_view name);
std::optional<Granularity> find_granularity(std::string_view name);
const char* scheme_name(Scheme scheme);
const char* granularity_name(Granularity granularity);

// The 16 NormalFloat levels, from bitsandbytes' table (QLoRA, Appendix E): quantiles of N(0, 1) scaled to [-1, 1],
// with an exact 0.
inline constexpr std::array<float, 16> kNf4Levels = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};
inline constexpr int kDoubleQuantBlock = 256;  // scales per second-level block (QLoRA)

struct QuantSpec {
  Scheme scheme = Scheme::Absmax;
  Granularity granularity = Granularity::Channel;
  int bits = 8;    // 2..8; nf4 is 4
  int block = 64;  // weights per block (granularity block)
  bool double_quant = false;
};

struct QuantizedMatrix {
  QuantSpec spec;
  std::int64_t rows = 0, cols = 0;
  std::int64_t segment = 0;  // weights of a row that share a scale: block, or the whole row
  std::int64_t segments_per_row = 0;
  std::int64_t row_bytes = 0;       // packed codes per row
  std::vector<std::uint8_t> codes;  // rows x row_bytes
  // One scale and zero point per (row, segment), expanded so the kernels read them the same way for every
  // granularity (a per-tensor scale repeats on every row). Scales are after double quantisation when it is on.
  std::vector<float> scales;
  std::vector<float> zeros;  // the zero point z in w^ = s (u - z); absmax: 2^(b-1); nf4: unused
  std::int64_t groups = 0;   // distinct scales the format stores: 1, rows, or rows x segments_per_row
  // Double quantisation: each scale is mean + second_scale[g / 256] x code (int8), stored in 8 bits.
  std::vector<std::int8_t> scale_codes;
  std::vector<float> second_scales;
  float scale_mean = 0;

  bool packed() const { return spec.bits <= 4; }
  std::uint32_t code(std::int64_t row, std::int64_t col) const;
  float dequantized(std::int64_t row, std::int64_t col) const;
};

// Bits of scales (and zero points) per weight the format stores: 32 bits per fp32 scale, 8 per zero point, and with
// double quantisation 8 per scale plus 32 per 256 of them.
double scale_overhead_bits_per_param(const QuantSpec& spec, std::int64_t rows, std::int64_t cols);

QuantizedMatrix quantize(const float* w, std::int64_t rows, std::int64_t cols, const QuantSpec& spec);
void dequantize(const QuantizedMatrix& q, float* w);
// Rows [row_begin, row_end) only, into w ((row_end - row_begin) x cols): what a forward pass dequantizes at a time,
// so a 4-bit base never needs its whole fp32 copy (QLoRA).
void dequantize_rows(const QuantizedMatrix& q, std::int64_t row_begin, std::int64_t row_end, float* w);

// Squared error of w^ against w, averaged over the weights, and what uniform noise of step D = s predicts for it:
// the mean over weights of s^2 / 12 (each value's error is spread evenly over +-s/2). nullopt for nf4 (uneven steps).
struct QuantError {
  double mse = 0;
  std::optional<double> uniform_noise_mse;
  double max_abs = 0;
};
QuantError quantization_error(const float* w, const QuantizedMatrix& q);

// 2:4 structured sparsity: of every 4 consecutive weights of a row keep the 2 of largest magnitude (ties: the
// earlier), zero the rest. Returns the kept mask (1 = kept).
std::vector<std::uint8_t> prune_2_of_4(float* w, std::int64_t rows, std::int64_t cols);

}  // namespace dlsys::quant
