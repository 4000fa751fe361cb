#pragma once
// The two places the flash lesson measures attention, behind one interface its run is written against (a template
// over the device): standard attention and the flash kernel on the same heads, timed the device's way, their scratch,
// their outputs checked on the host, and the facts of each device a run reports (its timer, its scratch tags, the rows
// it checks, its legends and notes).
//   CpuAttention   v1_naive and v2_flash on the host, heads one after another, timed in alternation with
//                  steady_clock; each kernel's scratch is counted in a ledger of its own (its peak is the scratch).
//   CudaAttention  the CUDA variants (attention_cuda.h): cuBLAS standard attention and the fastest flash kernel for
//                  the precision and d, every head in one launch, timed with CUDA events; scratch is device global
//                  memory beyond q, k, v and o. A thin forwarder to cuda::run.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "engine/run_control.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_cuda.h"
#include "kernels/attention/tile_math.h"

namespace dlsys::attention {

// One measurement's work, the same on every device: `heads` problems of one shape, the tiles and loop order of the
// flash kernel, the precision, and which kernels run.
struct Workload {
  Problem problem;  // one head
  Tiling tiling;
  LoopOrder order = LoopOrder::QOuter;
  std::int64_t heads = 1;
  cuda::Precision precision = cuda::Precision::Fp32;
  bool naive = true, flash = true;

  std::int64_t elements() const { return heads * problem.n * problem.d; }
};

// The inputs every kernel of a measurement reads, on the host: q, k, v (heads, n, d) row-major.
struct HostQkv {
  const float *q = nullptr, *k = nullptr, *v = nullptr;
};

// Largest error of an output o: (heads, n, d) on the host, against the double reference.
using OutputError = std::function<double(const float* o)>;

struct KernelMeasurement {
  TimingStats timing;
  double max_abs_err = 0;
  std::int64_t peak_bytes = 0;  // scratch: the CPU kernel's own ledger; on a GPU global memory beyond q, k, v, o
  std::optional<double> counted_traffic_elements;  // flash on the CPU: its own count of block loads and stores
};

struct KernelMeasurements {
  std::optional<KernelMeasurement> naive, flash;
  std::string flash_kernel;  // which variant ran as flash
};

class CpuAttention {
 public:
  static constexpr const char* kTimer = "steady_clock";
  static constexpr const char* kScratchTagPrefix = "scratch_";  // the run's memory report lists scratch_naive, ...

  // `ledger` holds the outputs; the kernels run on `threads` threads, `repeats` timed calls each.
  CpuAttention(MemoryLedger& ledger, const RunControl& control, int threads, int repeats)
      : ledger_(ledger), control_(control), threads_(threads), repeats_(repeats) {}

  // The CPU checks every row against the double reference.
  static std::int64_t checked_rows_per_head(std::int64_t n) { return n; }
  // Standard attention's scratch: one head's n x n fp32 scores at a time (the heads run one after another).
  static double naive_scratch_bytes(const Workload& w) {
    return double(naive_scratch_elements(w.problem.n) * std::int64_t(sizeof(float)));
  }
  // A run compares no other precision: the CPU kernels are fp32.
  static std::vector<cuda::Precision> compared_precisions(std::int64_t) { return {}; }
  static std::string naive_legend(cuda::Precision) { return "naive (v1_naive)"; }
  static std::string flash_legend(const std::string& kernel, const std::string& order, cuda::Precision) {
    return fmt::format("flash ({}, {})", kernel, order);
  }
  std::vector<std::string> notes(std::int64_t heads) const;

  // Times the selected kernels in alternation (naive, flash, naive, ...) after one untimed call each, then checks
  // each output with `error_of`.
  KernelMeasurements measure(const Workload& w, const HostQkv& in, const OutputError& error_of);

 private:
  MemoryLedger& ledger_;
  const RunControl& control_;
  int threads_, repeats_;
};

class CudaAttention {
 public:
  static constexpr const char* kTimer = "cuda_event";
  static constexpr const char* kScratchTagPrefix = "device_scratch_";
  // Rows of every head checked against the double reference (all of them when n is smaller): the full reference at
  // n = 4096 and 16 heads would be 69 GFLOP in double on the host.
  static constexpr std::int64_t kSampledRowsPerHead = 16;

  CudaAttention(MemoryLedger& ledger, const RunControl& control, int repeats)
      : ledger_(ledger), control_(control), repeats_(repeats) {}

  static std::int64_t checked_rows_per_head(std::int64_t n) { return std::min(n, kSampledRowsPerHead); }
  // Every head's S at once, and P in bf16 for a bf16 run.
  static double naive_scratch_bytes(const Workload& w) {
    return double(cuda::naive_device_scratch_bytes(w.heads, w.problem.n, w.precision));
  }
  // Both precisions at the chosen n, bf16 where its tensor-core kernel takes d.
  static std::vector<cuda::Precision> compared_precisions(std::int64_t d) {
    if (!cuda::bf16_supports_d(d)) return {cuda::Precision::Fp32};
    return {cuda::Precision::Fp32, cuda::Precision::Bf16};
  }
  static std::string naive_legend(cuda::Precision p) {
    return fmt::format("standard ({}, cuBLAS)", cuda::precision_name(p));
  }
  static std::string flash_legend(const std::string& kernel, const std::string&, cuda::Precision p) {
    return fmt::format("flash ({}, {})", kernel, cuda::precision_name(p));
  }
  std::vector<std::string> notes(std::int64_t) const {
    return {
        "naive/flash peak bytes are device global memory beyond q, k, v, o; the flash kernels' tiles live in "
        "shared memory and registers",
        fmt::format("errors sampled: {} rows of every head, spread over the sequence, against the double reference",
                    kSampledRowsPerHead)};
  }

  // Runs standard attention, then the fastest flash kernel, each through cuda::run (one untimed call, then the
  // repeats), and checks the O each copied back with `error_of`.
  KernelMeasurements measure(const Workload& w, const HostQkv& in, const OutputError& error_of) {
    const cuda::Variant flash = cuda::fastest_flash(w.precision, w.problem.d);
    HostBuffer<float> o(ledger_, "output", std::size_t(w.elements()));
    KernelMeasurements out;
    if (w.naive) out.naive = measure_one(w, cuda::Variant::Naive, in, o.data(), error_of);
    if (w.flash) out.flash = measure_one(w, flash, in, o.data(), error_of);
    out.flash_kernel = cuda::variant_name(flash);
    return out;
  }

 private:
  KernelMeasurement measure_one(const Workload& w, cuda::Variant variant, const HostQkv& in, float* o,
                                const OutputError& error_of) {
    control_.check_cancelled();
    const MeasureOptions options{.warmup = 1, .repeats = repeats_, .max_total_us = 4e6};
    const cuda::Request request{variant, w.precision, w.heads, w.tiling};
    const cuda::RunStats stats = cuda::run(request, w.problem, in.q, in.k, in.v, o, options);
    KernelMeasurement m;
    m.timing = stats.timing;
    m.peak_bytes = stats.device_scratch_bytes;  // flash tiles live on chip
    m.max_abs_err = error_of(o);
    return m;
  }

  MemoryLedger& ledger_;
  const RunControl& control_;
  int repeats_;
};

}  // namespace dlsys::attention
