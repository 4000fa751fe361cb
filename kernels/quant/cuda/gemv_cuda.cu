// Weight-only GEMV on a GPU (see gemv_cuda.h): cuBLAS for fp32 and fp16, the lab's kernels for codes.
//   quantized_kernel         the general path, one warp per row, one code per lane and step: any shape, any segment;
//   quantized_vector_kernel  the memory-bound path, for rows that split into whole 16-byte loads of codes inside one
//                            scale segment. What makes it run at the memory's speed:
//     - each warp takes R rows (up to 4) and each x value it loads serves all of them, so x (from L1) costs a
//       quarter of what it would per row; enough warps remain to fill every SM (R shrinks for short matrices);
//     - each lane issues all its 16-byte code loads of a step (2 to 8, across the R rows) before using the first,
//       through the read-only path without allocating in L1, so x stays there;
//     - a code becomes a float with one byte permute and one subtraction (the byte placed under the exponent of
//       2^23, 0x4B000000, is the float 2^23 + u), no shifts and conversions per code;
//     - per load the lane sums u x and x, and applies the scale once: s (sum u x - z sum x); sum x is shared by the
//       R rows. NF4 sums level[u] x with the 16 levels in shared memory (16 banks, no conflicts) and applies s.
// Both compute in fp32 against fp32 x, as the CPU does.
#include <cuda_fp16.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/vector_map.cuh"
#include "kernels/common/device_buffer.h"
#include "kernels/quant/gemv_cuda.h"

