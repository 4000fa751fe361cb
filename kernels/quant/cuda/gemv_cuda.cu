// Weight-only GEMV on a GPU (see gemv_cuda.h): cuBLAS for fp32 and fp16, the lab's kernels for codes.
//   quantized_kernel         the general path, one warp per row, one code per lane and step: any shape, any segment;
//   quantized_vector_kernel  the memory-bound path, for rows that split into whole 16-byte loads of codes inside one
//                            scale segment (int8 and the other byte codes, 4-bit integer codes, NF4; 2 and 3-bit codes
//                            take the general path). What makes it run at the memory's speed:
//     - each warp takes R rows and each x value it loads serves all of them, so x (from L1) costs 1/R of what it
//       would per row;
//     - the S warps of a row group share its columns, interleaved by 512-byte warp loads, and add their sums through
//       shared memory: many short work units, so the SMs finish together instead of waiting on the last long rows;
//     - each lane issues its 16-byte code loads of a step (over the R rows) before using the first, through the
//       read-only path without allocating in L1, so x stays there; with prefetch, the next step's loads are issued
//       before this step's arithmetic;
//     - a code becomes a float with one byte permute: a byte u placed under the exponent of 2^23 (0x4B000000) is the
//       float 2^23 + u, and one subtraction leaves u; a 4-bit code placed in the top mantissa bits of 16.0
//       (0x41800000) is the float 16 + u, used as it is: the lane sums (16 + u) x and subtracts 16 sum x per load;
//     - per load the lane sums u x and x, and applies the scale once: s (sum u x - z sum x), with scale and zero point
//       read as one 8-byte pair; sum x is shared by the R rows. NF4 sums level[u] x with the 16 levels in shared
//       memory (16 banks, no conflicts) and applies s.
//   quantized_resident_kernel  the x-resident path for the same rows when a row has at most 512 loads: each lane
//                            keeps its slice of x in registers for the whole kernel and rows stream past it, so
//                            the L1 pipe carries no x at all (the vector kernel re-reads x from L1 for every group of
//                            rows, 2 to 8 times the code bytes, which limits 4-bit codes before memory does).
// All compute in fp32 against fp32 x, as the CPU does.
#include <cuda_fp16.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/ptx.cuh"
#include "kernels/common/cuda/vector_map.cuh"
#include "kernels/common/device_buffer.h"
#include "kernels/quant/gemv_cuda.h"

