// STREAM's four kernels (McCalpin, https://www.cs.virginia.edu/stream/ref.html) on the worker pool: each thread
// streams one contiguous range, vectorised, writing with streaming stores when asked (arrays far larger than the
// caches), so the bytes moved are exactly the bytes STREAM counts.
#include "engine/parallel.h"
#include "kernels/common/simd.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_math.h"

namespace dlsys::roofline {

using simd::load;
using simd::map_range;
using simd::Vec;

void stream_copy(float* c, const float* a, std::int64_t n, int threads, Stores stores) {
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) {
    map_range(
        c, begin, end, stores, [&](std::int64_t i) { return load(a + i); }, [&](std::int64_t i) { return a[i]; });
    simd::stream_fence();
  });
}

void stream_scale(float* b, const float* c, float s, std::int64_t n, int threads, Stores stores) {
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) {
    map_range(
        b, begin, end, stores, [&](std::int64_t i) { return s * load(c + i); },
        [&](std::int64_t i) { return s * c[i]; });
    simd::stream_fence();
  });
}

void stream_add(float* c, const float* a, const float* b, std::int64_t n, int threads, Stores stores) {
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) {
    map_range(
        c, begin, end, stores, [&](std::int64_t i) { return load(a + i) + load(b + i); },
        [&](std::int64_t i) { return a[i] + b[i]; });
    simd::stream_fence();
  });
}

void stream_triad(float* a, const float* b, const float* c, float s, std::int64_t n, int threads, Stores stores) {
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) {
    map_range(
        a, begin, end, stores, [&](std::int64_t i) -> Vec { return load(b + i) + s * load(c + i); },
        [&](std::int64_t i) { return b[i] + s * c[i]; });
    simd::stream_fence();
  });
}

void scale_on_pool(float* y, const float* x, std::int64_t n, int threads) {
  // One range per thread, counted by threads rather than by elements: parallel_for would run a one-element call on
  // the caller alone, and this kernel exists to show what handing work to the pool costs.
  parallel_for(threads, threads, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t t = first; t < last; ++t) {
      const std::int64_t begin = n * t / threads, end = n * (t + 1) / threads;
      map_range(
          y, begin, end, Stores::Cached, [&](std::int64_t i) { return kScaleFactor * load(x + i); },
          [&](std::int64_t i) { return kScaleFactor * x[i]; });
    }
  });
}

}  // namespace dlsys::roofline
