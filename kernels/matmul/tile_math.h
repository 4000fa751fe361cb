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
// A kernel whose thread blocks each own a bm x bn tile of C and stream the k dimension through fast memory: every
// block reads a bm x k panel of A and a k x bn panel of B, so A is read ceil(n / bn) times, B ceil(m / bm) times,
// and C is written once. `in_bytes` is the size of one element of A and B (4 for fp32, 2 for bf16), `out_bytes` of C.
DLSYS_HOST_DEVICE constexpr double bytes_block_tiled(const Shape& s, std::int64_t bm, std::int64_t bn,
                                                     double in_bytes = 4, double out_bytes = 4) {
  return in_bytes * (double(s.m) * double(s.k) * double(ceil_div(s.n, bn)) +
                     double(s.k) * double(s.n) * double(ceil_div(s.m, bm))) +
         out_bytes * double(s.m) * double(s.n);
}
// A and B read once, C written once, with the element sizes of a precision (the least any kernel can move).
DLSYS_HOST_DEVICE constexpr double bytes_once(const Shape& s, double in_bytes, double out_bytes) {
  return in_bytes * (double(s.m) * double(s.k) + double(s.k) * double(s.n)) + out_bytes * double(s.m) * double(s.n);
}

// The tile shape of a warp-tiled kernel: a block of (bm / wm) x (bn / wn) warps owns a bm x bn tile of C; each warp a
// wm x wn tile; each thread tm x tn outputs, taken as (tm / 4) x (tn / 4) groups of 4 x 4 spread over the warp tile
// so that neighbouring lanes read neighbouring 16-byte words of shared memory. `stages` k-slices of bk are in flight.
// A reaches shared memory one of two ways: 4-byte cp.async copies that transpose it on the way (a_regs = 0), or
// 16-byte global loads into registers, stored transposed after the current slice's FMAs (a_regs = 1): a quarter of
// the load instructions and no per-element address arithmetic.
struct WarpTile {
  int bm, bn, bk, wm, wn, tm, tn, stages;
  int a_regs = 0;

  DLSYS_HOST_DEVICE constexpr int warps() const { return (bm / wm) * (bn / wn); }
  DLSYS_HOST_DEVICE constexpr int threads() const { return 32 * warps(); }
  DLSYS_HOST_DEVICE constexpr int lanes_m() const { return wm / tm; }  // lanes along a warp tile's rows
  DLSYS_HOST_DEVICE constexpr int lanes_n() const { return wn / tn; }
  // Shared memory rows: A transposed (bk rows of bm + 4 floats), B as it lies (bk rows of bn + 4 floats). The 4 floats
  // of padding keep rows 16-byte aligned for 128-bit reads and shift successive rows by 4 banks.
  DLSYS_HOST_DEVICE constexpr int a_row_floats() const { return bm + 4; }
  DLSYS_HOST_DEVICE constexpr int b_row_floats() const { return bn + 4; }
  DLSYS_HOST_DEVICE constexpr int stage_floats() const { return bk * (a_row_floats() + b_row_floats()); }
  DLSYS_HOST_DEVICE constexpr int smem_bytes() const { return 4 * stages * stage_floats(); }
  // Copies per thread per stage: A one float each (4-byte copies), or 4 floats each when loaded through registers; B
  // 16 bytes each.
  DLSYS_HOST_DEVICE constexpr int a_copies_per_thread() const { return bm * bk / (a_regs ? 4 : 1) / threads(); }
  // 128 accumulators or more per thread fill the register file with one block per SM; fewer leave room for two.
  DLSYS_HOST_DEVICE constexpr int blocks_per_sm() const { return tm * tn >= 128 ? 1 : 2; }
  DLSYS_HOST_DEVICE constexpr int b_copies_per_thread() const { return bk * bn / 4 / threads(); }
  // Every divisibility the kernel's index arithmetic relies on, and the limits of the hardware.
  DLSYS_HOST_DEVICE constexpr bool valid() const {
    return bm % wm == 0 && bn % wn == 0 && wm % tm == 0 && wn % tn == 0 && tm % 4 == 0 && tn % 4 == 0 &&
           lanes_m() * lanes_n() == 32 && lanes_n() >= 4 && lanes_n() <= 8 && threads() <= 1024 &&
           (bm * bk / (a_regs ? 4 : 1)) % threads() == 0 && bk % 4 == 0 && (bk * bn / 4) % threads() == 0 &&
           bn % 4 == 0 && stages >= 2 && (a_regs == 0 || a_regs == 1) && smem_bytes() <= 227 * 1024;
  }
};

// Arithmetic intensity, FLOPs per byte of main-memory traffic.
DLSYS_HOST_DEVICE constexpr double intensity(double flop_count, double bytes) { return flop_count / bytes; }

}  // namespace dlsys::matmul