namespace dlsys::quant::cuda {

namespace {

using dlsys::cuda::DeviceArray;
using dlsys::cuda::load_once;

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;  // the general kernel

struct DeviceCodes {
  const std::uint8_t* codes;
  const float* scales;       // NF4
  const float2* scale_zero;  // integer codes: (s, z) of each segment
  std::int64_t rows, cols, segment, segments_per_row, row_bytes;
  bool packed, nf4;
};

__constant__ float nf4_levels[16];

__device__ inline float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// A segment's scale and zero point, read once: one 8-byte load that L1 may keep briefly (the neighbouring lanes and
// the next loads of a row share it) but evicts first.
__device__ inline float2 load_scale_zero(const float2* p) {
  float2 v;
  asm("ld.global.nc.L1::evict_first.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(p));
  return v;
}

// Row `row` of the codes times x: lanes take columns lane, lane + 32, ... (neighbouring lanes read neighbouring
// bytes), each dequantizing its own weight, then a shuffle reduction.
__global__ void quantized_kernel(DeviceCodes q, const float* x, float* y) {
  const std::int64_t row = blockIdx.x * std::int64_t(kWarpsPerBlock) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= q.rows) return;
  const std::uint8_t* codes = q.codes + row * q.row_bytes;
  float sum = 0;
  for (std::int64_t j = lane; j < q.cols; j += kWarp) {
    const std::uint32_t u = q.packed ? (codes[j / 2] >> (4 * (j % 2))) & 0xFu : codes[j];
    const std::int64_t s = row * q.segments_per_row + j / q.segment;
    float w;
    if (q.nf4) {
      w = q.scales[s] * nf4_levels[u];
    } else {
      const float2 sz = q.scale_zero[s];
      w = sz.x * (float(u) - sz.y);
    }
    sum += w * x[j];
  }
  sum = warp_sum(sum);
  if (lane == 0) y[row] = sum;
}

// How the codes of a 16-byte load are laid out: 16 one-byte codes (5 to 8 bits), or 32 packed 4-bit codes (column 2i
// in the low nibble of byte i) read as integers or as NF4 level indices.
enum class CodeFormat { Bytes, Nibbles, Nf4 };

__host__ __device__ constexpr int codes_per_load(CodeFormat f) { return f == CodeFormat::Bytes ? 16 : 32; }
// What load_dot adds to each code: Nibbles sums (16 + u) x.
__host__ __device__ constexpr float code_offset(CodeFormat f) { return f == CodeFormat::Nibbles ? 16.0f : 0.0f; }

// Byte b (0..3) of `word` as a float: the byte under the exponent of 2^23 is 2^23 + byte exactly; subtracting 2^23
// leaves the byte, exactly.
template <int b>
__device__ inline float byte_as_float(std::uint32_t word) {
  return __int_as_float(int(__byte_perm(word, 0x4B000000u, 0x7540u | b))) - 8388608.0f;
}

// (a & mask) | bits in one instruction: written out, the compiler takes two (an instruction holds one constant).
__device__ inline std::uint32_t and_or(std::uint32_t a, std::uint32_t mask, std::uint32_t bits) {
  std::uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(mask), "r"(bits));  // 0xEA: (a & b) | c
  return d;
}

// Byte b of `word`, holding 0x80 | u << 3 for a 4-bit u, as byte 2 of 0x41800000 (16.0): the float 16 + u, exactly.
template <int b>
__device__ inline float nibble_plus_16(std::uint32_t word) {
  return __int_as_float(int(__byte_perm(word, 0x41000000u, 0x7054u | (b << 8))));
}

// Byte b of `offsets` (a level's byte offset, 0..60) as the NF4 level it points at.
template <int b>
__device__ inline float level_at(std::uint32_t offsets, const float* levels) {
  return *reinterpret_cast<const float*>(reinterpret_cast<const char*>(levels) + __byte_perm(offsets, 0u, 0x4440u | b));
}

// sum_j (u_j + code_offset) x_j over the codes of one 16-byte load (NF4: sum_j level[u_j] x_j); xs holds x of its
// columns. Each 4-byte word of codes has its own partial sum, so the multiply-adds form four independent chains
// instead of one 16 or 32 long (whose latency, not the memory, would set the pace).
template <CodeFormat F>
__device__ inline float load_dot(const uint4& code, const float4* xs, const float* levels) {
  const std::uint32_t words[4] = {code.x, code.y, code.z, code.w};
  float d[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const std::uint32_t w = words[k];
    if constexpr (F == CodeFormat::Bytes) {  // columns 4k .. 4k + 3, byte i of the word is column 4k + i
      const float4 a = xs[k];
      d[k] = byte_as_float<0>(w) * a.x;
      d[k] = fmaf(byte_as_float<1>(w), a.y, d[k]);
      d[k] = fmaf(byte_as_float<2>(w), a.z, d[k]);
      d[k] = fmaf(byte_as_float<3>(w), a.w, d[k]);
    } else if constexpr (F == CodeFormat::Nibbles) {  // columns 8k .. 8k + 7: low nibbles even, high nibbles odd
      const float4 a = xs[2 * k], b = xs[2 * k + 1];
      const std::uint32_t even = and_or(w << 3, 0x78787878u, 0x80808080u),
                          odd = and_or(w >> 1, 0x78787878u, 0x80808080u);
      d[k] = nibble_plus_16<0>(even) * a.x;
      d[k] = fmaf(nibble_plus_16<0>(odd), a.y, d[k]);
      d[k] = fmaf(nibble_plus_16<1>(even), a.z, d[k]);
      d[k] = fmaf(nibble_plus_16<1>(odd), a.w, d[k]);
      d[k] = fmaf(nibble_plus_16<2>(even), b.x, d[k]);
      d[k] = fmaf(nibble_plus_16<2>(odd), b.y, d[k]);
      d[k] = fmaf(nibble_plus_16<3>(even), b.z, d[k]);
      d[k] = fmaf(nibble_plus_16<3>(odd), b.w, d[k]);
    } else {  // NF4: each nibble times 4, the byte offset of its level
      const float4 a = xs[2 * k], b = xs[2 * k + 1];
      const std::uint32_t even = (w << 2) & 0x3C3C3C3Cu, odd = (w >> 2) & 0x3C3C3C3Cu;
      d[k] = level_at<0>(even, levels) * a.x;
      d[k] = fmaf(level_at<0>(odd, levels), a.y, d[k]);
      d[k] = fmaf(level_at<1>(even, levels), a.z, d[k]);
      d[k] = fmaf(level_at<1>(odd, levels), a.w, d[k]);
      d[k] = fmaf(level_at<2>(even, levels), b.x, d[k]);
      d[k] = fmaf(level_at<2>(odd, levels), b.y, d[k]);
      d[k] = fmaf(level_at<3>(even, levels), b.z, d[k]);
      d[k] = fmaf(level_at<3>(odd, levels), b.w, d[k]);
    }
  }
  return (d[0] + d[1]) + (d[2] + d[3]);
}

// Segment `index`'s scale (and zero point): (s, z) for integer codes, (s, 0) for NF4. Nothing is computed on them
// here: an instruction that used the loaded values would wait for the memory before the lane could issue its next
// loads.
template <CodeFormat F>
__device__ inline float2 load_segment(const float* scales, const float2* scale_zero, std::int64_t index) {
  if constexpr (F == CodeFormat::Nf4) {
    return make_float2(load_once(scales + index), 0.0f);
  } else {
    return load_scale_zero(scale_zero + index);
  }
}

// A load's dot product d (load_dot) with its segment's scale applied: s d for NF4, s (d - (z + code_offset) sum x)
// for integer codes.
template <CodeFormat F>
__device__ inline float scaled_dot(float2 scale_zero, float d, float x_sum) {
  if constexpr (F == CodeFormat::Nf4) return scale_zero.x * d;
  return scale_zero.x * fmaf(-(scale_zero.y + code_offset(F)), x_sum, d);
}

// The vector kernel's view of the codes: rows of `loads` 16-byte loads, `loads_per_segment` of them per scale.
struct VectorCodes {
  const uint4* codes;
  const float* scales;       // NF4
  const float2* scale_zero;  // integer codes
  int rows, loads, segments_per_row;
  std::uint64_t segment_magic;  // ceil(2^32 / loads_per_segment): load c is in segment (c x magic) >> 32
};

// The codes a lane loads in one step: kSteps loads for each of its R rows, with their scales (and zero points).
template <CodeFormat F, int kSteps, int R>
struct Batch {
  uint4 code[kSteps][R];
  float2 scale_zero[kSteps][R];
};

// Shape (R, S, L, W, P) of gemv_cuda.h's GemvShape: W warps per block in W / S groups of S warps; group g takes rows
// R g .. R g + R - 1 of the block's; warp s of a group takes loads s 32 + lane, + 32 S, ... of each of its rows,
// L / R of them per step.
template <CodeFormat F, int R, int S, int L, int W, bool P>
__global__ void __launch_bounds__(W* kWarp)
    quantized_vector_kernel(VectorCodes q, const float* __restrict__ x, float* __restrict__ y) {
  static_assert(L % R == 0 && W % S == 0 && R <= kWarp, "a shape's loads split evenly over its rows");
  constexpr int kPerLoad = codes_per_load(F);
  constexpr int kXLoads = kPerLoad / 4;  // float4 of x per load of codes
  constexpr int kSteps = L / R;
  constexpr int kGroups = W / S;
  constexpr int kStride = kSteps * S * kWarp;  // loads of a row a group covers per step
  __shared__ float levels[16];
  __shared__ float partial[S > 1 ? W : 1][R];
  if constexpr (F == CodeFormat::Nf4) {
    if (threadIdx.x < 16) levels[threadIdx.x] = nf4_levels[threadIdx.x];
    __syncthreads();
  }
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int block_first_row = blockIdx.x * (kGroups * R);
  const int first_row = block_first_row + (warp / S) * R;
  // Row r of the group; past the matrix's end, its last row (read, never written).
  const uint4* codes[R];
  const float* scales[R];
  const float2* scale_zero[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::int64_t row = min(first_row + r, q.rows - 1);
    codes[r] = q.codes + row * q.loads;
    scales[r] = q.scales + row * q.segments_per_row;
    scale_zero[r] = q.scale_zero + row * q.segments_per_row;
  }
  // Steps past the row's end load its last 16 bytes again (from L2, unused) rather than branch around the loads.
  const auto load_batch = [&](int first, Batch<F, kSteps, R>& b) {
#pragma unroll
    for (int u = 0; u < kSteps; ++u) {
      const int c = min(first + u * S * kWarp, q.loads - 1);
      const int segment = int((std::uint64_t(c) * q.segment_magic) >> 32);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        b.code[u][r] = load_once(codes[r] + c);
        b.scale_zero[u][r] = load_segment<F>(scales[r], scale_zero[r], segment);
      }
    }
  };
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0;
  const auto use_batch = [&](int first, const Batch<F, kSteps, R>& b) {
#pragma unroll
    for (int u = 0; u < kSteps; ++u) {
      const int c = first + u * S * kWarp;
      if (c >= q.loads) break;
      float4 xs[kXLoads];
#pragma unroll
      for (int k = 0; k < kXLoads; ++k) xs[k] = __ldg(x4 + std::int64_t(c) * kXLoads + k);
      float x_sum = 0;
      if constexpr (F != CodeFormat::Nf4) {
#pragma unroll
        for (int k = 0; k < kXLoads; ++k) x_sum += (xs[k].x + xs[k].y) + (xs[k].z + xs[k].w);
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float d = load_dot<F>(b.code[u][r], xs, levels);
        acc[r] += scaled_dot<F>(b.scale_zero[u][r], d, x_sum);
      }
    }
  };

