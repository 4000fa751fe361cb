// v2_tiled: how a matmul gets close to the machine's peak with the same O(mnk) work as the naive loop.
// Three ideas, each visible below:
//   1. Register blocking (the micro-kernel): a kMicroRows x kMicroCols tile of C lives in vector registers for the
//      whole inner loop. Each step loads one row of B's panel (kMicroVecs vectors) and kMicroRows scalars of A, and
//      does kMicroRows * kMicroVecs vector multiply-adds: with AVX-512, 16 loads feed 28 x 16 = 448 multiply-adds,
//      where the naive loop needs 2 loads for every single one.
//   2. Packing: the panels of A and B the micro-kernel reads are first copied into contiguous, zero-padded buffers,
//      so its loads are unit-stride, aligned, prefetch-friendly and never need an edge case.
//   3. Cache blocking: k is cut into kBlockInner-deep slices and m into kBlockRows-tall blocks so that the B panel
//      being reused stays in L1 and the packed A block stays in L2 (tile sizes below, with the reason for each).
// Threads split C's rows (in whole micro-tiles); each packs its own panels, so no thread waits on another.
// The micro-kernel is plain C++ over GCC vector types with fixed trip counts: the compiler fully unrolls it and keeps
// the accumulators in registers, using whatever vector width -march gives (AVX-512, AVX2 or SSE), with no intrinsics.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "engine/parallel.h"
#include "kernels/matmul/matmul.h"

namespace dlsys::matmul {

namespace {

// The widest vector the build targets, and how many such registers the instruction set names.
#if defined(__AVX512F__)
constexpr int kVectorFloats = 16;  // zmm: 512 bits
constexpr int kVectorRegisters = 32;
#elif defined(__AVX__)
constexpr int kVectorFloats = 8;  // ymm: 256 bits
constexpr int kVectorRegisters = 16;
#else
constexpr int kVectorFloats = 4;  // xmm: 128 bits, always present on x86-64
constexpr int kVectorRegisters = 16;
#endif
typedef float Vec __attribute__((vector_size(kVectorFloats * sizeof(float))));

// Micro-tile: kMicroVecs vectors wide, as tall as the registers allow once the B row (kMicroVecs registers), the
// broadcast A value and one spare have theirs. AVX-512: 14 x 32 (28 accumulators); AVX2: 6 x 16 (12 accumulators).
constexpr int kMicroVecs = 2;
constexpr int kMicroCols = kMicroVecs * kVectorFloats;
constexpr int kMicroRows = (kVectorRegisters - kMicroVecs - 2) / kMicroVecs;
static_assert(kMicroRows * kMicroVecs + kMicroVecs + 2 <= kVectorRegisters, "the micro-tile must fit in registers");

// Depth of a k slice: the B micro-panel (kBlockInner x kMicroCols floats, 24 KiB with AVX-512) is reused by every
// micro-tile of the row block, so it should sit in half of a 48 KiB L1, leaving room for the A panel streaming by.
constexpr std::int64_t kBlockInner = 24 * 1024 / (kMicroCols * sizeof(float));
// Rows per block: the packed A block (kBlockRows x kBlockInner floats, about 0.9 MiB) stays in a 2 MiB L2 while
// every B micro-panel of the slice passes over it.
constexpr std::int64_t kBlockRows = kMicroRows * (900 * 1024 / (kMicroRows * kBlockInner * sizeof(float)));
// Columns per slice of B: bounds the packed B buffer (kBlockInner x kBlockCols floats, 3 MiB) for very wide n.
constexpr std::int64_t kBlockCols = kMicroCols * 128;

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], FreeDeleter>;

AlignedFloats allocate_aligned(std::int64_t count) {
  const std::size_t bytes = ((static_cast<std::size_t>(count) * sizeof(float) + 63) / 64) * 64;
  float* p = static_cast<float*>(std::aligned_alloc(64, std::max<std::size_t>(bytes, 64)));
  if (p == nullptr) throw std::bad_alloc();
  return AlignedFloats(p);
}

// b_pack: ceil(cols / kMicroCols) micro-panels, each (depth, kMicroCols) row-major; columns past `cols` are zero.
void pack_b(const float* b, std::int64_t ldb, std::int64_t depth, std::int64_t cols, float* b_pack) {
  for (std::int64_t j0 = 0; j0 < cols; j0 += kMicroCols) {
    const std::int64_t width = std::min<std::int64_t>(kMicroCols, cols - j0);
    for (std::int64_t p = 0; p < depth; ++p, b_pack += kMicroCols) {
      std::memcpy(b_pack, b + p * ldb + j0, width * sizeof(float));
      std::fill(b_pack + width, b_pack + kMicroCols, 0.0f);
    }
  }
}

// a_pack: ceil(rows / kMicroRows) micro-panels, each (depth, kMicroRows): A's rows become columns, so one step of
// the micro-kernel reads kMicroRows consecutive floats. Rows past `rows` are zero.
void pack_a(const float* a, std::int64_t lda, std::int64_t rows, std::int64_t depth, float* a_pack) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += kMicroRows) {
    const std::int64_t height = std::min<std::int64_t>(kMicroRows, rows - i0);
    for (std::int64_t p = 0; p < depth; ++p, a_pack += kMicroRows) {
      for (std::int64_t i = 0; i < height; ++i) a_pack[i] = a[(i0 + i) * lda + p];
      std::fill(a_pack + height, a_pack + kMicroRows, 0.0f);
    }
  }
}

