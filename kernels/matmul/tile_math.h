#pragma once
// Counts and tile arithmetic shared by the CPU and CUDA paths (host and device), and by the lesson's theory.
#include <cstdint>

#include "kernels/common/ceil_div.h"
#include "kernels/common/host_device.h"

namespace dlsys::matmul {

struct Shape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
};

// The course's counts (T1): each of the m*n outputs takes k multiplications and k-1 additions.
DLSYS_HOST_DEVICE constexpr double multiplications(const Shape& s) { return double(s.m) * double(s.n) * double(s.k); }
DLSYS_HOST_DEVICE constexpr double additions(const Shape& s) { return double(s.m) * double(s.n) * double(s.k - 1); }
// The FLOP convention vendors use for GEMM: one fused multiply-add = 2 FLOPs, so 2mnk (not the exact mn(2k-1)).
DLSYS_HOST_DEVICE constexpr double flops(const Shape& s) { return 2.0 * double(s.m) * double(s.n) * double(s.k); }

using ::dlsys::ceil_div;

// Main-memory traffic in bytes, fp32, if nothing is reused between output elements: every c_ij reads its row of A
// and column of B (2k elements) and writes itself once.
DLSYS_HOST_DEVICE constexpr double bytes_naive(const Shape& s) {
  return 4.0 * (2.0 * double(s.m) * double(s.n) * double(s.k) + double(s.m) * double(s.n));
}
// With square tiles of `tile` elements on a side held in fast memory: each tile of C reads a tile-row panel of A
// (tile x k) and a tile-column panel of B (k x tile), so A is read ceil(n/tile) times and B ceil(m/tile) times.
DLSYS_HOST_DEVICE constexpr double bytes_tiled(const Shape& s, std::int64_t tile) {
  return 4.0 * (double(s.m) * double(s.k) * double(ceil_div(s.n, tile)) +
                double(s.k) * double(s.n) * double(ceil_div(s.m, tile)) + double(s.m) * double(s.n));
}
// Perfect reuse: A and B read once, C written once.
DLSYS_HOST_DEVICE constexpr double bytes_minimum(const Shape& s) {
  return 4.0 * (double(s.m) * double(s.k) + double(s.k) * double(s.n) + double(s.m) * double(s.n));
}
// Arithmetic intensity, FLOPs per byte of main-memory traffic.
DLSYS_HOST_DEVICE constexpr double intensity(double flop_count, double bytes) { return flop_count / bytes; }

}  // namespace dlsys::matmul
