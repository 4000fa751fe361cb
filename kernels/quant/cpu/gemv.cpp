// The GEMV kernels of gemv.h. Each row is a dot product; a segment (a block, or the whole row) of codes is
// accumulated against x in fp32 and its scale and zero point applied once at the end of the segment.
#include "kernels/quant/gemv.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "engine/parallel.h"
#include "kernels/common/simd.h"
#include "kernels/precision/float_format.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define DLSYS_GEMV_AVX2 1
#endif

namespace dlsys::quant {

namespace {

#if DLSYS_GEMV_AVX2
using simd::prefetch_ahead_at_line_start;

float horizontal_sum(__m256 v) {
  const __m128 sum4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 sum2 = _mm_add_ps(sum4, _mm_movehl_ps(sum4, sum4));
  return _mm_cvtss_f32(_mm_add_ss(sum2, _mm_shuffle_ps(sum2, sum2, 1)));
}

// 16 packed 4-bit codes (8 bytes) as two vectors of 8 int32: the low nibbles (elements 0, 2, ..., 14), then the high
// ones (1, 3, ..., 15). Two widening shuffles per 16 codes; x is reordered to match once per call.
void unpack_nibbles(const std::uint8_t* p, __m256i& even, __m256i& odd) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i mask = _mm_set1_epi8(0x0F);
  even = _mm256_cvtepu8_epi32(_mm_and_si128(bytes, mask));
  odd = _mm256_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(bytes, 4), mask));
}

// NF4 levels for 8 indices 0..15: two 8-entry permutes and a blend on bit 3. The two halves of the table are loaded
// by the caller, once per segment: a function-local static cost a guard check per call and kept this from inlining.
struct Nf4Table {
  __m256 low = _mm256_loadu_ps(kNf4Levels.data()), high = _mm256_loadu_ps(kNf4Levels.data() + 8);
};
__m256 nf4_lookup(const Nf4Table& table, __m256i index) {
  const __m256 from_low = _mm256_permutevar8x32_ps(table.low, index);
  const __m256 from_high = _mm256_permutevar8x32_ps(table.high, index);
  const __m256 use_high = _mm256_castsi256_ps(_mm256_cmpgt_epi32(index, _mm256_set1_epi32(7)));
  return _mm256_blendv_ps(from_low, from_high, use_high);
}
#endif

float fp32_dot(const float* w, const float* x, std::int64_t n) {
  std::int64_t j = 0;
  float sum = 0;
#if DLSYS_GEMV_AVX2
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  for (; j + 16 <= n; j += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + j), _mm256_loadu_ps(x + j), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + j + 8), _mm256_loadu_ps(x + j + 8), a1);
  }
  sum = horizontal_sum(_mm256_add_ps(a0, a1));
#endif
  for (; j < n; ++j) sum += w[j] * x[j];
  return sum;
}

float fp16_dot(const std::uint16_t* w, const float* x, std::int64_t n) {
  std::int64_t j = 0;
  float sum = 0;
#if DLSYS_GEMV_AVX2 && defined(__F16C__)
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  for (; j + 16 <= n; j += 16) {
    prefetch_ahead_at_line_start(w, j * 2);
    const __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + j)));
    const __m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + j + 8)));
    a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + j), a0);
    a1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + j + 8), a1);
  }
  sum = horizontal_sum(_mm256_add_ps(a0, a1));
#endif
  for (; j < n; ++j) sum += precision::float_from_fp16_bits(w[j]) * x[j];
  return sum;
}

// x as the integer-code kernels multiply it: int8 codes with one scale for the whole vector (per-token activation
// quantization, as SmoothQuant and llama.cpp's CPU kernels use), so that a segment's sum of u x is a sum of whole
// numbers, exact in int32 lanes. Widening every code to fp32 instead cost three instructions per 8 codes: the int4
// GEMV then ran at half the memory's rate, slower than int8 although it reads half the bytes.
struct Int8Vector {
  float scale = 0;                        // x_j is taken as scale x codes[j]
  std::vector<std::int8_t> codes;         // round(x_j / scale), |code| <= 127
  std::vector<std::int8_t> nibble_order;  // each 64 codes as 32 even then 32 odd ones, as packed nibbles unpack
  std::vector<std::int64_t> prefix;       // prefix[j] = codes[0] + ... + codes[j - 1]
};

constexpr int kInt8XLevel = 127;