// Vector loads and stores through memcpy: no alignment or aliasing assumptions, and each compiles to one instruction.
inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof(v)); }

// c (rows x cols of a row-major matrix with leading dimension ldc, rows <= kMicroRows, cols <= kMicroCols)
//   = (accumulate ? c : 0) + a_panel (depth, kMicroRows)^T-packed times b_panel (depth, kMicroCols).
void micro_kernel(std::int64_t depth, const float* a_panel, const float* b_panel, float* c, std::int64_t ldc,
                  std::int64_t rows, std::int64_t cols, bool accumulate) {
  Vec acc[kMicroRows][kMicroVecs] = {};  // the C tile, in registers for the whole loop
  for (std::int64_t p = 0; p < depth; ++p, a_panel += kMicroRows, b_panel += kMicroCols) {
    Vec b_row[kMicroVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kMicroVecs; ++v) b_row[v] = load(b_panel + v * kVectorFloats);
#pragma GCC unroll 32
    for (int i = 0; i < kMicroRows; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < kMicroVecs; ++v) acc[i][v] += a_panel[i] * b_row[v];  // broadcast, fused multiply-add
  }
  if (rows == kMicroRows && cols == kMicroCols) {
#pragma GCC unroll 32
    for (int i = 0; i < kMicroRows; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < kMicroVecs; ++v) {
        float* c_vec = c + i * ldc + v * kVectorFloats;
        store(c_vec, accumulate ? load(c_vec) + acc[i][v] : acc[i][v]);
      }
    return;
  }
  // Edge tile: only the part of the register tile that lies inside C is written.
  float tile[kMicroRows][kMicroCols];
#pragma GCC unroll 32
  for (int i = 0; i < kMicroRows; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kMicroVecs; ++v) store(&tile[i][v * kVectorFloats], acc[i][v]);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0.0f) + tile[i][j];
}

// C rows [row_begin, row_end) = A rows [row_begin, row_end) times B.
void multiply_rows(const Shape& s, const float* a, const float* b, float* c, std::int64_t row_begin,
                   std::int64_t row_end) {
  const std::int64_t depth_max = std::min(s.k, kBlockInner);
  const std::int64_t cols_max = std::min(ceil_div(s.n, kMicroCols) * kMicroCols, kBlockCols);
  const std::int64_t rows_max = std::min(ceil_div(row_end - row_begin, kMicroRows) * kMicroRows, kBlockRows);
  const AlignedFloats b_pack = allocate_aligned(depth_max * cols_max);  // (depth, cols) in micro-panels
  const AlignedFloats a_pack = allocate_aligned(rows_max * depth_max);  // (rows, depth) in micro-panels

  for (std::int64_t j0 = 0; j0 < s.n; j0 += kBlockCols) {
    const std::int64_t cols = std::min(kBlockCols, s.n - j0);
    for (std::int64_t p0 = 0; p0 < s.k; p0 += kBlockInner) {
      const std::int64_t depth = std::min(kBlockInner, s.k - p0);
      const bool accumulate = p0 > 0;  // the first k slice overwrites C, so C needs no clearing pass
      pack_b(b + p0 * s.n + j0, s.n, depth, cols, b_pack.get());
      for (std::int64_t i0 = row_begin; i0 < row_end; i0 += kBlockRows) {
        const std::int64_t rows = std::min(kBlockRows, row_end - i0);
        pack_a(a + i0 * s.k + p0, s.k, rows, depth, a_pack.get());
        // B micro-panel outer, A micro-panel inner: the B panel stays in L1 while the A block streams from L2.
        for (std::int64_t j = 0; j < cols; j += kMicroCols)
          for (std::int64_t i = 0; i < rows; i += kMicroRows)
            micro_kernel(depth, a_pack.get() + i * depth, b_pack.get() + j * depth, c + (i0 + i) * s.n + j0 + j, s.n,
                         std::min<std::int64_t>(kMicroRows, rows - i), std::min<std::int64_t>(kMicroCols, cols - j),
                         accumulate);
      }
    }
  }
}

}  // namespace

void v2_tiled(const Shape& s, const float* a, const float* b, float* c, int threads) {
  // Threads take contiguous runs of whole micro-tiles of rows (74 of 14 rows at m = 1024 with AVX-512, split 37/37),
  // so each writes only its own rows of C and the split is even to within one micro-tile.
  const std::int64_t row_tiles = ceil_div(s.m, kMicroRows);
  parallel_for(row_tiles, threads, [&](std::int64_t tile_begin, std::int64_t tile_end) {
    multiply_rows(s, a, b, c, tile_begin * kMicroRows, std::min(s.m, tile_end * kMicroRows));
  });
}

}  // namespace dlsys::matmul
