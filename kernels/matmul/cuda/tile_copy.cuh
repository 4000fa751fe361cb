#pragma once
// The copy of a block's tile into shared memory that the cp.async rungs share (v7_warptile's B, both operands of the
// tensor-core rungs). Included by .cu files only.
#include "kernels/common/cuda/ptx.cuh"

namespace dlsys::matmul::cuda::detail {

// Starts copying the kRows x kCols tile at (row0, col0) of a rows x cols row-major matrix into shared memory rows of
// kPitch elements, in 16-byte pieces: thread threadIdx.x takes pieces t, t + kThreads, ... Elements outside the
// matrix become zeros. kVector: the matrix's rows are 16-byte aligned, so a piece is one 16-byte cp.async. Otherwise
// each element goes alone: 4-byte ones by cp.async, 2-byte ones (cp.async has no 2-byte size) by a plain load and
// store, which completes before the barrier that precedes the tile's use, like the copies it replaces.
template <int kRows, int kCols, int kPitch, int kThreads, bool kVector, class T>
__device__ __forceinline__ void copy_tile_async(T* tile, const T* matrix, long long rows, long long cols,
                                                long long row0, long long col0) {
  constexpr int kPiece = 16 / int(sizeof(T));  // elements
  constexpr int kPiecesPerRow = kCols / kPiece;
  // Not unrolled: an unrolled copy loop keeps every copy's address live across the whole k loop, and those registers
  // are what the accumulators need.
#pragma unroll 1
  for (int i = 0; i < kRows * kPiecesPerRow / kThreads; ++i) {
    const int e = int(threadIdx.x) + i * kThreads, r = e / kPiecesPerRow, col = (e % kPiecesPerRow) * kPiece;
    const long long gr = row0 + r, gc = col0 + col;
    if constexpr (kVector) {
      const bool inside = gr < rows && gc < cols;  // the piece is all inside or all outside
      dlsys::cuda::ptx::cp_async_16(tile + r * kPitch + col, inside ? matrix + gr * cols + gc : matrix, inside);
    } else {
#pragma unroll
      for (int x = 0; x < kPiece; ++x) {
        const bool inside = gr < rows && gc + x < cols;
        if constexpr (sizeof(T) == 4)
          dlsys::cuda::ptx::cp_async_4(tile + r * kPitch + col + x, inside ? matrix + gr * cols + gc + x : matrix,
                                       inside);
        else
          tile[r * kPitch + col + x] = inside ? matrix[gr * cols + gc + x] : T{};
      }
    }
  }
}

}  // namespace dlsys::matmul::cuda::detail
