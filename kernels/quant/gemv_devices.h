#pragma once
// The two places the quant lesson times its GEMVs, behind one interface the bench is written against
// (lessons/quant/quant_gemv_bench.cpp's run_gemv_bench<Device>): y = W x at batch 1 in fp32, in fp16 and on quantized
// codes, each call returning its timing; the bandwidth the times are compared with; and the facts that differ
// between the two (labels, timer, whether x is rounded to fp16) as constants.
//   CpuGemv   the kernels of gemv.h on `threads` threads, timed with a steady_clock stopwatch, the weights flushed
//             from every cache before each timed call; the bandwidth is a read stream measured here the same way.
//   CudaGemv  forwards to gemv_cuda.h (cuBLAS for fp32 and fp16, the lab's kernel for codes), which times with CUDA
//             events after reading a buffer twice the L2 cache's size; the bandwidth is a STREAM triad measured here.
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/measure.h"
#include "engine/run_control.h"
#include "kernels/common/cache_flush.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/hardware/hardware.h"
#include "kernels/precision/float_format.h"
#include "kernels/quant/gemv.h"
#include "kernels/quant/gemv_cuda.h"
#include "kernels/roofline/roofline_cuda.h"

namespace dlsys::quant {

// Every GEMV format alike: one warm-up call, then `repeats` timed ones, stopping once they took 2 s.
inline MeasureOptions gemv_measure_options(int repeats) {
  return {.warmup = 1, .repeats = repeats, .max_total_us = 2e6};
}

// The GPU's bandwidth ceiling the GEMVs are compared with: STREAM triad (the roofline lesson's kernel) on three arrays
// of 2^26 floats, far larger than the L2 cache; GB/s of the median of 10 calls, the output checked.
inline constexpr double kStreamTriadBytes = 3.0 * 4.0 * double(1 << 26);

class CpuGemv {
 public:
  static constexpr const char* kTimer = "steady_clock";
  static constexpr const char* kFp32Label = "fp32";
  static constexpr const char* kFp16Label = "fp16";
  // The fp16 kernel widens each weight to fp32 and multiplies it by x as it is.
  static constexpr bool kRoundsXToFp16 = false;
  static constexpr const char* kBandwidthName = "read stream measured in this run";

  CpuGemv(int threads, int repeats, const RunControl& control)
      : threads_(threads), repeats_(repeats), control_(control) {}

  TimingStats fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y) const {
    return time([&] { gemv_fp32(w, rows, cols, x, y, threads_); }, {{w, std::size_t(rows * cols) * sizeof(float)}});
  }
  TimingStats fp16(const std::uint16_t* w_fp16, std::int64_t rows, std::int64_t cols, const float* x, float* y) const {
    return time([&] { gemv_fp16(w_fp16, rows, cols, x, y, threads_); },
                {{w_fp16, std::size_t(rows * cols) * sizeof(std::uint16_t)}});
  }
  TimingStats quantized(const QuantizedMatrix& q, const float* x, float* y) const {
    Buffers buffers = {{q.codes.data(), q.codes.size()}, {q.scales.data(), q.scales.size() * sizeof(float)}};
    if (q.spec.scheme != Scheme::Nf4) buffers.push_back({q.zeros.data(), q.zeros.size() * sizeof(float)});
    return time([&] { gemv_quantized(q, x, y, threads_); }, buffers);
  }
  // x as quantized() multiplies it.
  std::vector<float> quantized_x(const QuantizedMatrix& q, const float* x) const { return gemv_x_as_used(q, x); }

  // What a GEMV that only streamed its weights would read, on the GEMVs' threads, flushed as they are.
  double bandwidth_gbps() const { return hardware::measure_read_stream_gbps(threads_); }
  // How the GEMVs ran, for the run's backend notes.
  std::vector<std::string> notes() const {
    std::vector<std::string> out;
    const int hardware_threads = describe_cpu().threads;
    if (threads_ > hardware_threads)
      out.push_back(fmt::format("{} threads time-share {} hardware threads", threads_, hardware_threads));
    out.push_back(fmt::format(
        "GEMV: {} kernels; integer codes multiply x quantized to int8 (one scale for the vector, as llama.cpp's CPU "
        "kernels do) and each is checked against a reference on that x, NF4 codes multiply x in fp32; before each "
        "timed call the weights are flushed from the caches{}",
        gemv_instruction_set(), can_evict_from_caches() ? "" : " (not on this CPU: they may still sit in cache)"));
    return out;
  }

