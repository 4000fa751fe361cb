#pragma once
// Vector helpers for the CPU kernels of kernels/*/cpu/, which are compiled with -march=native: GCC vector types as
// wide as the target's widest float vector (AVX-512, AVX2 or SSE), streaming stores, and cos and exp as polynomials
// that vectorise (glibc's cosf and expf are scalar calls without -ffast-math, and would make a memory-bound loop
// compute-bound). Include it only from those sources: lessons, app and tests are built for the baseline target, and a
// header compiled at two vector widths would break the one-definition rule.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/common/stores.h"

namespace dlsys::simd {

#if defined(__AVX512F__)
inline constexpr int kFloats = 16;
#elif defined(__AVX__)
inline constexpr int kFloats = 8;
#else
inline constexpr int kFloats = 4;
#endif
inline constexpr std::int64_t kVectorBytes = kFloats * sizeof(float);

typedef float Vec __attribute__((vector_size(kVectorBytes)));
typedef std::int32_t IVec __attribute__((vector_size(kVectorBytes)));

// v in every lane. Written as v - 0, which is v for every float (-0 included), so the compiler emits one broadcast
// (from memory, where v comes from there); Vec{} + v must turn -0 into +0 and costs an add before the broadcast.
inline Vec splat(float v) { return v - Vec{}; }
inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

// A read half a page ahead, requested once per cache line, for streams the hardware prefetcher serves poorly: it
// starts again at every 4 KiB page, so each page's first lines arrive only when asked for, and it loses track of
// several short streams read side by side in one page. Without it the quant lesson's int8 GEMV read 8 GB/s from DRAM
// where fp32 read 20, and the roofline's decode GEMV (rows of 1 KiB, four at once) 11-14 GB/s where it now reads 19.
inline constexpr std::int64_t kPrefetchAheadBytes = 2048;
inline void prefetch_ahead_at_line_start(const void* p, std::int64_t byte_offset) {
  if (byte_offset % 64 == 0) __builtin_prefetch(static_cast<const char*>(p) + byte_offset + kPrefetchAheadBytes);
}

// A store that bypasses the caches: an output that is not read again soon would otherwise first be read from memory
// to own its cache line (a third more traffic for a copy), then evict data that is. `p` must be kVectorBytes-aligned.
inline void stream(float* p, Vec v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, (__m512)v);
#elif defined(__AVX__)
  _mm256_stream_ps(p, (__m256)v);
#elif defined(__SSE__)
  _mm_stream_ps(p, (__m128)v);
#else
  store(p, v);
#endif
}
// Streaming stores are weakly ordered: a range that used them ends with this, before another thread reads its output.
inline void stream_fence() {
#if defined(__SSE__)
  _mm_sfence();
#endif
}

// Elements before `p + i` is vector-aligned (for streaming stores), capped at `count`.
inline std::int64_t elements_to_alignment(const float* p, std::int64_t count) {
  const auto misalign = reinterpret_cast<std::uintptr_t>(p) % kVectorBytes;
  const std::int64_t head = misalign == 0 ? 0 : std::int64_t((kVectorBytes - misalign) / sizeof(float));
  return head < count ? head : count;
}

// out[i] = f(i) for i in [begin, end): vec(i) gives the kFloats values from i, one(i) the single value at i (the same
// arithmetic, for the edges). With streaming stores the vector part starts at an aligned address, and the caller ends
// its whole range with stream_fence(): a fence after every short piece (a row) would wait for each piece's stores to
// drain before the next starts, and halve the bandwidth.
template <typename VecAt, typename OneAt>
inline void map_range(float* out, std::int64_t begin, std::int64_t end, Stores stores, VecAt vec, OneAt one) {
  std::int64_t i = begin;
  if (stores == Stores::Streaming) {
    const std::int64_t head = begin + elements_to_alignment(out + begin, end - begin);
    for (; i < head; ++i) out[i] = one(i);
    // Four vectors per step: more loads in flight at once, as STREAM's tuned builds unroll.
    for (; i + 4 * kFloats <= end; i += 4 * kFloats) {
      const Vec v0 = vec(i), v1 = vec(i + kFloats), v2 = vec(i + 2 * kFloats), v3 = vec(i + 3 * kFloats);
      stream(out + i, v0);
      stream(out + i + kFloats, v1);
      stream(out + i + 2 * kFloats, v2);
      stream(out + i + 3 * kFloats, v3);
    }
    for (; i + kFloats <= end; i += kFloats) stream(out + i, vec(i));
  } else {
    for (; i + kFloats <= end; i += kFloats) store(out + i, vec(i));
  }
  for (; i < end; ++i) out[i] = one(i);
}

