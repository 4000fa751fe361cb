// CpuAttention (attention_devices.h): both CPU kernels on the same heads, timed in alternation so that a burst of load
// from other processes falls on both alike instead of on whichever happened to run during it.
#include <fmt/format.h>

#include "engine/backend.h"
#include "kernels/attention/attention_devices.h"

namespace dlsys::attention {

namespace {

// One CPU kernel ready to run: its own scratch (recorded in a ledger of its own, which gives its peak), its own
// output, and its timing samples.
struct CpuKernel {
  MemoryLedger ledger;
  HostBuffer<float> scratch, output;
  std::function<void()> run;
  std::vector<double> samples_us;
};

// Runs `body` for every head, given the offset of the head's (n, d) block; heads share the kernel's scratch.
void each_head(const Workload& w, const std::function<void(std::size_t)>& body) {
  const std::size_t head_elements = std::size_t(w.problem.n * w.problem.d);
  for (std::int64_t h = 0; h < w.heads; ++h) body(std::size_t(h) * head_elements);
}

void prepare_naive(CpuKernel& naive, MemoryLedger& ledger, const Workload& w, const HostQkv& in, int threads) {
  naive.scratch = HostBuffer<float>(naive.ledger, "scratch", std::size_t(naive_scratch_elements(w.problem.n)));
  naive.output = HostBuffer<float>(ledger, "output", std::size_t(w.elements()));
  naive.run = [&naive, &w, in, threads] {
    each_head(w, [&](std::size_t at) {
      v1_naive(w.problem, in.q + at, in.k + at, in.v + at, naive.output.data() + at, naive.scratch.span(), threads);
    });
  };
}

void prepare_flash(CpuKernel& flash, MemoryLedger& ledger, const Workload& w, const HostQkv& in, int threads,
                   Traffic& counted) {
  const std::int64_t workers = flash_workers(w.problem.n, w.tiling, threads);
  flash.scratch =
      HostBuffer<float>(flash.ledger, "scratch",
                        std::size_t(flash_scratch_elements(w.problem.n, w.problem.d, w.tiling, w.order, workers)));
  flash.output = HostBuffer<float>(ledger, "output", std::size_t(w.elements()));
  flash.run = [&flash, &w, in, threads, &counted] {
    each_head(w, [&](std::size_t at) {
      v2_flash<float>(w.problem, w.tiling, w.order, in.q + at, in.k + at, in.v + at, flash.output.data() + at,
                      flash.scratch.span(), threads, nullptr, &counted);
    });
  };
}

// One untimed call of each kernel (page faults, caches), then the repeats in alternation.
void time_in_alternation(const std::vector<CpuKernel*>& kernels, int repeats, const RunControl& control) {
  for (CpuKernel* kernel : kernels) {
    control.check_cancelled();
    kernel->run();
  }
  const Stopwatch total;
  for (int r = 0; r < repeats; ++r) {
    for (CpuKernel* kernel : kernels) {
      control.check_cancelled();
      const Stopwatch watch;
      kernel->run();
      kernel->samples_us.push_back(watch.elapsed_us());
    }
    if (total.elapsed_us() > 8e6) break;  // large n: fewer repeats rather than minutes
  }
}

KernelMeasurement result_of(CpuKernel& kernel, const OutputError& error_of) {
  KernelMeasurement m;
  m.timing = summarize_us(std::move(kernel.samples_us), CpuAttention::kTimer);
  m.peak_bytes = kernel.ledger.peak_bytes("scratch");
  m.max_abs_err = error_of(kernel.output.data());
  return m;
}

}  // namespace

std::vector<std::string> CpuAttention::notes(std::int64_t heads) const {
  std::vector<std::string> notes;
  const int hardware_threads = describe_cpu().threads;
  if (threads_ > hardware_threads)
    notes.push_back(fmt::format("{} threads time-share {} hardware threads", threads_, hardware_threads));
  notes.push_back("the CPU's caches play the part of SRAM; the tile sizes still come from sram");
  if (heads > 1) notes.push_back("the CPU runs the heads one after another");
  return notes;
}

KernelMeasurements CpuAttention::measure(const Workload& w, const HostQkv& in, const OutputError& error_of) {
  CpuKernel naive, flash;
  Traffic counted;
  std::vector<CpuKernel*> kernels;
  if (w.naive) {
    prepare_naive(naive, ledger_, w, in, threads_);
    kernels.push_back(&naive);
  }
  if (w.flash) {
    prepare_flash(flash, ledger_, w, in, threads_, counted);
    kernels.push_back(&flash);
  }
  time_in_alternation(kernels, repeats_, control_);
  KernelMeasurements out;
  out.flash_kernel = "v2_flash";
  if (w.naive) out.naive = result_of(naive, error_of);
  if (w.flash) {
    out.flash = result_of(flash, error_of);
    out.flash->counted_traffic_elements = counted.total_elements();  // of the last head
  }
  return out;
}

}  // namespace dlsys::attention