  const int start = (warp % S) * kWarp + lane;
  Batch<F, kSteps, R> current;
  if constexpr (P) load_batch(start, current);
  for (int first = start; first < q.loads; first += kStride) {
    if constexpr (P) {
      Batch<F, kSteps, R> next;
      load_batch(first + kStride, next);
      use_batch(first, current);
      current = next;
    } else {
      load_batch(first, current);
      use_batch(first, current);
    }
  }

#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float sum = warp_sum(acc[r]);
    if constexpr (S == 1) {
      if (lane == r && first_row + r < q.rows) y[first_row + r] = sum;
    } else {
      if (lane == r) partial[warp][r] = sum;
    }
  }
  if constexpr (S > 1) {
    __syncthreads();
    const int t = threadIdx.x;
    if (t < kGroups * R && block_first_row + t < q.rows) {
      const int group = t / R, r = t % R;
      float sum = 0;
#pragma unroll
      for (int s = 0; s < S; ++s) sum += partial[group * S + s][r];
      y[block_first_row + t] = sum;
    }
  }
}

// Registers per lane of the x-resident kernel, as ptxas needs them without spilling (x takes 16 or 32, each row of a
// batch 4 for its codes, 2 for scale and zero point and 1 for its sum, twice over with the next batch in flight), and
// at most 80 where that lets a third block of 256 lanes share an SM: a cap rather than launch bounds, which let ptxas
// pick 64 for NF4 and spill. Any cap up to 128 allows the largest block, 512 lanes.
__host__ __device__ constexpr int resident_registers(CodeFormat f, int rows, bool prefetch, int stages) {
  if (stages > 0) return f == CodeFormat::Bytes ? (rows <= 2 ? 64 : 80) : (rows <= 2 ? 80 : 96);
  if (f == CodeFormat::Bytes) return prefetch ? (rows <= 2 ? 64 : rows <= 4 ? 96 : 128) : (rows <= 4 ? 64 : 96);
  return prefetch ? (rows <= 2 ? 80 : 128) : (rows <= 4 ? 80 : 112);
}

