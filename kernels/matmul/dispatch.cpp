// The matmul devices (matmul_devices.h): the CPU's three variants and the GPU's ladder behind one interface.
#include <fmt/format.h>

#include <limits>

#include "kernels/hardware/hardware.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_cuda.h"
#include "kernels/matmul/matmul_devices.h"

namespace dlsys::matmul {

namespace {

// The CPU's variants, in the order the lesson sweeps and reports them.
struct CpuVariant {
  std::string_view key, kernel;
  void (*run)(const Shape&, const float*, const float*, float*, int threads);
};
constexpr CpuVariant kCpuVariants[] = {
    {"naive", "v1_naive", v1_naive},
    {"tiled", "v2_tiled", v2_tiled},
    {"blas", "v3_blas", v3_blas},
};

const CpuVariant& cpu_variant(std::string_view key) {
  for (const CpuVariant& v : kCpuVariants)
    if (v.key == key) return v;
  throw std::logic_error(fmt::format("no CPU matmul variant '{}'", key));
}

class CpuShapeOperands final : public ShapeOperands {
 public:
  CpuShapeOperands(const Shape& shape, const float* a, const float* b, float* c, int threads,
                   const std::function<void()>& check_cancelled)
      : shape_(shape), a_(a), b_(b), c_(c), threads_(threads), check_cancelled_(check_cancelled) {}
  TimingStats time(const DeviceKernel& kernel, const MeasureOptions& options, bool) override {
    const auto run = cpu_variant(kernel.key).run;
    return measure([&] { run(shape_, a_, b_, c_, threads_); }, options, check_cancelled_);
  }
  std::optional<WarpTile> tuned_warp_tile() override { return std::nullopt; }

 private:
  Shape shape_;
  const float *a_, *b_;
  float* c_;
  int threads_;
  const std::function<void()>& check_cancelled_;
};

class CpuMatmul final : public MatmulDevice {
 public:
  CpuMatmul(int threads, int tile, std::function<void()> check_cancelled)
      : threads_(threads), tile_(tile), check_cancelled_(std::move(check_cancelled)) {}
  const char* timer() const override { return "steady_clock"; }
  const DeviceInfo& info() const override { return cpu_with_peaks(); }
  double roof_bandwidth_gbps() const override { return hardware::measure_read_stream_gbps(threads_); }
  const char* roof_bandwidth_source() const override { return "read stream"; }
  int tiled_kernel_tile() const override { return tile_; }
  // A call's fixed costs (waking the worker threads, the library's dispatch) show up to about a fifth of a
  // millisecond.
  double slope_min_time_us() const override { return 200; }
  bool calls_are_launches() const override { return false; }
  std::vector<DeviceKernel> kernels(const std::function<bool(std::string_view)>& wanted) const override {
    std::vector<DeviceKernel> out;
    for (const CpuVariant& v : kCpuVariants)
      if (wanted(v.key)) out.push_back({std::string(v.key), std::string(v.kernel), Precision::Fp32, v.key == "blas"});
    return out;
  }
  double bytes(const DeviceKernel& k, const Shape& shape, const WarpTile&) const override {
    return k.key == "naive" ? bytes_naive(shape) : k.key == "tiled" ? bytes_tiled(shape, tile_) : bytes_minimum(shape);
  }
  std::string traffic(const DeviceKernel& k) const override {
    return k.key == "naive"   ? "every product reads its two operands: 4 (2 m n k + m n) B"
           : k.key == "tiled" ? fmt::format("{0} x {0} tiles: A read n / {0} times, B m / {0} times", tile_)
                              : "tiles unknown: A and B once, C once (a lower bound)";
  }
  std::unique_ptr<ShapeOperands> operands(const Shape& shape, const float* a, const float* b, float* c) const override {
    return std::make_unique<CpuShapeOperands>(shape, a, b, c, threads_, check_cancelled_);
  }

 private:
  int threads_, tile_;
  std::function<void()> check_cancelled_;
};

class CudaShapeOperands final : public ShapeOperands {
 public:
  CudaShapeOperands(const Shape& shape, const float* a, const float* b, float* c,
                    const std::function<void()>& check_cancelled)
      : on_device_(cuda::make_device_operands(shape, a, b)), c_(c), check_cancelled_(check_cancelled) {}
  TimingStats time(const DeviceKernel& kernel, const MeasureOptions& options, bool fetch_output) override {
    check_cancelled_();
    if (fetch_output) on_device_->poison_output();
    // The warp-tiled rung runs its fastest tile shape at this shape, as a library would.
    const TimingStats t = on_device_->time(kernel.rung, options, cuda::kTunedWarpTile);
    if (fetch_output) on_device_->download_output(c_);
    return t;
  }
  std::optional<WarpTile> tuned_warp_tile() override { return kWarpTiles[std::size_t(on_device_->best_warp_tile())]; }

 private:
  std::unique_ptr<cuda::DeviceOperands> on_device_;
  float* c_;
  const std::function<void()>& check_cancelled_;
};

class CudaMatmul final : public MatmulDevice {
 public:
  explicit CudaMatmul(std::function<void()> check_cancelled) : check_cancelled_(std::move(check_cancelled)) {}
  const char* timer() const override { return "cuda_event"; }
  const DeviceInfo& info() const override { return cuda_status().device; }
  double roof_bandwidth_gbps() const override { return info().peak_bandwidth_gbps; }
  const char* roof_bandwidth_source() const override { return "datasheet"; }
  int tiled_kernel_tile() const override { return cuda::kSmemTile; }
  // Below this the chip is not yet filled: a 128 x 256 tile gives 8 blocks at n = 512 for 132 SMs, so doubling n adds
  // blocks that run side by side instead of time; only calls of a few hundred microseconds keep every SM busy for
  // several waves.
  double slope_min_time_us() const override { return 300; }
  bool calls_are_launches() const override { return true; }
  std::vector<DeviceKernel> kernels(const std::function<bool(std::string_view)>& wanted) const override {
    std::vector<DeviceKernel> out;
    for (const RungInfo& r : kLadder)
      if (wanted(r.key)) out.push_back({std::string(r.key), std::string(r.kernel), r.precision, r.library, r.rung});
    return out;
  }
  double bytes(const DeviceKernel& k, const Shape& shape, const WarpTile& warp_tile) const override {
    return rung_bytes(k.rung, shape, warp_tile);
  }
  std::string traffic(const DeviceKernel& k) const override { return std::string(rung_traffic_text(k.rung)); }
  std::unique_ptr<ShapeOperands> operands(const Shape& shape, const float* a, const float* b, float* c) const override {
    return std::make_unique<CudaShapeOperands>(shape, a, b, c, check_cancelled_);
  }

 private:
  std::function<void()> check_cancelled_;
};

}  // namespace

std::unique_ptr<MatmulDevice> make_matmul_device(BackendKind backend, int threads, int tile,
                                                 std::function<void()> check_cancelled) {
  if (backend == BackendKind::Cuda) return std::make_unique<CudaMatmul>(std::move(check_cancelled));
  return std::make_unique<CpuMatmul>(threads, tile, std::move(check_cancelled));
}

}  // namespace dlsys::matmul
