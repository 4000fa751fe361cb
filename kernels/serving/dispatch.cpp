// The serving devices (serving_devices.h): the CPU model itself, and the GPU model built from its weights.
#include <fmt/format.h>

#include "kernels/hardware/hardware.h"
#include "kernels/serving/cpu_backend.h"
#include "kernels/serving/model_cuda.h"
#include "kernels/serving/serving_devices.h"

namespace dlsys::serving {

namespace {

class CpuServing final : public ServingDevice {
 public:
  explicit CpuServing(MemoryLedger& ledger) : ledger_(ledger) {}
  const char* timer() const override { return "steady_clock"; }
  const DeviceInfo& info() const override { return cpu_with_peaks(); }
  const char* roof_label() const override { return "this machine's roof (sgemm peak, read stream)"; }
  double roof_bandwidth_gbps() const override { return hardware::measure_read_stream_gbps(info().threads); }
  bool evict_weights(const Weights& weights) const override { return evict_weights_from_caches(weights); }
  std::unique_ptr<ModelBackend> model(Model& cpu_model, int slots) const override {
    return std::make_unique<CpuBackend>(cpu_model, ledger_, slots);
  }
  bool compares_with_cpu_model() const override { return false; }
  std::vector<std::string> notes(double) const override { return {}; }

 private:
  MemoryLedger& ledger_;
};

class CudaServing final : public ServingDevice {
 public:
  const char* timer() const override { return "steady_clock (the host waits for each pass's tokens)"; }
  const DeviceInfo& info() const override { return cuda_status().device; }
  const char* roof_label() const override { return "GPU 0's roof (datasheet peak and bandwidth)"; }
  double roof_bandwidth_gbps() const override { return info().peak_bandwidth_gbps; }
  bool evict_weights(const Weights&) const override { return false; }
  // The CPU model's rows are at least the context, as the GPU model makes them of whatever it is given: the same
  // scratch as asking for the rows the CPU model was built with.
  std::unique_ptr<ModelBackend> model(Model& cpu_model, int slots) const override {
    return cuda::make_model(cpu_model.shape(), pointers(cpu_model.weights()), cpu_model.layers(), slots,
                            cpu_model.max_rows());
  }
  bool compares_with_cpu_model() const override { return true; }
  std::vector<std::string> notes(double cpu_match_fraction) const override {
    return {fmt::format("on GPU 0 ({}): prefill through cuBLAS sgemm; decode steps and speculative checks through the "
                        "lab's own row kernel, one thread per output element summing in a fixed order, so a token "
                        "never depends on the batch it was computed in; KV caches in device memory; each pass ends "
                        "when its tokens are back on the host",
                        info().name),
            fmt::format("{:.0f}% of the requests have GPU tokens equal to the CPU model's exactly: fp32 sums taken in "
                        "another order (cuBLAS against OpenBLAS, fused multiply-adds, the GPU's expf) round "
                        "differently in the last bits, and a near tie between two logits can then go the other way",
                        100.0 * cpu_match_fraction)};
  }
};

}  // namespace

std::unique_ptr<ServingDevice> make_serving_device(BackendKind backend, MemoryLedger& ledger) {
  if (backend == BackendKind::Cuda) return std::make_unique<CudaServing>();
  return std::make_unique<CpuServing>(ledger);
}

}  // namespace dlsys::serving
