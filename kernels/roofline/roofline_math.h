#pragma once
// The roofline's arithmetic and the byte and FLOP counts of the kernels that measure it, shared by the kernels, the
// lesson's theory and the tests. Rates are in GFLOP/s and GB/s (1e9), intensities in FLOP per byte.
#include <cstdint>

#include "kernels/common/host_device.h"

namespace dlsys::roofline {

// The roofline rule (Williams, Waterman and Patterson, "Roofline", CACM 2009; the course's chapter on model
// efficiency): a kernel doing `intensity` FLOP per byte of main-memory traffic attains at most
// min(peak, bandwidth x intensity).
DLSYS_HOST_DEVICE constexpr double attainable_gflops(double peak_gflops, double bandwidth_gbps, double intensity) {
  const double memory_bound = bandwidth_gbps * intensity;
  return memory_bound < peak_gflops ? memory_bound : peak_gflops;
}
// The ridge point: the intensity at which the two ceilings meet, peak / bandwidth.
DLSYS_HOST_DEVICE constexpr double ridge_flop_per_byte(double peak_gflops, double bandwidth_gbps) {
  return peak_gflops / bandwidth_gbps;
}

// McCalpin's STREAM kernels (https://www.cs.virginia.edu/stream/ref.html), counted as STREAM counts them: the bytes
// each kernel's arrays hold, read or written once per element (no read-for-ownership; the lab writes with streaming
// stores, so none happens).
enum class StreamKernel { Copy, Scale, Add, Triad };
inline constexpr StreamKernel kStreamKernels[] = {StreamKernel::Copy, StreamKernel::Scale, StreamKernel::Add,
                                                  StreamKernel::Triad};
DLSYS_HOST_DEVICE constexpr const char* stream_name(StreamKernel k) {
  return k == StreamKernel::Copy    ? "copy"
         : k == StreamKernel::Scale ? "scale"
         : k == StreamKernel::Add   ? "add"
                                    : "triad";
}
// copy c = a, scale b = s c: one read, one write; add c = a + b, triad a = b + s c: two reads, one write.
DLSYS_HOST_DEVICE constexpr double stream_bytes_per_element(StreamKernel k) {
  return (k == StreamKernel::Copy || k == StreamKernel::Scale) ? 8.0 : 12.0;
}
DLSYS_HOST_DEVICE constexpr double stream_flop_per_element(StreamKernel k) {
  return k == StreamKernel::Copy ? 0.0 : k == StreamKernel::Triad ? 2.0 : 1.0;
}
// Arrays each kernel touches: copy and scale two, add and triad three.
DLSYS_HOST_DEVICE constexpr int stream_arrays(StreamKernel k) {
  return (k == StreamKernel::Copy || k == StreamKernel::Scale) ? 2 : 3;
}

// The scale kernel with s = 2 is the course's y = 2x: one multiply per 4 bytes read and 4 written, 1/8 FLOP per byte.
inline constexpr float kScaleFactor = 2.0f;

// The intensity family: y_i = f_k(x_i), f_k applying k fused multiply-adds v <- a v + c in turn (2 FLOP each) to an
// element read once (4 B) and written once (4 B): 2k FLOP per 8 B, intensity k / 4.
DLSYS_HOST_DEVICE constexpr double family_flop_per_element(std::int64_t k) { return 2.0 * double(k); }
inline constexpr double kFamilyBytesPerElement = 8.0;
DLSYS_HOST_DEVICE constexpr double family_intensity(std::int64_t k) {
  return family_flop_per_element(k) / kFamilyBytesPerElement;
}
// a and c of the family's multiply-add: |a| < 1 keeps every chain bounded (it tends to c / (1 - a) = 0.5), so no
// value overflows or turns denormal however large k is.
inline constexpr float kFamilyA = -0.5f;
inline constexpr float kFamilyC = 0.75f;

// Row softmax y = exp(x - max) / sum, counted as 5 FLOP per element (compare for the max, subtract, exp counted as
// one, add to the sum, multiply by 1 / sum), as FLOP counts of softmax usually do; a row is read from memory once and
// written once (the second pass reads it from cache).
inline constexpr double kSoftmaxFlopPerElement = 5.0;
inline constexpr double kSoftmaxBytesPerElement = 8.0;

// Decode's matrix-vector product y = W x with bf16 weights (2 B) and fp32 activations: 2 FLOP per weight, W read
// once, x read and y written once.
DLSYS_HOST_DEVICE constexpr double gemv_flops(std::int64_t rows, std::int64_t cols) {
  return 2.0 * double(rows) * double(cols);
}
DLSYS_HOST_DEVICE constexpr double gemv_bf16_bytes(std::int64_t rows, std::int64_t cols) {
  return 2.0 * double(rows) * double(cols) + 4.0 * double(cols) + 4.0 * double(rows);
}

}  // namespace dlsys::roofline