namespace dlsys::quant::cuda {

namespace {

using dlsys::cuda::DeviceArray;
using dlsys::cuda::load_once;

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;        // the general kernel
constexpr int kVectorWarpsPerBlock = 4;  // the vector kernel: small blocks spread evenly over the SMs
constexpr int kCodeLoadsPerLane = 8;     // 16-byte loads of codes a lane has in flight per step, over its R rows

struct DeviceCodes {
  const std::uint8_t* codes;
  const float* scales;
  const float* zeros;
  std::int64_t rows, cols, segment, segments_per_row, row_bytes;
  bool packed, nf4;
};

__constant__ float nf4_levels[16];

__device__ inline float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Row `row` of the codes times x: lanes take columns lane, lane + 32, ... (neighbouring lanes read neighbouring
// bytes), each dequantizing its own weight, then a shuffle reduction.
__global__ void quantized_kernel(DeviceCodes q, const float* x, float* y) {
  const std::int64_t row = blockIdx.x * std::int64_t(kWarpsPerBlock) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= q.rows) return;
  const std::uint8_t* codes = q.codes + row * q.row_bytes;
  const float* scales = q.scales + row * q.segments_per_row;
  const float* zeros = q.zeros + row * q.segments_per_row;
  float sum = 0;
  for (std::int64_t j = lane; j < q.cols; j += kWarp) {
    const std::uint32_t u = q.packed ? (codes[j / 2] >> (4 * (j % 2))) & 0xFu : codes[j];
    const std::int64_t s = j / q.segment;
    const float w = q.nf4 ? scales[s] * nf4_levels[u] : scales[s] * (float(u) - zeros[s]);
    sum += w * x[j];
  }
  sum = warp_sum(sum);
  if (lane == 0) y[row] = sum;
}

// How the codes of a 16-byte load are laid out: 16 one-byte codes (5 to 8 bits), or 32 packed codes of 2 to 4 bits
// (column 2i in the low nibble of byte i) read as integers or as NF4 level indices.
enum class CodeFormat { Bytes, Nibbles, Nf4 };

__host__ __device__ constexpr int codes_per_load(CodeFormat f) { return f == CodeFormat::Bytes ? 16 : 32; }

// Byte b (0..3) of `word` as a float: the byte under the exponent of 2^23 is 2^23 + byte exactly; subtracting 2^23
// leaves the byte, exactly.
template <int b>
__device__ inline float byte_as_float(std::uint32_t word) {
  return __int_as_float(int(__byte_perm(word, 0x4B000000u, 0x7540u | b))) - 8388608.0f;
}

// Byte b of `offsets` (a level's byte offset, 0..60) as the NF4 level it points at.
template <int b>
__device__ inline float level_at(std::uint32_t offsets, const float* levels) {
  return *reinterpret_cast<const float*>(reinterpret_cast<const char*>(levels) + __byte_perm(offsets, 0u, 0x4440u | b));
}

// sum_j u_j x_j over the codes of one 16-byte load (NF4: sum_j level[u_j] x_j); xs holds x of its columns.
template <CodeFormat F>
__device__ inline float load_dot(const uint4& code, const float4* xs, const float* levels) {
  const std::uint32_t words[4] = {code.x, code.y, code.z, code.w};
  float d = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const std::uint32_t w = words[k];
    if constexpr (F == CodeFormat::Bytes) {  // columns 4k .. 4k + 3, byte i of the word is column 4k + i
      const float4 a = xs[k];
      d = fmaf(byte_as_float<0>(w), a.x, d);
      d = fmaf(byte_as_float<1>(w), a.y, d);
      d = fmaf(byte_as_float<2>(w), a.z, d);
      d = fmaf(byte_as_float<3>(w), a.w, d);
    } else if constexpr (F == CodeFormat::Nibbles) {  // columns 8k .. 8k + 7: low nibbles even, high nibbles odd
      const float4 a = xs[2 * k], b = xs[2 * k + 1];
      const std::uint32_t even = w & 0x0F0F0F0Fu, odd = (w >> 4) & 0x0F0F0F0Fu;
      d = fmaf(byte_as_float<0>(even), a.x, d);
      d = fmaf(byte_as_float<0>(odd), a.y, d);
      d = fmaf(byte_as_float<1>(even), a.z, d);
      d = fmaf(byte_as_float<1>(odd), a.w, d);
      d = fmaf(byte_as_float<2>(even), b.x, d);
      d = fmaf(byte_as_float<2>(odd), b.y, d);
      d = fmaf(byte_as_float<3>(even), b.z, d);
      d = fmaf(byte_as_float<3>(odd), b.w, d);
    } else {  // NF4: each nibble times 4, the byte offset of its level
      const float4 a = xs[2 * k], b = xs[2 * k + 1];
      const std::uint32_t even = (w << 2) & 0x3C3C3C3Cu, odd = (w >> 2) & 0x3C3C3C3Cu;
      d = fmaf(level_at<0>(even, levels), a.x, d);
      d = fmaf(level_at<0>(odd, levels), a.y, d);
      d = fmaf(level_at<1>(even, levels), a.z, d);
      d = fmaf(level_at<1>(odd, levels), a.w, d);
      d = fmaf(level_at<2>(even, levels), b.x, d);
      d = fmaf(level_at<2>(odd, levels), b.y, d);
      d = fmaf(level_at<3>(even, levels), b.z, d);
      d = fmaf(level_at<3>(odd, levels), b.w, d);
    }
  }
  return d;
}

// R rows per warp; lane l takes loads l, l + 32, ... of each row (a warp reads 512 contiguous bytes of a row per
// load), kCodeLoadsPerLane / R steps of them at once.
template <CodeFormat F, int R>
__global__ void __launch_bounds__(kVectorWarpsPerBlock* kWarp)
    quantized_vector_kernel(DeviceCodes q, const float* __restrict__ x, float* __restrict__ y) {
  constexpr int kPerLoad = codes_per_load(F);
  constexpr int kXLoads = kPerLoad / 4;  // float4 of x per load of codes
  constexpr int kSteps = kCodeLoadsPerLane / R;
  __shared__ float levels[16];
  if constexpr (F == CodeFormat::Nf4) {
    if (threadIdx.x < 16) levels[threadIdx.x] = nf4_levels[threadIdx.x];
    __syncthreads();
  }
  const int lane = threadIdx.x % kWarp;
  const std::int64_t first_row = (blockIdx.x * std::int64_t(kVectorWarpsPerBlock) + threadIdx.x / kWarp) * R;
  if (first_row >= q.rows) return;
  const int rows_here = int(q.rows - first_row < R ? q.rows - first_row : R);
  const int loads = int(q.cols / kPerLoad), loads_per_segment = int(q.segment / kPerLoad);
  // Row r of the warp; past the matrix's end, its first row again (read, never written).
  const uint4* codes[R];
  const float *scales[R], *zeros[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::int64_t row = first_row + (r < rows_here ? r : 0);
    codes[r] = reinterpret_cast<const uint4*>(q.codes + row * q.row_bytes);
    scales[r] = q.scales + row * q.segments_per_row;
    zeros[r] = q.zeros + row * q.segments_per_row;
  }
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0;

  for (int first = lane; first < loads; first += kSteps * kWarp) {
    uint4 code[kSteps][R];
    float scale[kSteps][R], zero[kSteps][R] = {};
    // Steps past the row's end load its last 16 bytes again (from L2, unused) rather than branch around the loads.
#pragma unroll
    for (int u = 0; u < kSteps; ++u) {
      const int c = min(first + u * kWarp, loads - 1);
      const int segment = c / loads_per_segment;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        code[u][r] = load_once(codes[r] + c);
        scale[u][r] = load_once(scales[r] + segment);
        if constexpr (F != CodeFormat::Nf4) zero[u][r] = load_once(zeros[r] + segment);
      }
    }
#pragma unroll
    for (int u = 0; u < kSteps; ++u) {
      const int c = first + u * kWarp;
      if (c >= loads) break;
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
        const float d = load_dot<F>(code[u][r], xs, levels);
        acc[r] = F == CodeFormat::Nf4 ? fmaf(scale[u][r], d, acc[r])
                                      : fmaf(scale[u][r], fmaf(-zero[u][r], x_sum, d), acc[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float sum = warp_sum(acc[r]);
    if (lane == r && r < rows_here) y[first_row + r] = sum;
  }
}

// The vector path needs rows that split into whole 16-byte loads, each inside one scale segment.
CodeFormat code_format(const DeviceCodes& q) {
  return !q.packed ? CodeFormat::Bytes : (q.nf4 ? CodeFormat::Nf4 : CodeFormat::Nibbles);
}
bool vector_path_fits(const DeviceCodes& q) {
  const int per_load = codes_per_load(code_format(q));
  return q.cols % per_load == 0 && q.segment % per_load == 0;
}

// Rows per warp: as many as share x (up to 4) while the warps still number at least 8 per SM.
int rows_per_warp(std::int64_t rows) {
  int device = 0, sms = 0;
  DLSYS_CUDA_CHECK(cudaGetDevice(&device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  for (int r : {4, 2})
    if ((rows + r - 1) / r >= 8 * std::int64_t(sms)) return r;
  return 1;
}

template <CodeFormat F, int R>
void launch_vector(const DeviceCodes& q, const float* x, float* y) {
  const std::int64_t warps = (q.rows + R - 1) / R;
  const auto blocks = static_cast<unsigned>((warps + kVectorWarpsPerBlock - 1) / kVectorWarpsPerBlock);
  quantized_vector_kernel<F, R><<<blocks, kVectorWarpsPerBlock * kWarp>>>(q, x, y);
}

template <CodeFormat F>
void launch_vector(const DeviceCodes& q, int rows_per_warp, const float* x, float* y) {
  if (rows_per_warp == 4)
    launch_vector<F, 4>(q, x, y);
  else if (rows_per_warp == 2)
    launch_vector<F, 2>(q, x, y);
  else
    launch_vector<F, 1>(q, x, y);
}

void launch_quantized(const DeviceCodes& q, bool vector, int rows_per_warp, const float* x, float* y) {
  if (!vector) {
    const auto blocks = static_cast<unsigned>((q.rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
    quantized_kernel<<<blocks, kWarpsPerBlock * kWarp>>>(q, x, y);
  } else if (code_format(q) == CodeFormat::Bytes) {
    launch_vector<CodeFormat::Bytes>(q, rows_per_warp, x, y);
  } else if (code_format(q) == CodeFormat::Nibbles) {
    launch_vector<CodeFormat::Nibbles>(q, rows_per_warp, x, y);
  } else {
    launch_vector<CodeFormat::Nf4>(q, rows_per_warp, x, y);
  }
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

// Overwrites a buffer twice the size of the L2 cache before each timed call, so the weights come from memory.
class L2Flusher {
 public:
  L2Flusher() {
    int device = 0, l2_bytes = 0;
    DLSYS_CUDA_CHECK(cudaGetDevice(&device));
    DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    bytes_ = 2 * std::size_t(l2_bytes > 0 ? l2_bytes : 1);
    buffer_ = std::make_unique<DeviceArray<std::uint8_t>>(bytes_);
  }
  void flush() { DLSYS_CUDA_CHECK(cudaMemset(buffer_->get(), 0, bytes_)); }

 private:
  std::size_t bytes_ = 0;
  std::unique_ptr<DeviceArray<std::uint8_t>> buffer_;
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

TimingStats gemv_quantized(const QuantizedMatrix& q, const float* x, float* y, const MeasureOptions& options) {
  DeviceArray<std::uint8_t> d_codes(q.codes.size());
  DeviceArray<float> d_scales(q.scales.size()), d_zeros(std::max<std::size_t>(q.zeros.size(), 1)),
      d_x(static_cast<std::size_t>(q.cols)), d_y(static_cast<std::size_t>(q.rows));
  upload(d_codes, q.codes.data());
  upload(d_scales, q.scales.data());
  if (!q.zeros.empty()) upload(d_zeros, q.zeros.data());
  upload(d_x, x);
  DLSYS_CUDA_CHECK(cudaMemcpyToSymbol(nf4_levels, kNf4Levels.data(), sizeof(float) * kNf4Levels.size()));
  const DeviceCodes codes{d_codes.get(), d_scales.get(),     d_zeros.get(), q.rows,     q.cols,
                          q.segment,     q.segments_per_row, q.row_bytes,   q.packed(), q.spec.scheme == Scheme::Nf4};
  const bool vector = vector_path_fits(codes);
  const int rows_per = rows_per_warp(q.rows);
  const TimingStats t = time_flushed([&] { launch_quantized(codes, vector, rows_per, d_x.get(), d_y.get()); }, options);
  DLSYS_CUDA_CHECK(cudaMemcpy(y, d_y.get(), d_y.bytes(), cudaMemcpyDeviceToHost));
  return t;
}

}  // namespace dlsys::quant::cuda