// Each lane holds one value of each of R rows; the warp's sums of the R rows come out in R - 1 + log2(32 / R)
// shuffles instead of 5 R: each halving step trades half of the values with the lane `offset` away (the upper lane
// keeps the upper half), then the last single value is summed as usual. Lane l ends with the sum of row l / (32 / R).
template <int R>
__device__ inline float warp_sum_rows(float (&v)[R], int lane) {
  static_assert(R >= 1 && R <= kWarp && (R & (R - 1)) == 0, "rows per batch: a power of two up to a warp");
#pragma unroll
  for (int half = R / 2, offset = kWarp / 2; half >= 1; half /= 2, offset /= 2) {
    const bool upper = (lane & offset) != 0;
#pragma unroll
    for (int i = 0; i < half; ++i) {
      const float send = upper ? v[i] : v[i + half], keep = upper ? v[i + half] : v[i];
      v[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
    }
  }
  float s = v[0];
#pragma unroll
  for (int offset = kWarp / (2 * R); offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
  return s;
}

// The codes of one batch of R rows a lane holds: its 16-byte load of each row, with the segment's scale (and zero
// point).
template <int R>
struct ResidentBatch {
  uint4 code[R];
  float2 scale_zero[R];
};

// The x-resident kernel (gemv_cuda.h): lane t of the block owns load t of every row (codes_per_load columns, one scale
// segment) for the whole kernel, its x values in registers and their sum computed once. Block b takes the rows
// [b rows / blocks, (b + 1) rows / blocks), so every block has the same number of rows to within one (whole batches
// per block would leave some blocks a batch longer than the rest), R rows at a time: each lane issues its R 16-byte
// code loads (and their scales), with P the next batch's before it uses this one's (the first batch's before x's),
// dequantizes and multiplies, then every warp reduces its R sums with shuffles into shared memory. The warps meet
// only once per 32 rows, where the block adds their sums of each row: between those barriers each warp runs at its
// own pace, its loads overlapping the others' arithmetic.
// Nothing per row is spent on edge cases: lanes past the row's loads read its last load and hold x = 0, so they add
// nothing without a branch; rows past the block's end read its last row again and their sums are never written; with P
// the two batches in flight take turns (a loop of two steps) instead of being copied from one to the other.
// With S > 0 the batches do not wait in registers: the lane copies the codes and scales of the next S - 1 batches
// into its own slots of shared memory (cp.async: the copy needs no register and nothing waits for it), reads a batch
// from there when it comes to it, and then reuses that batch's slots for the batch S - 1 further on. Each lane reads
// only what it copied itself, so no barrier is needed between copy and use.
template <CodeFormat F, int R, bool P, int S>
__global__ void __maxnreg__(resident_registers(F, R, P, S))
    quantized_resident_kernel(VectorCodes q, const float* __restrict__ x, float* __restrict__ y) {
  constexpr int kXLoads = codes_per_load(F) / 4;  // float4 of x per load of codes
  constexpr int kMaxWarps = kResidentMaxLoads / kWarp;
  __shared__ float levels[16];
  constexpr int kChunkRows = 32;  // rows whose warps' sums wait in shared memory for one pair of barriers
  static_assert(kChunkRows % R == 0, "a chunk holds whole batches");
  __shared__ float partial[kMaxWarps][kChunkRows];
  const int t = threadIdx.x, warp = t / kWarp, lane = t % kWarp, warps = blockDim.x / kWarp;
  const bool active = t < q.loads;
  const int load = active ? t : q.loads - 1;
  const int segment = int((std::uint64_t(load) * q.segment_magic) >> 32);
  const int begin = int(std::int64_t(blockIdx.x) * q.rows / gridDim.x);
  const int end = int((std::int64_t(blockIdx.x) + 1) * q.rows / gridDim.x);
  // The lane's load and scale in row `begin`; a row further is `q.loads` loads and `q.segments_per_row` scales on.
  const uint4* codes = q.codes + std::int64_t(begin) * q.loads + load;
  const float* scales = q.scales + std::int64_t(begin) * q.segments_per_row + segment;
  const float2* scale_zero = q.scale_zero + std::int64_t(begin) * q.segments_per_row + segment;
  const auto load_batch = [&](int first_row, ResidentBatch<R>& b) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int offset = min(first_row + r, end - 1) - begin;
      b.code[r] = load_once(codes + offset * q.loads);
      b.scale_zero[r] = load_segment<F>(scales, scale_zero, offset * q.segments_per_row);
    }
  };
  // S > 0: slot (stage, r) of the lane is its 16 bytes of codes at staged_codes[(stage R + r) blockDim.x], its scale
  // (NF4) or scale and zero point after all the codes.
  extern __shared__ uint4 staged[];
  const auto slot = [&](int stage, int r) { return (stage * R + r) * int(blockDim.x) + t; };
  uint4* staged_codes = staged;
  auto* staged_scales = reinterpret_cast<float*>(staged + S * R * blockDim.x);
  const auto stage_batch = [&](int first_row, int stage) {  // rows past the block's end are not copied
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int offset = first_row + r - begin;
      if (first_row + r >= end) break;
      dlsys::cuda::ptx::cp_async_16(staged_codes + slot(stage, r), codes + offset * q.loads, true);
      if constexpr (F == CodeFormat::Nf4)
        dlsys::cuda::ptx::cp_async_4(staged_scales + slot(stage, r), scales + offset * q.segments_per_row, true);
      else
        dlsys::cuda::ptx::cp_async_8(staged_scales + 2 * slot(stage, r), scale_zero + offset * q.segments_per_row);
    }
    dlsys::cuda::ptx::cp_async_commit();
  };
  const auto staged_batch = [&](int stage) {
    ResidentBatch<R> b;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      b.code[r] = staged_codes[slot(stage, r)];
      b.scale_zero[r] = F == CodeFormat::Nf4 ? make_float2(staged_scales[slot(stage, r)], 0.0f)
                                             : reinterpret_cast<const float2*>(staged_scales)[slot(stage, r)];
    }
    return b;
  };
  ResidentBatch<R> even, odd;  // S = 0: with P the two batches in flight; without, `even` alone
  if constexpr (S > 0) {
    for (int stage = 0; stage < S - 1; ++stage) stage_batch(begin + stage * R, stage);
  } else {
    load_batch(begin, even);
  }

  if constexpr (F == CodeFormat::Nf4) {
    if (t < 16) levels[t] = nf4_levels[t];
    __syncthreads();
  }
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4 xs[kXLoads];
  float x_sum = 0;
