// v2_tiled: cache blocking. C is computed in blocks; for each block the matching panels of A and B are reused from
// cache many times instead of being fetched from memory for every output element.
#include <algorithm>

#include "engine/parallel.h"
#include "kernels/matmul/matmul.h"

namespace dlsys::matmul {

void v2_tiled(const Shape& s, const float* a, const float* b, float* c, int threads) {
  constexpr std::int64_t kBlockRows = 64, kBlockInner = 256;
  std::fill(c, c + s.m * s.n, 0.0f);
  parallel_for(ceil_div(s.m, kBlockRows), threads, [&](std::int64_t block_begin, std::int64_t block_end) {
    for (std::int64_t ib = block_begin; ib < block_end; ++ib)
      for (std::int64_t lb = 0; lb < s.k; lb += kBlockInner)
        for (std::int64_t i = ib * kBlockRows; i < std::min(s.m, (ib + 1) * kBlockRows); ++i)
          for (std::int64_t l = lb; l < std::min(s.k, lb + kBlockInner); ++l) {
            const float a_il = a[i * s.k + l];
            float* c_row = c + i * s.n;
            const float* b_row = b + l * s.n;
            for (std::int64_t j = 0; j < s.n; ++j) c_row[j] += a_il * b_row[j];
          }
  });
}

}  // namespace dlsys::matmul