Int8Vector quantize_x(const float* x, std::int64_t n) {
  Int8Vector v;
  float absmax = 0;
  for (std::int64_t j = 0; j < n; ++j) absmax = std::max(absmax, std::fabs(x[j]));
  v.scale = absmax > 0 ? absmax / kInt8XLevel : 1.0f;
  v.codes.resize(std::size_t(n));
  v.nibble_order.resize(std::size_t(n));
  v.prefix.assign(std::size_t(n) + 1, 0);
  for (std::int64_t j = 0; j < n; ++j) {
    const float code = std::clamp(std::nearbyint(x[j] / v.scale), float(-kInt8XLevel), float(kInt8XLevel));
    v.codes[std::size_t(j)] = std::int8_t(code);
    v.prefix[std::size_t(j) + 1] = v.prefix[std::size_t(j)] + std::int64_t(code);
  }
  for (std::int64_t chunk = 0; chunk + 64 <= n; chunk += 64)
    for (std::int64_t k = 0; k < 32; ++k) {
      v.nibble_order[std::size_t(chunk + k)] = v.codes[std::size_t(chunk + 2 * k)];
      v.nibble_order[std::size_t(chunk + 32 + k)] = v.codes[std::size_t(chunk + 2 * k + 1)];
    }
  return v;
}

// A segment's exact sum of (u_j - offset) x_j over x's int8 codes: 8 int32 lanes where the CPU has AVX2 (the columns
// a vector does not cover go into the first lane), one integer otherwise. Every lane stays far below 2^31: at most
// 32768 columns of 255 x 127.
#if DLSYS_GEMV_AVX2
using IntegerLanes = __m256i;
IntegerLanes no_lanes() { return _mm256_setzero_si256(); }
IntegerLanes add_to_first_lane(IntegerLanes lanes, std::int64_t v) {
  return _mm256_add_epi32(lanes, _mm256_setr_epi32(int(v), 0, 0, 0, 0, 0, 0, 0));
}
__m256 lanes_as_float(IntegerLanes lanes) { return _mm256_cvtepi32_ps(lanes); }

// Sums of a x b over each 4 bytes, a unsigned and b signed, added into the lanes: pairs of products fit the int16
// step as long as a <= 128 and |b| <= 127 (2 x 128 x 127 < 2^15).
IntegerLanes add_byte_products(IntegerLanes sums, __m256i a_unsigned, __m256i b_signed) {
  const __m256i pairs = _mm256_maddubs_epi16(a_unsigned, b_signed);
  return _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}
#else
using IntegerLanes = std::int64_t;
IntegerLanes no_lanes() { return 0; }
IntegerLanes add_to_first_lane(IntegerLanes lanes, std::int64_t v) { return lanes + v; }
#endif

// Byte codes (5 to 8 bits) with offset 128: a code reaches 255, too large for the int16 step, while u - 128 is a
// signed byte whose sign the products move onto x.
constexpr std::int64_t kByteCodeOffset = 128;
IntegerLanes byte_codes_dot(const std::uint8_t* codes, const Int8Vector& x, std::int64_t begin, std::int64_t end) {
  IntegerLanes d = no_lanes();
  std::int64_t j = begin, rest = 0;
#if DLSYS_GEMV_AVX2
  for (; j + 32 <= end; j += 32) {
    prefetch_ahead_at_line_start(codes, j);
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + j));
    const __m256i q = _mm256_xor_si256(u, _mm256_set1_epi8(char(0x80)));
    const __m256i xj = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.codes.data() + j));
    d = add_byte_products(d, _mm256_abs_epi8(q), _mm256_sign_epi8(xj, q));
  }
#endif
  for (; j < end; ++j) rest += (std::int64_t(codes[j]) - kByteCodeOffset) * x.codes[std::size_t(j)];
  return add_to_first_lane(d, rest);
}

// Packed 4-bit (and narrower) codes with offset 0: a 32-byte load holds 64 codes, the low nibbles the even ones; the
// vector loop covers whole 64-column chunks and multiplies them by x in that order.
IntegerLanes nibble_codes_dot(const std::uint8_t* codes, const Int8Vector& x, std::int64_t begin, std::int64_t end) {
  auto code = [&](std::int64_t j) { return std::int64_t((codes[j / 2] >> (4 * (j % 2))) & 0xFu); };
  IntegerLanes d = no_lanes();
  std::int64_t j = begin, rest = 0;
#if DLSYS_GEMV_AVX2
  for (; j < end && j % 64 != 0; ++j) rest += code(j) * x.codes[std::size_t(j)];
  const __m256i low_nibbles = _mm256_set1_epi8(0x0F);
  for (; j + 64 <= end; j += 64) {
    prefetch_ahead_at_line_start(codes, j / 2);
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + j / 2));
    const __m256i even = _mm256_and_si256(bytes, low_nibbles);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low_nibbles);
    const std::int8_t* xj = x.nibble_order.data() + j;
    d = add_byte_products(d, even, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xj)));
    d = add_byte_products(d, odd, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xj + 32)));
  }