// Arithmetic written once for a float and for a Vec: the two differ only in how a comparison selects and how a
// whole-valued float becomes an integer.
inline float select(bool mask, float a, float b) { return mask ? a : b; }
inline Vec select(IVec mask, Vec a, Vec b) { return mask ? a : b; }
inline std::int32_t to_int(float whole) { return static_cast<std::int32_t>(whole); }
inline IVec to_int(Vec whole) { return __builtin_convertvector(whole, IVec); }
inline float bits_to_float(std::int32_t bits) { return std::bit_cast<float>(bits); }
inline Vec bits_to_float(IVec bits) { return std::bit_cast<Vec>(bits); }
inline std::int32_t float_to_bits(float f) { return std::bit_cast<std::int32_t>(f); }
inline IVec float_to_bits(Vec f) { return std::bit_cast<IVec>(f); }

// Round to the nearest whole number (ties to even) for |x| < 2^22: adding 1.5 * 2^23 leaves no fraction bits.
template <typename T>
inline T round_whole(T x) {
  const float magic = 12582912.0f;
  return (x + magic) - magic;
}

// cos(x) for |x| up to about 1e5 (error about 1.2e-7 absolute): x = j pi + r with |r| <= pi/2 (pi split in three
// parts, Cody and Waite, so that j times the first is exact), cos x = (-1)^j cos r, and cos r a polynomial of degree 5
// in r^2, fitted for this lab on [0, (pi/2)^2] toward the least largest error (2.2e-10 in exact arithmetic, 1.2e-7
// evaluated in fp32). One polynomial and a sign, about 16 vector operations: Cephes' sine and cosine polynomials,
// chosen by quadrant, took 26, and on a 2-core CPU one cos pass was compute-bound.
template <typename T>
inline T cos_poly(T x) {
  const T j = round_whole(x * 0.318309886183790672f);  // 1 / pi
  const T r = ((x - j * 3.140625f) - j * 9.67502593994140625e-4f) - j * 1.509957990978376432e-7f;
  const T z = r * r;
  const T c = 9.9999999978e-1f +
              z * (-4.9999999358e-1f +
                   z * (4.1666636258e-2f + z * (-1.3888361401e-3f + z * (2.4760161353e-5f + z * -2.6051494970e-7f))));
  return select((to_int(j) & 1) != 0, -c, c);
}

// exp(x), relative error about 1e-7; below -87 it returns 0's neighbourhood, above 88 it saturates near FLT_MAX.
// x = n ln 2 + r with |r| <= ln2 / 2 (ln 2 in two parts), a degree-6 polynomial for exp(r) (Cephes expf), times 2^n
// built in the exponent bits. n comes from one multiply-add: adding 1.5 x 2^23 + 127 leaves n + 127 whole in the low
// bits of t, which shifted up are 2^n's exponent field (a fifth fewer operations than rounding and converting apart).
template <typename T>
inline T exp_poly(T x) {
  constexpr float kRoundAndBias = 12583039.0f;  // 1.5 x 2^23 + 127
  x = select(x > 88.0f, T{} + 88.0f, x);
  x = select(x < -87.0f, T{} - 87.0f, x);
  const T t = x * 1.44269504088896341f + kRoundAndBias;  // 1 / ln 2
  const T n = t - kRoundAndBias;
  const T r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  const T p = ((((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r +
                 1.6666665459e-1f) *
                    r +
                5.0000001201e-1f) *
                   r * r +
               r) +
              1.0f;
  return p * bits_to_float(float_to_bits(t) << 23);
}

// GELU with the tanh approximation used by GPT-2 and BERT: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed
// as x / (1 + exp(-2u)), which is the same function (0.5 (1 + tanh u) is the logistic of 2u) in fewer operations.
template <typename T>
inline T gelu_poly(T x) {
  const T u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x / (1.0f + exp_poly(-2.0f * u));
}

}  // namespace dlsys::simd
