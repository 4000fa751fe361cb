#pragma once
// The GPU kernel ladder: fp32 kernels that each add one idea to the one before, then tensor-core kernels in TF32 and
// BF16, each beside cuBLAS in the same precision. This header names the rungs, the tile sizes they use and the bytes
// each moves through global memory (closed forms from tile_math.h); the kernels are in cuda/.
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "kernels/matmul/tile_math.h"

namespace dlsys::matmul {

enum class Precision { Fp32, Tf32, Bf16 };
std::string_view precision_name(Precision precision);  // "fp32", "tf32", "bf16"

enum class Rung {
  Naive,        // one thread per c_ij, consecutive threads on consecutive rows: no load is coalesced
  Coalesced,    // consecutive threads on consecutive columns: B and C accesses coalesce, A is a broadcast
  SmemTiled,    // 32 x 32 tiles of A and B staged in shared memory
  Blocktile1d,  // each thread computes a column of 8 outputs: one B value read from shared memory serves 8 FMAs
  Blocktile2d,  // each thread computes 8 x 8 outputs from 8 + 8 shared-memory reads per k step
  Vectorized,   // float4 global loads, A transposed in shared memory, 128-bit shared-memory reads
  WarpTiled,    // warp tiles, cp.async pipeline, register double buffer, padded shared memory (a template)
  Cublas,       // cublasSgemm, fp32 on the CUDA cores
  Tf32Mma,      // mma.sync m16n8k8 tf32 with fp32 accumulation, ldmatrix for A, cp.async pipeline
  CublasTf32,   // cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32
  Bf16Mma,      // mma.sync m16n8k16 bf16 with fp32 accumulation, ldmatrix for A and B, cp.async pipeline
  CublasBf16,   // cublasGemmEx, bf16 inputs, fp32 output, CUBLAS_COMPUTE_32F
};

struct RungInfo {
  Rung rung;
  std::string_view key;     // JSON prefix and series id: "warptile" -> warptile_gflops
  std::string_view kernel;  // the kernel's name in the code
  Precision precision;
  bool library;           // the vendor's kernel the lab kernels of the same precision are measured against
  std::string_view idea;  // what this rung adds, one line
};

// Tiles of the hand-written rungs (the warp-tiled kernel's come from its configuration).
inline constexpr int kNaiveBlock = 32;                                    // 32 x 32 threads, one c_ij each
inline constexpr int kSmemTileEdge = 32;                                  // the smem-tiled kernel's square tile
inline constexpr int kBlock1dM = 64, kBlock1dN = 64, kBlock1dK = 8;       // 1-D register blocking
inline constexpr int kBlock1dTm = 8;                                      // outputs per thread, one column
inline constexpr int kBlock2dM = 128, kBlock2dN = 128, kBlock2dK = 8;     // 2-D register blocking and vectorized
inline constexpr int kBlock2dTm = 8, kBlock2dTn = 8;                      // outputs per thread
inline constexpr int kMmaBlockM = 128, kMmaBlockN = 128;                  // both tensor-core kernels
inline constexpr int kTf32BlockK = 32, kBf16BlockK = 32, kMmaStages = 3;  // k-slice and pipeline depth

// The warp-tiled configurations: the benchmark times every one, and the lesson times every one at its shape and runs
// the fastest (autotuned, as vendor libraries choose among their tile shapes); kWarpTiles[kLessonWarpTile] is the
// default of a direct call. Every one is instantiated in cuda/warptile.cu (a test checks each is valid()).
// The first six are 8 x 8 outputs per thread with A by 4-byte cp.async; the rest add A through 16-byte loads into
// registers (last field 1) and 8 x 16 or 16 x 8 outputs per thread.
inline constexpr std::array<WarpTile, 12> kWarpTiles{{
    {128, 128, 16, 64, 32, 8, 8, 3},
    {128, 128, 8, 64, 32, 8, 8, 4},
    {128, 128, 16, 32, 64, 8, 8, 3},
    {128, 64, 16, 64, 32, 8, 8, 3},
    {64, 128, 16, 32, 64, 8, 8, 4},
    {128, 128, 32, 64, 32, 8, 8, 2},
    {128, 256, 8, 64, 64, 8, 16, 3, 1},
    {256, 128, 8, 64, 64, 16, 8, 3, 1},
    {128, 128, 8, 64, 32, 8, 8, 3, 1},
    {128, 256, 16, 64, 64, 8, 16, 2, 1},
    {128, 256, 8, 64, 64, 8, 16, 3, 0},
    {128, 256, 8, 32, 128, 8, 16, 3, 1},
}};
// "128x256x8 w64x64 t8x16 s3 rA": block, warp and thread tiles, stages, and how A arrives (rA: through registers).
std::string warp_tile_name(const WarpTile& w);
inline constexpr int kLessonWarpTile = 0;

inline constexpr std::array<RungInfo, 12> kLadder{{
    {Rung::Naive, "naive", "v1_naive", Precision::Fp32, false, "one thread per output, threads walk down rows"},
    {Rung::Coalesced, "coalesced", "v2_coalesced", Precision::Fp32, false, "threads walk along rows: coalesced"},
    {Rung::SmemTiled, "tiled", "v3_smem_tiled", Precision::Fp32, false, "32 x 32 tiles in shared memory"},
    {Rung::Blocktile1d, "blocktile_1d", "v4_blocktile_1d", Precision::Fp32, false, "8 outputs per thread"},
    {Rung::Blocktile2d, "blocktile_2d", "v5_blocktile_2d", Precision::Fp32, false, "8 x 8 outputs per thread"},
    {Rung::Vectorized, "vectorized", "v6_vectorized", Precision::Fp32, false, "float4 loads, A transposed"},
    {Rung::WarpTiled, "warptile", "v7_warptile", Precision::Fp32, false, "warp tiles, cp.async, tile shape autotuned"},
    {Rung::Cublas, "blas", "cublasSgemm", Precision::Fp32, true, "cuBLAS fp32 (CUDA cores)"},
    {Rung::Tf32Mma, "tf32_mma", "v8_tf32_mma", Precision::Tf32, false, "tensor cores, tf32 mma.sync"},
    {Rung::CublasTf32, "blas_tf32", "cublasGemmEx tf32", Precision::Tf32, true, "cuBLAS tf32 tensor cores"},
    {Rung::Bf16Mma, "bf16_mma", "v9_bf16_mma", Precision::Bf16, false, "tensor cores, bf16 mma.sync"},
    {Rung::CublasBf16, "blas_bf16", "cublasGemmEx bf16", Precision::Bf16, true, "cuBLAS bf16 tensor cores"},
}};

inline const RungInfo& rung_info(Rung rung) { return kLadder[static_cast<std::size_t>(rung)]; }
// The library rung of a precision: what a lab kernel's "% of cuBLAS" is taken of.
inline Rung library_rung(Precision precision) {
  return precision == Precision::Fp32   ? Rung::Cublas
         : precision == Precision::Tf32 ? Rung::CublasTf32
                                        : Rung::CublasBf16;
}

// Bytes a rung moves through global memory for `shape`, from its tiles: no reuse for the per-output kernels, one read
// of A per column of blocks and of B per row of blocks for the tiled ones. The library's tiles are not known, so its
// rungs count the least any kernel moves (A and B once), a lower bound. bf16 rungs read 2-byte inputs.
double rung_bytes(Rung rung, const Shape& shape, const WarpTile& warp_tile = kWarpTiles[kLessonWarpTile]);
// One line on how rung_bytes counts, for the lesson's table.
std::string_view rung_traffic_text(Rung rung);

// The error bound for a product computed in `precision`, in the units of max_relative_error: fp32 accumulation of k
// terms (error_tolerance(shape)), plus for tf32 and bf16 the rounding of each input: a product of two inputs each
// rounded to p significant bits is off by at most about 2 * 2^-p of |a||b| (p = 11 for tf32, 8 for bf16), and those
// errors add up to at most 2 * 2^-p of sum |a||b|.
double error_tolerance(Precision precision, const Shape& shape);

}  // namespace dlsys::matmul