#endif
  for (; j < end; ++j) rest += code(j) * x.codes[std::size_t(j)];
  return add_to_first_lane(d, rest);
}

// One row of integer codes: scale_x sum over segments of s sum (u - z) x, where sum (u - z) x is the dot above plus
// (offset - z) sum x, all whole numbers (the zero point is one), so only the scales round. Two accumulators, for
// alternate segments, so that blocks of 64 codes do not wait on each other's multiply-add.
float integer_codes_row(const QuantizedMatrix& q, std::int64_t r, const Int8Vector& x) {
  const std::uint8_t* codes = q.codes.data() + r * q.row_bytes;
  const float* scales = q.scales.data() + r * q.segments_per_row;
  const float* zeros = q.zeros.data() + r * q.segments_per_row;
  const std::int64_t offset = q.packed() ? 0 : kByteCodeOffset;
#if DLSYS_GEMV_AVX2
  __m256 sum = _mm256_setzero_ps(), other_sum = _mm256_setzero_ps();
#else
  float sum = 0, other_sum = 0;
#endif
  for (std::int64_t s = 0; s < q.segments_per_row; ++s) {
    const std::int64_t from = s * q.segment, to = std::min(q.cols, from + q.segment);
    const IntegerLanes dot = q.packed() ? nibble_codes_dot(codes, x, from, to) : byte_codes_dot(codes, x, from, to);
    const std::int64_t x_sum = x.prefix[std::size_t(to)] - x.prefix[std::size_t(from)];
    const IntegerLanes exact = add_to_first_lane(dot, (offset - std::int64_t(zeros[s])) * x_sum);
#if DLSYS_GEMV_AVX2
    sum = _mm256_fmadd_ps(_mm256_set1_ps(scales[s]), lanes_as_float(exact), sum);
#else
    sum += scales[s] * float(exact);
#endif
    std::swap(sum, other_sum);
  }
#if DLSYS_GEMV_AVX2
  return x.scale * horizontal_sum(_mm256_add_ps(sum, other_sum));
#else
  return x.scale * (sum + other_sum);
#endif
}

// NF4 codes stand for levels that are not whole numbers, so their rows multiply x as it is, in fp32: a segment's sum
// of L[u_j] x_j as 8 vector lanes plus a scalar part (the ends a vector does not cover). `x_even_odd` is x with each
// 16 values reordered as their 8 even then 8 odd ones, as unpack_nibbles delivers codes.
struct Nf4Dot {
#if DLSYS_GEMV_AVX2
  __m256 lanes = _mm256_setzero_ps();
#endif
  float scalar = 0;
};

Nf4Dot nf4_codes_dot(const std::uint8_t* codes, const float* x, const float* x_even_odd, std::int64_t begin,
                     std::int64_t end) {
  auto value = [&](std::int64_t j) { return kNf4Levels[(codes[j / 2] >> (4 * (j % 2))) & 0xFu]; };
  Nf4Dot d;
  std::int64_t j = begin;
#if DLSYS_GEMV_AVX2
  for (; j < end && j % 16 != 0; ++j) d.scalar += value(j) * x[j];  // up to a 16-aligned column
  const Nf4Table table;
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  for (; j + 16 <= end; j += 16) {
    prefetch_ahead_at_line_start(codes, j / 2);
    __m256i even, odd;
    unpack_nibbles(codes + j / 2, even, odd);
    a0 = _mm256_fmadd_ps(nf4_lookup(table, even), _mm256_loadu_ps(x_even_odd + j), a0);
    a1 = _mm256_fmadd_ps(nf4_lookup(table, odd), _mm256_loadu_ps(x_even_odd + j + 8), a1);
  }
  d.lanes = _mm256_add_ps(a0, a1);
#endif
  for (; j < end; ++j) d.scalar += value(j) * x[j];
  return d;
}

// One row of NF4 codes: the sum over segments of s sum L[u] x.
float nf4_row(const QuantizedMatrix& q, std::int64_t r, const float* x, const float* x_even_odd) {
  const std::uint8_t* codes = q.codes.data() + r * q.row_bytes;
  const float* scales = q.scales.data() + r * q.segments_per_row;
  float scalar = 0;
#if DLSYS_GEMV_AVX2
  __m256 lanes = _mm256_setzero_ps();
#endif
  for (std::int64_t s = 0; s < q.segments_per_row; ++s) {
    const std::int64_t from = s * q.segment, to = std::min(q.cols, from + q.segment);
    const Nf4Dot d = nf4_codes_dot(codes, x, x_even_odd, from, to);
#if DLSYS_GEMV_AVX2
    lanes = _mm256_fmadd_ps(_mm256_set1_ps(scales[s]), d.lanes, lanes);
#endif
    scalar += scales[s] * d.scalar;
  }
#if DLSYS_GEMV_AVX2
  scalar += horizontal_sum(lanes);
#endif
  return scalar;
}

