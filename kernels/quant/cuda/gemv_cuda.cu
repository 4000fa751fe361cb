// Weight-only GEMV on a GPU (see gemv_cuda.h): cuBLAS for fp32 and fp16, the lab's warp-per-row kernel for codes.
#include <cuda_fp16.h>

#include <memory>
#include <vector>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/quant/gemv_cuda.h"

namespace dlsys::quant::cuda {

namespace {

using dlsys::cuda::DeviceArray;

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;

struct DeviceCodes {
  const std::uint8_t* codes;
  const float* scales;
  const float* zeros;
  std::int64_t rows, cols, segment, segments_per_row, row_bytes;
  bool packed, nf4;
};

__constant__ float nf4_levels[16];

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
  for (int offset = kWarp / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[row] = sum;
}

// Codes in a 16-byte load: 16 int8 codes, or 32 packed 4-bit ones.
__host__ __device__ constexpr int codes_per_load(bool packed) { return packed ? 32 : 16; }

// The vector path needs rows that split into whole 16-byte loads, each inside one scale segment.
bool vector_path_fits(const DeviceCodes& q) {
  const int per_load = codes_per_load(q.packed);
  return q.cols % per_load == 0 && q.segment % per_load == 0;
}

__device__ float dequantize(const DeviceCodes& q, std::uint32_t u, float scale, float zero) {
  return q.nf4 ? scale * nf4_levels[u] : scale * (float(u) - zero);
}

// The same product as quantized_kernel, with each lane reading 16 bytes of codes at once (a warp: 512 contiguous
// bytes per load), so the kernel is limited by memory bandwidth, as a weight-only GEMV should be, rather than by
// byte-sized loads and per-weight index arithmetic. The scale and zero point are read once per load.
__global__ void quantized_vector_kernel(DeviceCodes q, const float* x, float* y) {
  const std::int64_t row = blockIdx.x * std::int64_t(kWarpsPerBlock) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= q.rows) return;
  const int per_load = codes_per_load(q.packed);
  const int loads = int(q.cols / per_load), segment = int(q.segment);
  const uint4* codes = reinterpret_cast<const uint4*>(q.codes + row * q.row_bytes);
  const float* scales = q.scales + row * q.segments_per_row;
  const float* zeros = q.zeros + row * q.segments_per_row;
  float sum = 0;
  for (int c = lane; c < loads; c += kWarp) {
    const uint4 word = codes[c];
    const std::uint32_t parts[4] = {word.x, word.y, word.z, word.w};
    const int first = c * per_load, s = first / segment;
    const float scale = scales[s], zero = q.nf4 ? 0.0f : zeros[s];
    const float4* xs = reinterpret_cast<const float4*>(x + first);
#pragma unroll
    for (int part = 0; part < 4; ++part) {
      const std::uint32_t bits = parts[part];
      if (q.packed) {  // 8 codes, low nibble first (column 2i in the low half of byte i)
        const float4 a = xs[2 * part], b = xs[2 * part + 1];
        sum += dequantize(q, bits & 0xFu, scale, zero) * a.x + dequantize(q, (bits >> 4) & 0xFu, scale, zero) * a.y +
               dequantize(q, (bits >> 8) & 0xFu, scale, zero) * a.z +
               dequantize(q, (bits >> 12) & 0xFu, scale, zero) * a.w +
               dequantize(q, (bits >> 16) & 0xFu, scale, zero) * b.x +
               dequantize(q, (bits >> 20) & 0xFu, scale, zero) * b.y +
               dequantize(q, (bits >> 24) & 0xFu, scale, zero) * b.z + dequantize(q, bits >> 28, scale, zero) * b.w;
      } else {  // 4 codes, byte i is column i (little-endian words)
        const float4 a = xs[part];
        sum += dequantize(q, bits & 0xFFu, scale, zero) * a.x + dequantize(q, (bits >> 8) & 0xFFu, scale, zero) * a.y +
               dequantize(q, (bits >> 16) & 0xFFu, scale, zero) * a.z + dequantize(q, bits >> 24, scale, zero) * a.w;
      }
    }
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[row] = sum;
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
  const auto blocks = static_cast<unsigned>((q.rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const bool vector = vector_path_fits(codes);
  const TimingStats t = time_flushed(
      [&] {
        if (vector)
          quantized_vector_kernel<<<blocks, kWarpsPerBlock * kWarp>>>(codes, d_x.get(), d_y.get());
        else
          quantized_kernel<<<blocks, kWarpsPerBlock * kWarp>>>(codes, d_x.get(), d_y.get());
        DLSYS_CUDA_CHECK(cudaGetLastError());
      },
      options);
  DLSYS_CUDA_CHECK(cudaMemcpy(y, d_y.get(), d_y.bytes(), cudaMemcpyDeviceToHost));
  return t;
}

}  // namespace dlsys::quant::cuda