#pragma unroll
  for (int k = 0; k < kXLoads; ++k) {
    xs[k] = active ? __ldg(x4 + std::int64_t(t) * kXLoads + k) : make_float4(0, 0, 0, 0);
    x_sum += (xs[k].x + xs[k].y) + (xs[k].z + xs[k].w);
  }
  // A batch's rows times x, added into the block's chunk of row sums; false after the block's last batch.
  const auto use = [&](int first_row, const ResidentBatch<R>& current) {
    const bool more = first_row + R < end;
    float sum[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float d = load_dot<F>(current.code[r], xs, levels);
      sum[r] = scaled_dot<F>(current.scale_zero[r], d, x_sum);
    }
    const float row_sum = warp_sum_rows<R>(sum, lane);
    const int chunk_slot = (first_row - begin) % kChunkRows;
    if (lane % (kWarp / R) == 0) partial[warp][chunk_slot + lane / (kWarp / R)] = row_sum;
    if (chunk_slot + R == kChunkRows || !more) {  // the chunk is complete: the same answer in every lane
      __syncthreads();
      const int chunk_first = first_row - chunk_slot;
      if (t < chunk_slot + R && chunk_first + t < end) {
        float v = 0;
        for (int w = 0; w < warps; ++w) v += partial[w][t];
        y[chunk_first + t] = v;
      }
      __syncthreads();
    }
    return more;
  };
  // S = 0, one batch: with P the next batch's loads are issued first (when there is one), without P after the
  // arithmetic.
  const auto step = [&](int first_row, const ResidentBatch<R>& current, ResidentBatch<R>& next) {
    const bool more = first_row + R < end;
    if (P && more) load_batch(first_row + R, next);
    use(first_row, current);
    if (!P && more) load_batch(first_row + R, next);
    return more;
  };
  if constexpr (S > 0) {
    for (int first_row = begin, stage = 0;; first_row += R, stage = stage + 1 == S ? 0 : stage + 1) {
      stage_batch(first_row + (S - 1) * R, stage == 0 ? S - 1 : stage - 1);  // the slots the last batch used
      dlsys::cuda::ptx::cp_async_wait<S - 1>();
      if (!use(first_row, staged_batch(stage))) break;
    }
    dlsys::cuda::ptx::cp_async_wait<0>();
  } else if constexpr (P) {
    for (int first_row = begin;; first_row += 2 * R)
      if (!step(first_row, even, odd) || !step(first_row + R, odd, even)) break;
  } else {  // one batch at a time: it is used, then reloaded in place
    for (int first_row = begin; step(first_row, even, even); first_row += R) {
    }
  }
}

