// The GEMV kernels of gemv.h. Each row is a dot product; a segment (a block, or the whole row) of codes is
// accumulated against x in fp32 and its scale and zero point applied once at the end of the segment.
#include "kernels/quant/gemv.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/parallel.h"
#include "kernels/precision/float_format.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define DLSYS_GEMV_AVX2 1
#endif

namespace dlsys::quant {

namespace {

#if DLSYS_GEMV_AVX2
// The codes of one row span a page or two (4 KiB at 8 bits and n = 4096), and the hardware prefetcher starts again at
// every page, so without help each page's first lines arrive only when asked for and the core waits instead of
// converting codes meanwhile: int8 then read 8 GB/s from DRAM where fp32 read 20. A prefetch half a page ahead, once
// per cache line, keeps the next lines on their way.
constexpr std::int64_t kPrefetchAheadBytes = 2048;
void prefetch_ahead_at_line_start(const void* p, std::int64_t byte_offset) {
  if (byte_offset % 64 == 0) _mm_prefetch(static_cast<const char*>(p) + byte_offset + kPrefetchAheadBytes, _MM_HINT_T0);
}

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

// NF4 levels for 8 indices 0..15: two 8-entry permutes and a blend on bit 3.
__m256 nf4_lookup(__m256i index) {
  static const __m256 low = _mm256_loadu_ps(kNf4Levels.data()), high = _mm256_loadu_ps(kNf4Levels.data() + 8);
  const __m256 from_low = _mm256_permutevar8x32_ps(low, index), from_high = _mm256_permutevar8x32_ps(high, index);
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

// A segment's sum of value(u_j) x_j, as 8 vector lanes plus a scalar part (the ends a vector does not cover): the
// lanes are scaled and added into the row's lanes, so a row needs one horizontal sum, not one per block.
struct SegmentDot {
#if DLSYS_GEMV_AVX2
  __m256 lanes = _mm256_setzero_ps();
#endif
  float scalar = 0;
};

// For one row's 8-bit codes (value(u) = u).
SegmentDot byte_codes_dot(const std::uint8_t* codes, const float* x, std::int64_t begin, std::int64_t end) {
  SegmentDot d;
  std::int64_t j = begin;
#if DLSYS_GEMV_AVX2
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  for (; j + 16 <= end; j += 16) {
    prefetch_ahead_at_line_start(codes, j);
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + j));
    const __m256 u0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
    const __m256 u1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8)));
    a0 = _mm256_fmadd_ps(u0, _mm256_loadu_ps(x + j), a0);
    a1 = _mm256_fmadd_ps(u1, _mm256_loadu_ps(x + j + 8), a1);
  }
  d.lanes = _mm256_add_ps(a0, a1);
#endif
  for (; j < end; ++j) d.scalar += float(codes[j]) * x[j];
  return d;
}

// The same for packed 4-bit codes; `nf4` maps each code through the NormalFloat levels instead of taking it as is.
// `x_even_odd` is x with each 16 values reordered as their 8 even then 8 odd ones, as unpack_nibbles delivers codes.
SegmentDot nibble_codes_dot(const std::uint8_t* codes, const float* x, const float* x_even_odd, std::int64_t begin,
                            std::int64_t end, bool nf4) {
  auto value = [&](std::int64_t j) {
    const std::uint32_t u = (codes[j / 2] >> (4 * (j % 2))) & 0xFu;
    return nf4 ? kNf4Levels[u] : float(u);
  };
  SegmentDot d;
  std::int64_t j = begin;
#if DLSYS_GEMV_AVX2
  for (; j < end && j % 16 != 0; ++j) d.scalar += value(j) * x[j];  // up to a 16-aligned column
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  for (; j + 16 <= end; j += 16) {
    prefetch_ahead_at_line_start(codes, j / 2);
    __m256i even, odd;
    unpack_nibbles(codes + j / 2, even, odd);
    const __m256 u0 = nf4 ? nf4_lookup(even) : _mm256_cvtepi32_ps(even);
    const __m256 u1 = nf4 ? nf4_lookup(odd) : _mm256_cvtepi32_ps(odd);
    a0 = _mm256_fmadd_ps(u0, _mm256_loadu_ps(x_even_odd + j), a0);
    a1 = _mm256_fmadd_ps(u1, _mm256_loadu_ps(x_even_odd + j + 8), a1);
  }
  d.lanes = _mm256_add_ps(a0, a1);
#endif
  for (; j < end; ++j) d.scalar += value(j) * x[j];
  return d;
}

// One row of a quantized matrix: sum over segments of s (sum u x - z sum x), or s sum L[u] x for nf4.
float quantized_row(const QuantizedMatrix& q, std::int64_t r, const float* x, const float* x_even_odd,
                    const std::vector<float>& segment_sums) {
  const bool nf4 = q.spec.scheme == Scheme::Nf4;
  const std::uint8_t* codes = q.codes.data() + r * q.row_bytes;
  const float* scales = q.scales.data() + r * q.segments_per_row;
  const float* zeros = q.zeros.data() + r * q.segments_per_row;
  float scalar = 0, zero_terms = 0;
#if DLSYS_GEMV_AVX2
  __m256 lanes = _mm256_setzero_ps();
#endif
  for (std::int64_t s = 0; s < q.segments_per_row; ++s) {
    const std::int64_t from = s * q.segment, to = std::min(q.cols, from + q.segment);
    const SegmentDot d =
        q.packed() ? nibble_codes_dot(codes, x, x_even_odd, from, to, nf4) : byte_codes_dot(codes, x, from, to);
#if DLSYS_GEMV_AVX2
    lanes = _mm256_fmadd_ps(_mm256_set1_ps(scales[s]), d.lanes, lanes);
#endif
    scalar += scales[s] * d.scalar;
    if (!nf4) zero_terms += scales[s] * zeros[s] * segment_sums[std::size_t(s)];
  }
#if DLSYS_GEMV_AVX2
  scalar += horizontal_sum(lanes);
#endif
  return scalar - zero_terms;
}

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
  // The sum of x over each segment, for the zero points: s (sum u x - z sum x).
  std::vector<float> segment_sums(std::size_t(q.segments_per_row), 0.0f);
  for (std::int64_t j = 0; j < q.cols; ++j) segment_sums[std::size_t(j / q.segment)] += x[j];
  std::vector<float> x_even_odd(std::size_t(q.cols));
  for (std::int64_t j = 0; j < q.cols; ++j) {
    const std::int64_t chunk = j / 16 * 16, within = j % 16;
    const std::int64_t to = chunk + (within % 2 == 0 ? within / 2 : 8 + within / 2);
    if (chunk + 16 <= q.cols) x_even_odd[std::size_t(to)] = x[j];  // a partial last chunk is done in scalar
  }
  parallel_for(q.rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) y[r] = quantized_row(q, r, x, x_even_odd.data(), segment_sums);
  });
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
