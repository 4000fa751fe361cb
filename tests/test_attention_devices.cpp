// The attention devices the flash lesson's run is written against (kernels/attention/attention_devices.h): the CPU
// device's measurement on several heads, and the facts each device gives the run instead of the run testing the
// backend. No timings are asserted.
#include <doctest/doctest.h>

#include <vector>

#include "engine/ledger.h"
#include "engine/run_control.h"
#include "kernels/attention/attention_devices.h"

using namespace dlsys;
using namespace dlsys::attention;

namespace {

Workload two_heads(std::int64_t n, std::int64_t d) {
  Workload w;
  w.problem = Problem{n, d, true, default_scale(d)};
  w.tiling = Tiling{16, 24};
  w.order = LoopOrder::KvOuter;
  w.heads = 2;
  return w;
}

}  // namespace

TEST_CASE("the CPU attention device times both kernels on every head, counts each one's scratch, checks each output") {
  const Workload w = two_heads(70, 12);
  std::vector<float> q(std::size_t(w.elements())), k(q.size()), v(q.size());
  fill_uniform(q, 1);
  fill_uniform(k, 2);
  fill_uniform(v, 3);
  const std::vector<std::int64_t> rows = sample_rows(w.problem.n, w.problem.n);
  const std::size_t head = std::size_t(w.problem.n * w.problem.d);
  std::vector<double> ref(q.size());
  for (std::size_t at : {std::size_t(0), head})
    reference_rows(w.problem, q.data() + at, k.data() + at, v.data() + at, rows, ref.data() + at, 2);
  std::vector<const float*> checked;
  auto error_of = [&](const float* o) {
    checked.push_back(o);
    double worst = 0;
    for (std::size_t at : {std::size_t(0), head})
      worst =
          std::max(worst, max_abs_error_rows(w.problem, o + at, rows, std::span<const double>(ref).subspan(at, head)));
    return worst;
  };

  MemoryLedger ledger;
  const RunControl control;
  CpuAttention device(ledger, control, 3, 2);
  const KernelMeasurements m = device.measure(w, {q.data(), k.data(), v.data()}, error_of);
  REQUIRE(m.naive);
  REQUIRE(m.flash);
  CHECK(m.flash_kernel == "v2_flash");
  CHECK(checked.size() == 2);  // each kernel's own output
  CHECK(m.naive->max_abs_err < 1e-5);
  CHECK(meets_accuracy_rule(m.flash->max_abs_err, m.naive->max_abs_err));
  CHECK(m.naive->timing.repeats == 2);
  CHECK(m.flash->timing.repeats == 2);
  CHECK(m.naive->timing.timer == CpuAttention::kTimer);
  // Scratch is one head's worth, reused by the next head; both outputs sit in the given ledger.
  CHECK(m.naive->peak_bytes == naive_scratch_elements(w.problem.n) * 4);
  const std::int64_t workers = flash_workers(w.problem.n, w.tiling, 3);
  CHECK(m.flash->peak_bytes == flash_scratch_elements(w.problem.n, w.problem.d, w.tiling, w.order, workers) * 4);
  CHECK(ledger.peak_bytes("output") == 2 * w.elements() * 4);
  // Only the tiled kernel counts its traffic: one head's, as the closed form gives it.
  CHECK_FALSE(m.naive->counted_traffic_elements);
  REQUIRE(m.flash->counted_traffic_elements);
  CHECK(*m.flash->counted_traffic_elements ==
        flash_traffic(w.problem.n, w.problem.d, w.tiling, true, w.order, workers).total_elements());
}

TEST_CASE("the CPU attention device runs only the kernels asked for") {
  Workload w = two_heads(20, 4);
  w.naive = false;
  std::vector<float> q(std::size_t(w.elements()), 0.5f);
  MemoryLedger ledger;
  const RunControl control;
  CpuAttention device(ledger, control, 1, 1);
  int checks = 0;
  const KernelMeasurements m = device.measure(w, {q.data(), q.data(), q.data()}, [&](const float*) {
    ++checks;
    return 0.0;
  });
  CHECK_FALSE(m.naive);
  CHECK(m.flash);
  CHECK(checks == 1);
  CHECK(ledger.peak_bytes("output") == w.elements() * 4);
}

TEST_CASE("each attention device says its own facts: timer, scratch tags, checked rows, scratch, precisions") {
  CHECK(std::string(CpuAttention::kTimer) == "steady_clock");
  CHECK(std::string(CudaAttention::kTimer) == "cuda_event");
  CHECK(std::string(CpuAttention::kScratchTagPrefix) == "scratch_");
  CHECK(std::string(CudaAttention::kScratchTagPrefix) == "device_scratch_");
  // The CPU checks every row; a GPU run 16 of every head, or all of them below that.
  CHECK(CpuAttention::checked_rows_per_head(4096) == 4096);
  CHECK(CudaAttention::checked_rows_per_head(4096) == 16);
  CHECK(CudaAttention::checked_rows_per_head(10) == 10);
  // Standard attention's scratch: one head's fp32 scores on the CPU; every head's, and bf16 P, on a GPU.
  Workload w = two_heads(1024, 64);
  w.precision = cuda::Precision::Bf16;
  CHECK(CpuAttention::naive_scratch_bytes(w) == double(naive_scratch_elements(1024) * 4));
  CHECK(CudaAttention::naive_scratch_bytes(w) == 2.0 * 1024 * 1024 * 6);
  // A GPU run compares bf16 with fp32 where the tensor-core kernel takes d; the CPU compares none.
  CHECK(CpuAttention::compared_precisions(64).empty());
  CHECK(CudaAttention::compared_precisions(64) ==
        std::vector<cuda::Precision>{cuda::Precision::Fp32, cuda::Precision::Bf16});
  CHECK(CudaAttention::compared_precisions(80) == std::vector<cuda::Precision>{cuda::Precision::Fp32});
  CHECK(CpuAttention::flash_legend("v2_flash", "fa2", cuda::Precision::Fp32) == "flash (v2_flash, fa2)");
  CHECK(CudaAttention::flash_legend("v4_flash_tensor", "fa2", cuda::Precision::Bf16) ==
        "flash (v4_flash_tensor, bf16)");
  CHECK(CudaAttention::naive_legend(cuda::Precision::Fp32) == "standard (fp32, cuBLAS)");
}