// The vector path needs rows that split into whole 16-byte loads, each inside one scale segment; packed codes take
// it at 4 bits only (the 16 + u form keeps its rounding within the tolerance when u spans 0..15).
CodeFormat code_format(const DeviceCodes& q) {
  return !q.packed ? CodeFormat::Bytes : (q.nf4 ? CodeFormat::Nf4 : CodeFormat::Nibbles);
}
bool vector_path_fits(const DeviceCodes& q, int bits) {
  const int per_load = codes_per_load(code_format(q));
  if (q.packed && !q.nf4 && bits != 4) return false;
  if (q.cols % per_load != 0 || q.segment % per_load != 0 || q.rows >= (std::int64_t(1) << 31)) return false;
  const std::int64_t loads = q.cols / per_load;
  return loads * (q.segment / per_load) < (std::int64_t(1) << 32);  // the segment magic is exact below this
}

VectorCodes vector_codes(const DeviceCodes& q) {
  const std::int64_t per_load = codes_per_load(code_format(q));
  const std::uint64_t loads_per_segment = std::uint64_t(q.segment / per_load);
  return VectorCodes{reinterpret_cast<const uint4*>(q.codes),
                     q.scales,
                     q.scale_zero,
                     int(q.rows),
                     int(q.cols / per_load),
                     int(q.segments_per_row),
                     ((std::uint64_t(1) << 32) + loads_per_segment - 1) / loads_per_segment};
}

template <CodeFormat F, int I>
void launch_vector(const VectorCodes& v, const float* x, float* y) {
  constexpr GemvShape s = kGemvShapes[I];
  constexpr int rows_per_block = s.block_warps / s.warps_per_row * s.rows_per_warp;
  const auto blocks = static_cast<unsigned>((v.rows + rows_per_block - 1) / rows_per_block);
  quantized_vector_kernel<F, s.rows_per_warp, s.warps_per_row, s.loads_in_flight, s.block_warps, s.prefetch>
      <<<blocks, s.block_warps * kWarp>>>(v, x, y);
}

template <CodeFormat F, std::size_t... I>
void launch_vector(const VectorCodes& v, int shape, const float* x, float* y, std::index_sequence<I...>) {
  ((shape == int(I) ? launch_vector<F, int(I)>(v, x, y) : void()), ...);
}

// The x-resident kernel of a code format and variant, and its launch: a block of one lane per load of a row (whole
// warps), as many blocks as fit on the GPU at once (never more than there are row batches), found once before timing.
using ResidentKernel = void (*)(VectorCodes, const float*, float*);
struct ResidentLaunch {
  ResidentKernel kernel = nullptr;
  unsigned blocks = 0, threads = 0;
  std::size_t staged_bytes = 0;  // dynamic shared memory of a block
};

template <CodeFormat F, std::size_t... I>
ResidentKernel resident_kernel(int variant, std::index_sequence<I...>) {
  ResidentKernel k = nullptr;
  ((variant == int(I) ? void(k = quantized_resident_kernel<F, kResidentVariants[I].rows, kResidentVariants[I].prefetch,
                                                           kResidentVariants[I].stages>)
                      : void()),
   ...);
  return k;
}

