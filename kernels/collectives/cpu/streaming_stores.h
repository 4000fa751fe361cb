#pragma once
// The ring's inner loops. A rank's final results (its recv buffer) are written with streaming (non-temporal) stores:
// nothing reads them again during the collective, and a normal store would first read each cache line from memory
// to own it, a third more memory traffic. The copy forwarded to the neighbour goes through the cache (it is read
// right away). Vector widths follow the compiler's target; other targets use the plain loop.
#include <cstdint>
#include <cstring>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace dlsys::collectives::detail {

// out[i] = mine[i] + incoming[i] (streamed); also forward[i] = the same when `forward` is given.
// `mine` may equal `out` (in place: same index, loaded before stored).
inline void add_results(float* out, float* forward, const float* mine, const float* incoming, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  for (; i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 63u) != 0; ++i) {
    out[i] = mine[i] + incoming[i];
    if (forward) forward[i] = out[i];
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 sum = _mm512_add_ps(_mm512_loadu_ps(mine + i), _mm512_loadu_ps(incoming + i));
    _mm512_stream_ps(out + i, sum);
    if (forward) _mm512_storeu_ps(forward + i, sum);
  }
#elif defined(__AVX__)
  for (; i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 31u) != 0; ++i) {
    out[i] = mine[i] + incoming[i];
    if (forward) forward[i] = out[i];
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 sum = _mm256_add_ps(_mm256_loadu_ps(mine + i), _mm256_loadu_ps(incoming + i));
    _mm256_stream_ps(out + i, sum);
    if (forward) _mm256_storeu_ps(forward + i, sum);
  }
#endif
  for (; i < n; ++i) {
    out[i] = mine[i] + incoming[i];
    if (forward) forward[i] = out[i];
  }
#if defined(__x86_64__) || defined(__i386__)
  _mm_sfence();  // streaming stores are weakly ordered: make them visible before the rank reports it is done
#endif
}

// out[i] = incoming[i] (streamed); also forward[i] = the same when `forward` is given.
inline void copy_results(float* out, float* forward, const float* incoming, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  for (; i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 63u) != 0; ++i) {
    out[i] = incoming[i];
    if (forward) forward[i] = incoming[i];
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(incoming + i);
    _mm512_stream_ps(out + i, v);
    if (forward) _mm512_storeu_ps(forward + i, v);
  }
#elif defined(__AVX__)
  for (; i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 31u) != 0; ++i) {
    out[i] = incoming[i];
    if (forward) forward[i] = incoming[i];
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(incoming + i);
    _mm256_stream_ps(out + i, v);
    if (forward) _mm256_storeu_ps(forward + i, v);
  }
#endif
  for (; i < n; ++i) {
    out[i] = incoming[i];
    if (forward) forward[i] = incoming[i];
  }
#if defined(__x86_64__) || defined(__i386__)
  _mm_sfence();
#endif
}

}  // namespace dlsys::collectives::detail