 private:
  using Buffers = std::vector<std::pair<const void*, std::size_t>>;
  // Warm-up, then the timed calls, each after `evicted` was flushed from the caches.
  TimingStats time(const std::function<void()>& call, const Buffers& evicted) const {
    return measure(call, gemv_measure_options(repeats_), [&] {
      control_.check_cancelled();
      for (const auto& [p, bytes] : evicted) evict_from_caches(p, bytes);
    });
  }

  int threads_, repeats_;
  const RunControl& control_;
};

class CudaGemv {
 public:
  static constexpr const char* kTimer = "cuda_event";
  static constexpr const char* kFp32Label = "fp32 (cuBLAS)";
  static constexpr const char* kFp16Label = "fp16 (cuBLAS)";
  // cuBLAS multiplies 16-bit by 16-bit: x is rounded to fp16 too (a reference has to use it so rounded).
  static constexpr bool kRoundsXToFp16 = true;
  static constexpr const char* kBandwidthName = "STREAM triad";

  explicit CudaGemv(int repeats) : repeats_(repeats) {}

  TimingStats fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y) const {
    return cuda::gemv_fp32(w, rows, cols, x, y, gemv_measure_options(repeats_));
  }
  TimingStats fp16(const std::uint16_t* w_fp16, std::int64_t rows, std::int64_t cols, const float* x, float* y) const {
    std::vector<std::uint16_t> x_fp16(static_cast<std::size_t>(cols));
    for (std::size_t j = 0; j < x_fp16.size(); ++j) x_fp16[j] = precision::fp16_bits_from_float(x[j]);
    return cuda::gemv_fp16(w_fp16, rows, cols, x_fp16.data(), y, gemv_measure_options(repeats_));
  }
  TimingStats quantized(const QuantizedMatrix& q, const float* x, float* y) const {
    return cuda::gemv_quantized(q, x, y, gemv_measure_options(repeats_));
  }
  // The GPU's code kernel multiplies x as it is.
  std::vector<float> quantized_x(const QuantizedMatrix& q, const float* x) const {
    return std::vector<float>(x, x + q.cols);
  }

  double bandwidth_gbps() const {
    const std::int64_t n = std::int64_t(1) << 26;
    std::vector<float> b(static_cast<std::size_t>(n)), c(static_cast<std::size_t>(n));
    fill_seeded_uniform(b, 21);
    fill_seeded_uniform(c, 22);
    dlsys::cuda::DeviceFloats da(n), db(n), dc(n);
    db.upload(b.data());
    dc.upload(c.data());
    constexpr float kScale = 2.0f;  // 2c is exact, so b + 2c rounds once on either side
    const TimingStats t = dlsys::cuda::measure_with_events(
        [&] { roofline::cuda::stream_triad(da.get(), db.get(), dc.get(), kScale, n); }, {.warmup = 1, .repeats = 10});
    std::vector<float> a(static_cast<std::size_t>(n));
    dlsys::cuda::copy_to_host(a.data(), da.get(), n);
    for (std::size_t i = 0; i < a.size(); i += 4093)
      if (a[i] != b[i] + kScale * c[i])
        throw RunFailure(
            fmt::format("STREAM triad on the GPU wrote {} at element {}; expected {}", a[i], i, b[i] + kScale * c[i]));
    return kStreamTriadBytes / (t.median_us * 1e3);
  }
  std::vector<std::string> notes() const {
    return {fmt::format(
        "GEMV on the GPU: cuBLAS for fp32 and fp16, the lab's kernel for codes ({} for 4-bit integer codes, {} for "
        "the others; each lane's x kept in registers while rows stream past, 16-byte loads, where a row has at most "
        "512 loads); before each timed call a buffer twice the L2 cache's size is read, so the weights come from "
        "memory and the cache holds clean lines, as between a decoder's layers; the model and its errors are "
        "computed on the CPU",
        cuda::gemv_variant_name(cuda::kLessonGemvShapeInt4), cuda::gemv_variant_name(cuda::kLessonGemvShape))};
  }

 private:
  int repeats_;
};

}  // namespace dlsys::quant