ResidentLaunch resident_launch(const DeviceCodes& q, int variant) {
  constexpr auto variants = std::make_index_sequence<kResidentVariantCount>();
  const CodeFormat f = code_format(q);
  ResidentLaunch l;
  l.kernel = f == CodeFormat::Bytes     ? resident_kernel<CodeFormat::Bytes>(variant, variants)
             : f == CodeFormat::Nibbles ? resident_kernel<CodeFormat::Nibbles>(variant, variants)
                                        : resident_kernel<CodeFormat::Nf4>(variant, variants);
  const std::int64_t loads = q.cols / codes_per_load(f);
  l.threads = unsigned((loads + kWarp - 1) / kWarp * kWarp);
  const ResidentVariant& v = kResidentVariants[variant];
  const std::size_t scale_bytes = f == CodeFormat::Nf4 ? sizeof(float) : sizeof(float2);
  l.staged_bytes = std::size_t(v.stages) * std::size_t(v.rows) * l.threads * (sizeof(uint4) + scale_bytes);
  int device = 0, sms = 0, per_sm = 0, shared_optin = 0;
  DLSYS_CUDA_CHECK(cudaGetDevice(&device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes{};
  DLSYS_CUDA_CHECK(cudaFuncGetAttributes(&attributes, l.kernel));
  if (l.staged_bytes + attributes.sharedSizeBytes > std::size_t(shared_optin)) return ResidentLaunch{};  // no room
  DLSYS_CUDA_CHECK(cudaFuncSetAttribute(l.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(l.staged_bytes)));
  DLSYS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, l.kernel, int(l.threads), l.staged_bytes));
  const std::int64_t batches = (q.rows + v.rows - 1) / v.rows;
  l.blocks =
      unsigned(std::max<std::int64_t>(1, std::min<std::int64_t>(batches, std::int64_t(sms) * std::max(per_sm, 1))));
  return l;
}

// The resident kernel takes rows of whole loads inside one segment each (the vector path's condition), one lane per
// load.
bool resident_path_fits(const DeviceCodes& q, int bits) {
  return vector_path_fits(q, bits) && q.cols / codes_per_load(code_format(q)) <= kResidentMaxLoads;
}