// x with each 16 values as their 8 even then 8 odd ones (a partial last 16 is done in scalar).
std::vector<float> even_odd_order(const float* x, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n / 16 * 16; ++j) {
    const std::int64_t chunk = j / 16 * 16, within = j % 16;
    out[std::size_t(chunk + (within % 2 == 0 ? within / 2 : 8 + within / 2))] = x[j];
  }
  return out;
}

bool multiplies_integer_codes(const QuantizedMatrix& q) { return q.spec.scheme != Scheme::Nf4; }

}  // namespace

const char* gemv_instruction_set() {
#if DLSYS_GEMV_AVX2
  return "AVX2 + FMA";
#else
  return "scalar";
#endif
}

void gemv_fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y, int threads) {
  parallel_for(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) y[r] = fp32_dot(w + r * cols, x, cols);
  });
}

void gemv_fp16(const std::uint16_t* w, std::int64_t rows, std::int64_t cols, const float* x, float* y, int threads) {
  parallel_for(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) y[r] = fp16_dot(w + r * cols, x, cols);
  });
}

void gemv_quantized(const QuantizedMatrix& q, const float* x, float* y, int threads) {
  if (multiplies_integer_codes(q)) {
    const Int8Vector x_int8 = quantize_x(x, q.cols);
    parallel_for(q.rows, threads, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t r = begin; r < end; ++r) y[r] = integer_codes_row(q, r, x_int8);
    });
    return;
  }
  const std::vector<float> x_even_odd = even_odd_order(x, q.cols);
  parallel_for(q.rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) y[r] = nf4_row(q, r, x, x_even_odd.data());
  });
}

std::vector<float> gemv_x_as_used(const QuantizedMatrix& q, const float* x) {
  if (!multiplies_integer_codes(q)) return std::vector<float>(x, x + q.cols);
  const Int8Vector x_int8 = quantize_x(x, q.cols);
  std::vector<float> out(std::size_t(q.cols));
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = x_int8.scale * float(x_int8.codes[j]);
  return out;
}

void gemv_reference(const float* w, std::int64_t rows, std::int64_t cols, const float* x, double* y) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t j = 0; j < cols; ++j) sum += double(w[r * cols + j]) * double(x[j]);
    y[r] = sum;
  }
}

void gemv_reference(const QuantizedMatrix& q, const float* x, double* y) {
  for (std::int64_t r = 0; r < q.rows; ++r) {
    double sum = 0;
    for (std::int64_t j = 0; j < q.cols; ++j) sum += double(q.dequantized(r, j)) * double(x[j]);
    y[r] = sum;
  }
}

double gemv_max_relative_error(const float* w, std::int64_t rows, std::int64_t cols, const float* x, const float* y,
                               const double* ref) {
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    double terms = 0;
    for (std::int64_t j = 0; j < cols; ++j) terms += std::fabs(double(w[r * cols + j]) * double(x[j]));
    const double err = std::fabs(double(y[r]) - ref[r]);
    if (std::isnan(y[r])) return INFINITY;
    worst = std::max(worst, terms > 0 ? err / terms : err);
  }
  return worst;
}

double gemv_max_relative_error(const QuantizedMatrix& q, const float* x, const float* y, const double* ref) {
  double worst = 0;
  for (std::int64_t r = 0; r < q.rows; ++r) {
    double terms = 0;
    for (std::int64_t j = 0; j < q.cols; ++j) {
      const std::size_t at = std::size_t(r * q.segments_per_row + j / q.segment);
      const double u = q.spec.scheme == Scheme::Nf4 ? std::fabs(kNf4Levels[q.code(r, j)])
                                                    : double(q.code(r, j)) + std::fabs(double(q.zeros[at]));
      terms += std::fabs(double(q.scales[at])) * u * std::fabs(double(x[j]));
    }
    const double err = std::fabs(double(y[r]) - ref[r]);
    if (std::isnan(y[r])) return INFINITY;
    worst = std::max(worst, terms > 0 ? err / terms : err);
  }
  return worst;
}

double gemv_error_tolerance(std::int64_t cols) {
  return 4.0 * double(std::max<std::int64_t>(cols, 1)) * std::ldexp(1.0, -24);
}

}  // namespace dlsys::quant
