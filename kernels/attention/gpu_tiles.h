#pragma once
// Tile arithmetic of the GPU FlashAttention kernels (kernels/attention/cuda/), written once for both compilers so the
// CPU tests check what the kernels index with: which K/V tiles a block of Q rows visits under a causal mask, which
// of them need masking, how rows are padded in shared memory so that no two lanes of a warp hit one bank, and where
// the tensor cores' fragments put each element (the fact that lets P stay in registers between the two products).
#include <cstdint>

#include "kernels/common/host_device.h"

namespace dlsys::attention::gpu {

// --- Which tiles a block of Q rows visits --------------------------------------------------------------------------

// Q block i (rows i br .. i br + br - 1, the last one clipped at n) against K/V tiles of bc keys. Non-causal: every
// tile. Causal: the tiles whose first key is not after the block's last row; the rest are skipped whole.
DLSYS_HOST_DEVICE constexpr std::int64_t kv_tiles_for_block(std::int64_t n, std::int64_t br, std::int64_t bc,
                                                            bool causal, std::int64_t i) {
  const std::int64_t all = (n + bc - 1) / bc;
  if (!causal) return all;
  const std::int64_t last_row = (i + 1) * br < n ? (i + 1) * br - 1 : n - 1;
  const std::int64_t needed = last_row / bc + 1;
  return needed < all ? needed : all;
}

// Whether tile j of Q block i has any score to hide: keys past n (the ragged last tile), or, causal, a key after some
// row of the block (the tiles on the diagonal). Every other tile skips the per-score comparisons.
DLSYS_HOST_DEVICE constexpr bool tile_needs_mask(std::int64_t n, std::int64_t br, std::int64_t bc, bool causal,
                                                 std::int64_t i, std::int64_t j) {
  const std::int64_t last_key = (j + 1) * bc - 1;
  return last_key >= n || (causal && last_key > i * br);
}

// Causal work grows with the block index: blocks are launched largest first so the short ones fill the last wave.
DLSYS_HOST_DEVICE constexpr std::int64_t block_for_launch_index(std::int64_t blocks, std::int64_t launch_index,
                                                                bool causal) {
  return causal ? blocks - 1 - launch_index : launch_index;
}

// --- fp32 register tiles (v3_flash_registers)
// ------------------------------------------------------------------------- 64 Q rows x 64 keys per tile, 128 threads
// as 16 row groups x 8 key groups: thread (ty, tx) owns S rows 4 ty .. 4 ty + 3 and keys tx, tx + 8, ..., tx + 56 (a 4
// x 8 micro-tile), and the same 4 rows of O, columns 4 tx + 32 c .. + 3. The 8 threads that share rows are 8
// neighbouring lanes: row max and sum take 3 shuffles.
namespace registers {
inline constexpr int kRows = 64, kKeys = 64, kThreads = 128;
inline constexpr int kRowGroups = 16, kKeyGroups = 8;  // threads along rows and along keys
inline constexpr int kRowsPerThread = kRows / kRowGroups, kKeysPerThread = kKeys / kKeyGroups;
// Rows of Q, K and V in shared memory are read as float4 along d by 8 lanes at once (keys tx + 8c): with a row of
// d + 4 floats, (d + 4) / 4 is odd for d a multiple of 8, so the 8 lanes' 16-byte chunks fall in 8 different bank
// groups. P's rows (64 keys) get the same 4 floats.
DLSYS_HOST_DEVICE constexpr int row_floats(int d) { return d + 4; }
inline constexpr int kProbRowFloats = kKeys + 4;
// Q, two stages each of K and V, and P.
DLSYS_HOST_DEVICE constexpr std::int64_t shared_floats(int d) {
  return std::int64_t(kRows + 4 * kKeys) * row_floats(d) + std::int64_t(kRows) * kProbRowFloats;
}
DLSYS_HOST_DEVICE constexpr bool supports(std::int64_t d) { return d == 32 || d == 64 || d == 128; }
}  // namespace registers

// --- bf16 tensor cores (v4_flash_tensor) ---------------------------------------------------------------------------
// Each warp owns 16 Q rows (one m16 fragment row block); 8 warps make a block of 128 rows, all sharing the K and V
// tiles of 64 keys in shared memory.
namespace tensor {
inline constexpr int kWarps = 8, kRowsPerWarp = 16, kRows = kWarps * kRowsPerWarp, kKeys = 64;
inline constexpr int kThreads = kWarps * 32;
// ldmatrix reads 8 rows of 16 bytes per phase; rows of d + 8 bf16 put consecutive rows 16 bytes further along the
// banks, so the 8 rows land in 8 different bank groups (a plain 128- or 256-byte row puts them all in one).
DLSYS_HOST_DEVICE constexpr int row_elements(int d) { return d + 8; }
// Q, and two stages each of K and V, in bf16.
DLSYS_HOST_DEVICE constexpr std::int64_t shared_bytes(int d) {
  return std::int64_t(kRows + 4 * kKeys) * row_elements(d) * 2;
}
DLSYS_HOST_DEVICE constexpr bool supports(std::int64_t d) { return d == 32 || d == 64 || d == 128; }
}  // namespace tensor

// 16-byte chunk of shared memory -> which of the 8 groups of 4 banks serves it (128 bytes per bank cycle).
DLSYS_HOST_DEVICE constexpr int bank_group(std::int64_t byte_offset) { return int((byte_offset / 16) % 8); }

// --- mma.sync.m16n8k16 fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16") ------------------------------------
// lane = 4 g + t (g = group 0..7, t = thread in group 0..3). Each 32-bit register holds two neighbouring columns.
// C/D (16 x 8, fp32): c0, c1 at row g, columns 2t, 2t+1; c2, c3 at row g + 8, same columns.
DLSYS_HOST_DEVICE constexpr int mma_c_row(int lane, int reg) { return lane / 4 + (reg >= 2 ? 8 : 0); }
DLSYS_HOST_DEVICE constexpr int mma_c_col(int lane, int reg) { return 2 * (lane % 4) + (reg % 2); }
// A (16 x 16, bf16 pairs): register r, half h (0 = low 16 bits): rows g (r = 0, 2) or g + 8 (r = 1, 3), columns
// 2t + h (r = 0, 1) or 2t + 8 + h (r = 2, 3).
DLSYS_HOST_DEVICE constexpr int mma_a_row(int lane, int reg) { return lane / 4 + (reg % 2 == 1 ? 8 : 0); }
DLSYS_HOST_DEVICE constexpr int mma_a_col(int lane, int reg, int half) {
  return 2 * (lane % 4) + half + (reg >= 2 ? 8 : 0);
}
// The step that keeps P in registers: A register r of the P V product for keys 16 kk .. 16 kk + 15 is made of the
// S accumulator of key tile 2 kk + r / 2, elements (2 (r % 2), 2 (r % 2) + 1), i.e. registers c0c1 or c2c3.
DLSYS_HOST_DEVICE constexpr int p_source_key_tile(int kk, int reg) { return 2 * kk + reg / 2; }
DLSYS_HOST_DEVICE constexpr int p_source_c_reg(int reg, int half) { return 2 * (reg % 2) + half; }

// ldmatrix.x4: lane L gives the row address of matrix L / 8, row L % 8. Which 8 x 8 matrix covers which part of a
// 16 x 16 block depends on what the fragments need:
//   Q as A (row major, 16 rows x 16 d): matrices (rows 0-7, d 0-7), (rows 8-15, d 0-7), (rows 0-7, d 8-15), (8-15,
//   8-15)
DLSYS_HOST_DEVICE constexpr int ldmatrix_a_row(int lane) { return lane % 8 + ((lane / 8) % 2) * 8; }
DLSYS_HOST_DEVICE constexpr int ldmatrix_a_col(int lane) { return (lane / 16) * 8; }
//   K as B of S = Q K^T (two key tiles of 8, 16 d): (keys 0-7, d 0-7), (keys 0-7, d 8-15), (keys 8-15, d 0-7), ...
DLSYS_HOST_DEVICE constexpr int ldmatrix_k_row(int lane) { return lane % 8 + (lane / 16) * 8; }
DLSYS_HOST_DEVICE constexpr int ldmatrix_k_col(int lane) { return ((lane / 8) % 2) * 8; }
//   V as B of O = P V, transposed on the way (16 keys, two d tiles of 8): (keys 0-7, d 0-7), (keys 8-15, d 0-7),
//   (keys 0-7, d 8-15), (keys 8-15, d 8-15)
DLSYS_HOST_DEVICE constexpr int ldmatrix_v_row(int lane) { return lane % 8 + ((lane / 8) % 2) * 8; }
DLSYS_HOST_DEVICE constexpr int ldmatrix_v_col(int lane) { return (lane / 16) * 8; }

}  // namespace dlsys::attention::gpu