void launch_quantized(const DeviceCodes& q, bool vector, int shape, const ResidentLaunch& resident, const float* x,
                      float* y) {
  constexpr auto shapes = std::make_index_sequence<kGemvShapeCount>();
  if (resident.kernel != nullptr) {
    resident.kernel<<<resident.blocks, resident.threads, resident.staged_bytes>>>(vector_codes(q), x, y);
  } else if (!vector) {
    const auto blocks = static_cast<unsigned>((q.rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
    quantized_kernel<<<blocks, kWarpsPerBlock * kWarp>>>(q, x, y);
  } else if (code_format(q) == CodeFormat::Bytes) {
    launch_vector<CodeFormat::Bytes>(vector_codes(q), shape, x, y, shapes);
  } else if (code_format(q) == CodeFormat::Nibbles) {
    launch_vector<CodeFormat::Nibbles>(vector_codes(q), shape, x, y, shapes);
  } else {
    launch_vector<CodeFormat::Nf4>(vector_codes(q), shape, x, y, shapes);
  }
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

// Reads every 16 bytes of `words` (zeros); writes `sink` only if they were not, so the reads are not optimised away.
__global__ void read_all(const uint4* words, std::int64_t count, unsigned* sink) {
  unsigned acc = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const uint4 v = words[i];
    acc |= v.x | v.y | v.z | v.w;
  }
  if (acc != 0) *sink = acc;
}

// Reads a buffer twice the size of the L2 cache before each timed call, so the weights come from memory and the cache
// holds clean lines, as it does between a decoder's layers (overwriting the buffer instead would leave the cache
// full of dirty lines, whose write-backs then share the memory with the weights' reads).
class L2Flusher {
 public:
  L2Flusher() {
    int device = 0, l2_bytes = 0;
    DLSYS_CUDA_CHECK(cudaGetDevice(&device));
    DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    words_ = 2 * std::int64_t(l2_bytes > 0 ? l2_bytes : 16) / 16;
    buffer_ = std::make_unique<DeviceArray<uint4>>(std::size_t(words_));
    DLSYS_CUDA_CHECK(cudaMemset(buffer_->get(), 0, buffer_->bytes()));
  }
  void flush() {
    read_all<<<dlsys::cuda::map_blocks(words_), dlsys::cuda::kMapThreads>>>(buffer_->get(), words_, sink_.get());
    DLSYS_CUDA_CHECK(cudaGetLastError());
  }

 private:
  std::int64_t words_ = 0;
  std::unique_ptr<DeviceArray<uint4>> buffer_;
  DeviceArray<unsigned> sink_{1};
};

// Warm-up, then one event pair per call, the cache flushed (untimed) before each.
template <typename Launch>
TimingStats time_flushed(const Launch& launch, const MeasureOptions& options) {
  L2Flusher flusher;
  return dlsys::cuda::measure_with_events(launch, options, [&] { flusher.flush(); });
}

template <typename T>
void upload(DeviceArray<T>& device, const T* host) {
  DLSYS_CUDA_CHECK(cudaMemcpy(device.get(), host, device.bytes(), cudaMemcpyHostToDevice));
}

// Runs `call(handle)` with a fresh cuBLAS handle, destroyed on every path.
template <typename Call>
TimingStats with_cublas(const Call& call) {
  cublasHandle_t handle = nullptr;
  DLSYS_CUDA_CHECK(cublasCreate(&handle));
  try {
    const TimingStats t = call(handle);
    cublasDestroy(handle);
    return t;
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
}

}  // namespace

TimingStats gemv_fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y,
                      const MeasureOptions& options) {
  DeviceArray<float> d_w(static_cast<std::size_t>(rows * cols)), d_x(static_cast<std::size_t>(cols)),
      d_y(static_cast<std::size_t>(rows));
  upload(d_w, w);
  upload(d_x, x);
  const TimingStats t = with_cublas([&](cublasHandle_t handle) {
    const float one = 1.0f, zero = 0.0f;
    // Row-major W (rows, cols) is column-major W^T (cols, rows): y = (W^T)^T x.
    return time_flushed(
        [&] {
          DLSYS_CUDA_CHECK(cublasSgemv(handle, CUBLAS_OP_T, int(cols), int(rows), &one, d_w.get(), int(cols), d_x.get(),
                                       1, &zero, d_y.get(), 1));
        },
        options);
  });
  DLSYS_CUDA_CHECK(cudaMemcpy(y, d_y.get(), d_y.bytes(), cudaMemcpyDeviceToHost));
  return t;
}

TimingStats gemv_fp16(const std::uint16_t* w_fp16, std::int64_t rows, std::int64_t cols, const std::uint16_t* x_fp16,
                      float* y, const MeasureOptions& options) {
  DeviceArray<std::uint16_t> d_w(static_cast<std::size_t>(rows * cols)), d_x(static_cast<std::size_t>(cols));
  DeviceArray<float> d_y(static_cast<std::size_t>(rows));
  upload(d_w, w_fp16);
  upload(d_x, x_fp16);
  const TimingStats t = with_cublas([&](cublasHandle_t handle) {
    const float one = 1.0f, zero = 0.0f;
    // y (rows x 1) = op(A) x with A the column-major (cols, rows) view of W, transposed.
    return time_flushed(
        [&] {
          DLSYS_CUDA_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(rows), 1, int(cols), &one, d_w.get(),
                                        CUDA_R_16F, int(cols), d_x.get(), CUDA_R_16F, int(cols), &zero, d_y.get(),
                                        CUDA_R_32F, int(rows), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        },
        options);
  });
  DLSYS_CUDA_CHECK(cudaMemcpy(y, d_y.get(), d_y.bytes(), cudaMemcpyDeviceToHost));
  return t;
}

TimingStats gemv_quantized(const QuantizedMatrix& q, const float* x, float* y, const MeasureOptions& options,
                           int shape) {
  if (shape == kLessonGemvShapeOfFormat) shape = lesson_gemv_shape(q.spec);
  if (shape < 0 || shape >= kGemvVariantCount)
    throw BadInput("GEMV shape " + std::to_string(shape) + " is not allowed; allowed: 0 to " +
                   std::to_string(kGemvVariantCount - 1));
  const bool nf4 = q.spec.scheme == Scheme::Nf4;
  // Integer codes: each segment's scale and zero point side by side, read as one 8-byte pair.
  std::vector<float> scale_zero(nf4 ? 0 : 2 * q.scales.size());
  for (std::size_t i = 0; !nf4 && i < q.scales.size(); ++i) {
    scale_zero[2 * i] = q.scales[i];
    scale_zero[2 * i + 1] = q.zeros[i];
  }
  DeviceArray<std::uint8_t> d_codes(q.codes.size());
  DeviceArray<float> d_scales(nf4 ? q.scales.size() : 1), d_scale_zero(std::max<std::size_t>(scale_zero.size(), 2)),
      d_x(static_cast<std::size_t>(q.cols)), d_y(static_cast<std::size_t>(q.rows));
  upload(d_codes, q.codes.data());
  if (nf4) upload(d_scales, q.scales.data());
  if (!nf4) upload(d_scale_zero, scale_zero.data());
  upload(d_x, x);
  DLSYS_CUDA_CHECK(cudaMemcpyToSymbol(nf4_levels, kNf4Levels.data(), sizeof(float) * kNf4Levels.size()));
  const DeviceCodes codes{d_codes.get(),
                          d_scales.get(),
                          reinterpret_cast<const float2*>(d_scale_zero.get()),
                          q.rows,
                          q.cols,
                          q.segment,
                          q.segments_per_row,
                          q.row_bytes,
                          q.packed(),
                          nf4};
  const bool vector = vector_path_fits(codes, q.spec.bits);
  // The x-resident variants where their kernel fits (rows of at most kResidentMaxLoads loads, staged batches in the
  // shared memory a block may have); otherwise the fallback shape of the vector kernel.
  ResidentLaunch resident;
  if (shape >= kGemvShapeCount) {
    if (resident_path_fits(codes, q.spec.bits)) resident = resident_launch(codes, shape - kGemvShapeCount);
    if (resident.kernel == nullptr) shape = kResidentFallbackShape;
  }
  const TimingStats t =
      time_flushed([&] { launch_quantized(codes, vector, shape, resident, d_x.get(), d_y.get()); }, options);
  DLSYS_CUDA_CHECK(cudaMemcpy(y, d_y.get(), d_y.bytes(), cudaMemcpyDeviceToHost));
  return t;
}

}  // namespace dlsys::quant::cuda
