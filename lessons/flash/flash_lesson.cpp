#include "lessons/flash/flash_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <thread>

#include "engine/host_buffer.h"
#include "engine/host_memory.h"
#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_cuda.h"
#include "kernels/attention/attention_devices.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/repeats_param.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_plan.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/flash/flash_example.h"
#include "lessons/flash/flash_steps.h"
#include "lessons/run_file.h"

namespace dlsys {

using flash::FlashParams;

namespace {

using attention::CpuAttention;
using attention::CudaAttention;
using attention::KernelMeasurement;
using attention::KernelMeasurements;
using attention::LoopOrder;
using attention::Problem;
using attention::Tiling;
using attention::cuda::Precision;

constexpr std::int64_t kElementBytes = 4;  // fp32: the CPU kernels, the traffic counts and the tile sizes
constexpr std::int64_t kMaxN = 1 << 20;
constexpr std::int64_t kMaxD = 512;
// The rows a GPU run checks of every head: what its reference costs the host in memory and time.
constexpr std::int64_t kSampledRowsPerHead = CudaAttention::kSampledRowsPerHead;

const std::string& order_name(LoopOrder order) { return flash::kOrderChoices[static_cast<std::size_t>(order)]; }

// Host bytes a measurement at size n allocates: q, k, v and two outputs in fp32 for every head, the double reference
// (every row on the CPU, sampled rows on a GPU), and on the CPU standard attention's S for one head at a time.
double host_bytes_needed(std::int64_t n, std::int64_t d, std::int64_t heads, bool naive, bool on_gpu) {
  const double nd = double(n) * double(d) * double(heads);
  const double reference = on_gpu ? double(std::min(n, kSampledRowsPerHead) * d * heads) * 8 : nd * 8;
  const double scores = naive && !on_gpu ? double(attention::naive_scratch_elements(n)) * kElementBytes : 0.0;
  return nd * 5 * 4 + reference + scores;
}

// A measurement's work, and the threads the host's reference runs on.
struct Setup : attention::Workload {
  int threads = 1;
  int repeats = 1;
};

// Mirrors a measurement's scratch peak into the run's ledger, so the run's memory report lists it under `tag`.
void mirror_peak(MemoryLedger& run_ledger, const std::string& tag, std::int64_t bytes) {
  run_ledger.allocate(tag, bytes);
  run_ledger.release(tag, bytes);
}

// The same inputs for every kernel at one size: q, k, v (heads, n, d), rounded to bf16 for a bf16 run, and the double
// reference at the checked rows of every head, computed from exactly those values.
struct Inputs {
  HostBuffer<float> q, k, v;
  std::vector<std::int64_t> rows;  // checked rows of each head
  HostBuffer<double> ref;          // (heads, rows, d)
};

// `rows_per_head`: how many rows of each head the device checks.
Inputs make_inputs(const Setup& s, std::int64_t rows_per_head, RunContext& ctx) {
  const Problem& p = s.problem;
  const std::size_t count = std::size_t(s.heads * p.n * p.d);
  Inputs in{HostBuffer<float>(ctx.ledger, "inputs", count),
            HostBuffer<float>(ctx.ledger, "inputs", count),
            HostBuffer<float>(ctx.ledger, "inputs", count),
            attention::sample_rows(p.n, rows_per_head),
            {}};
  attention::fill_uniform(in.q.span(), 1);
  attention::fill_uniform(in.k.span(), 2);
  attention::fill_uniform(in.v.span(), 3);
  if (s.precision == Precision::Bf16)
    for (HostBuffer<float>* x : {&in.q, &in.k, &in.v}) attention::round_to_bf16(x->span());
  const std::size_t per_head = in.rows.size() * std::size_t(p.d), head_elements = std::size_t(p.n * p.d);
  in.ref = HostBuffer<double>(ctx.ledger, "reference", per_head * std::size_t(s.heads));
  for (std::int64_t h = 0; h < s.heads; ++h) {
    ctx.control.check_cancelled();
    const std::size_t at = std::size_t(h) * head_elements;
    attention::reference_rows(p, in.q.data() + at, in.k.data() + at, in.v.data() + at, in.rows,
                              in.ref.data() + std::size_t(h) * per_head, s.threads);
  }
  return in;
}

// Largest error over every head's checked rows.
double max_error(const Setup& s, const Inputs& in, const float* o) {
  const std::size_t per_head = in.rows.size() * std::size_t(s.problem.d);
  double worst = 0;
  for (std::int64_t h = 0; h < s.heads; ++h)
    worst = std::max(worst, attention::max_abs_error_rows(
                                s.problem, o + h * s.problem.n * s.problem.d, in.rows,
                                std::span<const double>(in.ref.data() + std::size_t(h) * per_head, per_head)));
  return worst;
}

// Runs the selected kernels at one size on the same inputs and checks each against the double reference.
template <typename Device>
KernelMeasurements measure_size(Device& device, const Setup& s, RunContext& ctx) {
  const Inputs in = make_inputs(s, Device::checked_rows_per_head(s.problem.n), ctx);
  const KernelMeasurements out =
      device.measure(s, {in.q.data(), in.k.data(), in.v.data()}, [&](const float* o) { return max_error(s, in, o); });
  const std::string prefix = Device::kScratchTagPrefix;
  if (out.naive) mirror_peak(ctx.ledger, prefix + "naive", out.naive->peak_bytes);
  if (out.flash) mirror_peak(ctx.ledger, prefix + "flash", out.flash->peak_bytes);
  return out;
}

Series make_series(const std::string& id, const std::string& name, const std::string& role, const std::string& y_label,
                   const std::string& y_unit) {
  return Series{id, name, role, "n (sequence length)", "", y_label, y_unit, {}};
}

void add_point(Series& series, double x, double y) { series.points.push_back({x, y, y, y}); }

// The sweep's series: time, peak scratch and error of both kernels against n, with the closed forms for scratch and
// main-memory traffic at the same n.
class SweepSeries {
 public:
  explicit SweepSeries(LoopOrder order)
      : hbm_flash_(make_series("flash_traffic_theory", fmt::format("flash main-memory traffic ({})", order_name(order)),
                               "theory", "bytes moved", "bytes")) {}

  template <typename Device>
  void add(const Setup& s, const KernelMeasurements& m) {
    const std::int64_t n = s.problem.n, d = s.problem.d;
    const double x = double(n);
    const std::int64_t workers = attention::flash_workers(n, s.tiling, s.threads);
    // The legend names the kernels that ran: on a GPU the fastest flash kernel for the precision, and the precision.
    time_naive_.name = Device::naive_legend(s.precision) + " time";
    time_flash_.name = Device::flash_legend(m.flash_kernel, order_name(s.order), s.precision) + " time";
    if (m.naive) add_kernel(x, *m.naive, time_naive_, mem_naive_, err_naive_);
    if (m.flash) add_kernel(x, *m.flash, time_flash_, mem_flash_, err_flash_);
    add_point(mem_naive_theory_, x, Device::naive_scratch_bytes(s));
    add_point(mem_flash_theory_, x,
              double(attention::flash_scratch_elements(n, d, s.tiling, s.order, workers) * kElementBytes));
    add_point(hbm_naive_, x, attention::naive_traffic(n, d).total_elements() * kElementBytes);
    add_point(
        hbm_flash_, x,
        attention::flash_traffic(n, d, s.tiling, s.problem.causal, s.order, workers).total_elements() * kElementBytes);
  }

  // The series that have points, in the order the JSON has always listed them.
  std::vector<Series> take() {
    std::vector<Series> out;
    for (Series* series : {&time_naive_, &time_flash_, &mem_naive_, &mem_flash_, &mem_naive_theory_, &mem_flash_theory_,
                           &err_naive_, &err_flash_, &hbm_naive_, &hbm_flash_})
      if (!series->points.empty()) out.push_back(std::move(*series));
    return out;
  }

 private:
  static void add_kernel(double x, const KernelMeasurement& m, Series& time, Series& memory, Series& error) {
    time.points.push_back({x, m.timing.median_us / 1e3, m.timing.min_us / 1e3, m.timing.max_us / 1e3});
    add_point(memory, x, double(m.peak_bytes));
    add_point(error, x, m.max_abs_err);
  }

  Series time_naive_ = make_series("naive_time", "", "measured", "time", "ms");  // legends: add's device names them
  Series time_flash_ = make_series("flash_time", "", "measured", "time", "ms");
  Series mem_naive_ = make_series("naive_scratch", "naive peak scratch", "measured", "peak scratch", "bytes");
  Series mem_flash_ = make_series("flash_scratch", "flash peak scratch", "measured", "peak scratch", "bytes");
  Series mem_naive_theory_ =
      make_series("naive_scratch_theory", "naive scratch (n x n scores)", "theory", "peak scratch", "bytes");
  Series mem_flash_theory_ =
      make_series("flash_scratch_theory", "flash scratch (tiles per thread)", "theory", "peak scratch", "bytes");
  Series err_naive_ = make_series("naive_error", "naive max abs error", "measured", "max |o - o_ref|", "");
  Series err_flash_ = make_series("flash_error", "flash max abs error", "measured", "max |o - o_ref|", "");
  Series hbm_naive_ =
      make_series("naive_traffic_theory", "naive main-memory traffic", "theory", "bytes moved", "bytes");
  Series hbm_flash_;
};

// Both kernels at the chosen n, and how they compare where both ran. `flops` counts all heads.
flash::PrecisionFigures figures_of(const KernelMeasurements& main, Precision precision, double flops) {
  auto measure = [flops](const KernelMeasurement& m) {
    return flash::KernelMeasure{.ms = m.timing.median_us / 1e3,
                                .ms_min = m.timing.min_us / 1e3,
                                .ms_max = m.timing.max_us / 1e3,
                                .tflops = flops / (m.timing.median_us * 1e-6) / 1e12,
                                .max_abs_err = m.max_abs_err,
                                .peak_bytes = m.peak_bytes};
  };
  flash::PrecisionFigures f;
  f.precision = attention::cuda::precision_name(precision);
  f.flash_kernel = main.flash_kernel;
  if (main.naive) f.naive = measure(*main.naive);
  if (main.flash) f.flash = measure(*main.flash);
  if (main.naive && main.flash) {
    flash::KernelComparison c;
    c.time_ratio_flash_over_naive = main.flash->timing.median_us / main.naive->timing.median_us;
    c.time_ratio_flash_over_naive_min = main.flash->timing.min_us / main.naive->timing.min_us;
    if (main.flash->peak_bytes > 0)
      c.scratch_ratio_naive_over_flash = double(main.naive->peak_bytes) / double(main.flash->peak_bytes);
    c.accuracy_rule_met = attention::meets_accuracy_rule(main.flash->max_abs_err, main.naive->max_abs_err) ? 1 : 0;
    f.comparison = c;
  }
  return f;
}

// `rows_checked`: how many rows of each head the device checked.
flash::FlashMeasured measured_at_chosen_size(const KernelMeasurements& main, const Setup& s, double flops,
                                             std::int64_t rows_checked) {
  const flash::PrecisionFigures f = figures_of(main, s.precision, flops);
  flash::FlashMeasured measured;
  measured.naive = f.naive;
  measured.flash = f.flash;
  measured.comparison = f.comparison;
  measured.flash_kernel = main.flash_kernel;
  measured.rows_checked_per_head = rows_checked;
  if (main.flash && main.flash->counted_traffic_elements)
    measured.hbm_bytes_flash_counted = *main.flash->counted_traffic_elements * kElementBytes;
  return measured;
}

}  // namespace

FlashTileChoice flash_tile_choice(const FlashParams& p) {
  FlashTileChoice choice;
  choice.sram_elements = attention::sram_elements(p.sram_bytes, kElementBytes);
  const Tiling algorithm1 = attention::algorithm1_tiling(choice.sram_elements, p.d);
  choice.tiling.br = p.br > 0 ? p.br : algorithm1.br;
  choice.tiling.bc = p.bc > 0 ? p.bc : algorithm1.bc;
  choice.order = p.order;
  return choice;
}

namespace {

// The attention problem: its shape, mask, heads and precision.
std::vector<ParamSpec> problem_specs() {
  return {
      {.key = "n",
       .label = "n (sequence length)",
       .type = ParamType::Integer,
       .default_text = "4096",
       .min = 1,
       .max = double(kMaxN),
       .help = "Q, K, V are n x d"},
      {.key = "d",
       .label = "d (head dimension)",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = double(kMaxD),
       .help = "also the value width"},
      {.key = "causal",
       .label = "causal mask",
       .type = ParamType::Choice,
       .default_text = "0",
       .choices = {"0", "1"},
       .help = "1: query i sees keys 0..i only"},
      {.key = "heads",
       .label = "heads (batch x heads)",
       .type = ParamType::Integer,
       .default_text = "1",
       .min = 1,
       .max = 256,
       .help = "independent attention problems in one launch; the CPU runs them one after another"},
      {.key = "precision",
       .label = "precision",
       .type = ParamType::Choice,
       .default_text = "fp32",
       .choices = flash::kPrecisionChoices,
       .help = "bf16: Q, K, V and P in bf16 on the tensor cores, fp32 accumulators and softmax (--backend cuda)"},
  };
}

// The kernels and their tiles: on-chip memory, the blocks, the tiled loop's order.
std::vector<ParamSpec> tile_specs() {
  return {
      {.key = "sram",
       .label = "on-chip memory M",
       .type = ParamType::Bytes,
       .default_text = "49152",
       .min = 16,
       .max = double(64 << 20),
       .unit = "bytes",
       .help = "M = sram / 4 fp32 elements; Algorithm 1 sizes the tiles from it"},
      {.key = "br",
       .label = "Q block rows Br",
       .type = ParamType::Integer,
       .default_text = "0",
       .max = double(kMaxN),
       .help = "0 = min(ceil(M/(4d)), d)"},
      {.key = "bc",
       .label = "K/V block rows Bc",
       .type = ParamType::Integer,
       .default_text = "0",
       .max = double(kMaxN),
       .help = "0 = ceil(M/(4d))"},
      {.key = "impl",
       .label = "implementation",
       .type = ParamType::Choice,
       .default_text = "all",
       .choices = flash::kImplChoices},
      {.key = "order",
       .label = "tiled loop order",
       .type = ParamType::Choice,
       .default_text = "fa2",
       .choices = flash::kOrderChoices,
       .help = "fa1: Algorithm 1, K/V blocks outside; fa2: FlashAttention-2, Q blocks outside"},
  };
}

// What a run measures: the sweep, its repeats and threads, or the worked example alone.
std::vector<ParamSpec> run_specs() {
  return {
      {.key = "sizes",
       .label = "sweep sizes n",
       .type = ParamType::SizeList,
       .default_text = "256..2048",
       .min = 1,
       .max = double(kMaxN),
       .help = "time, memory and error against n"},
      repeats_param("median of this many, naive and flash alternating, after one warm-up each"),
      cpu_threads_param("for both kernels alike"),
      {.key = "example",
       .label = "worked example",
       .type = ParamType::Choice,
       .default_text = "none",
       .choices = flash::kExampleChoices,
       .help = "two_tiles: run only the course's two-tile example and print its state after each tile"},
  };
}

// The tiles step traces the real kernel on a problem small enough to draw every tile.
std::vector<ParamSpec> tiles_step_specs() {
  return {
      {.key = "tile_n",
       .label = "tiles step: n",
       .type = ParamType::Integer,
       .default_text = "20",
       .min = 8,
       .max = 32,
       .help = "sequence length of the traced problem"},
      {.key = "tile_d",
       .label = "tiles step: d",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 2,
       .max = 8,
       .help = "head dimension of the traced problem"},
      {.key = "tile_br",
       .label = "tiles step: Br",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 8,
       .help = "query rows per tile"},
      {.key = "tile_bc",
       .label = "tiles step: Bc",
       .type = ParamType::Integer,
       .default_text = "6",
       .min = 1,
       .max = 8,
       .help = "key rows per tile"},
      {.key = "tile_order",
       .label = "tiles step: loop order",
       .type = ParamType::Choice,
       .default_text = "fa1",
       .choices = flash::kOrderChoices,
       .help = "fa1: Algorithm 1 (K/V blocks outside), shown first; fa2: FlashAttention-2 (Q blocks outside)"},
  };
}

}  // namespace

std::vector<ParamSpec> FlashLesson::params() const {
  std::vector<ParamSpec> specs;
  for (auto group : {problem_specs, tile_specs, run_specs, tiles_step_specs}) {
    std::vector<ParamSpec> part = group();
    specs.insert(specs.end(), part.begin(), part.end());
  }
  specs.push_back(max_minutes_param());
  return specs;
}

FlashParams FlashLesson::read_params(const ParamValues& values) const {
  FlashParams p;
  p.n = values.integer("n");
  p.d = values.integer("d");
  p.causal = values.text("causal") == "1";
  p.heads = values.integer("heads");
  p.precision = static_cast<Precision>(choice_index(values, "precision", flash::kPrecisionChoices));
  p.sram_bytes = values.integer("sram");
  p.sram_text = values.text("sram");
  p.br = values.integer("br");
  p.bc = values.integer("bc");
  p.impl = static_cast<flash::Impl>(choice_index(values, "impl", flash::kImplChoices));
  p.order = static_cast<LoopOrder>(choice_index(values, "order", flash::kOrderChoices));
  p.sizes = values.list("sizes");
  p.repeats = int(values.integer("repeats"));
  p.threads = int(values.integer("threads"));
  p.example = static_cast<flash::Example>(choice_index(values, "example", flash::kExampleChoices));
  p.tile_n = values.integer("tile_n");
  p.tile_d = values.integer("tile_d");
  p.tile_br = values.integer("tile_br");
  p.tile_bc = values.integer("tile_bc");
  p.tile_order = static_cast<LoopOrder>(choice_index(values, "tile_order", flash::kOrderChoices));
  p.max_minutes = values.real("max_minutes");
  return p;
}

namespace {

// What the chosen backend's kernels cannot run: bf16 on the CPU, d outside the tensor-core paths, fa1's order on a GPU.
void check_precision_and_order(const FlashParams& p, bool on_gpu) {
  const std::int64_t d = p.d;
  const bool measuring = p.measures();
  const Precision precision = p.precision;
  if (precision == Precision::Bf16 && !on_gpu && measuring)
    throw BadInput(
        "parameter 'precision': value 'bf16' needs --backend cuda (bf16 runs on the GPU's tensor cores; the CPU "
        "kernels are fp32); allowed: fp32, or --backend cuda");
  if (precision == Precision::Bf16 && !attention::cuda::bf16_supports_d(d))
    throw BadInput(fmt::format(
        "parameter 'd': value {} is not allowed with precision=bf16; allowed: 32, 64 or 128 (the tensor-core "
        "kernel's fast paths), or precision=fp32",
        d));
  if (on_gpu && p.order == LoopOrder::KvOuter && measuring)
    throw BadInput(
        "parameter 'order': value 'fa1' is not allowed with --backend cuda (the CUDA kernel runs "
        "FlashAttention-2's order); allowed: fa2, or --backend cpu");
}

// The tiles against on-chip memory: the GPU's shared memory per block, and Algorithm 1's budget M.
void check_tiles(const FlashParams& p, bool on_gpu) {
  const std::int64_t d = p.d;
  const FlashTileChoice choice = flash_tile_choice(p);
  // The plain fp32 kernel (d without a register-tile fast path) takes its tiles from sram, br and bc.
  if (on_gpu && p.measures() && attention::cuda::fastest_flash(p.precision, d) == attention::cuda::Variant::Flash) {
    const std::int64_t shared_bytes = attention::flash_cuda_shared_elements(d, choice.tiling) * kElementBytes;
    const std::int64_t allowed = cuda_status().device.shared_memory_per_block_optin_bytes;
    if (shared_bytes > allowed)
      throw BadInput(fmt::format(
          "parameters 'sram', 'br', 'bc': tiles br = {} bc = {} with d = {} need {} bytes of shared memory per "
          "block; this GPU allows {}; lower sram, br or bc",
          choice.tiling.br, choice.tiling.bc, d, shared_bytes, allowed));
  }
  if (!attention::sram_holds_one_row(choice.sram_elements, d))
    throw BadInput(fmt::format(
        "parameter 'sram': value '{}' holds M = {} fp32 elements, fewer than 4d = {} (one row each of q, k, v and o) "
        "for d = {}; allowed: sram of at least {} bytes, or a smaller d",
        p.sram_text, choice.sram_elements, 4 * d, d, 4 * d * kElementBytes));
  if (!attention::tiling_fits(choice.sram_elements, d, choice.tiling))
    throw BadInput(fmt::format(
        "parameters 'br', 'bc': br = {}, bc = {} do not fit M = {} elements: blocks of Q, K, V and O take "
        "(2 br + 2 bc) d = {} elements; allowed: at most {} (4d ceil(M/(4d)), Algorithm 1's own budget), i.e. "
        "br + bc <= {} for d = {}",
        choice.tiling.br, choice.tiling.bc, choice.sram_elements, attention::block_elements(d, choice.tiling),
        attention::block_budget_elements(choice.sram_elements, d), 2 * attention::block_cols(choice.sram_elements, d),
        d));
}

void check_sizes_fit(const FlashParams& p, bool on_gpu) {
  const std::int64_t d = p.d, heads = p.heads;
  const Precision precision = p.precision;
  // Sizes that cannot fit in host memory (or, for standard attention on a GPU, device memory) are refused before
  // anything is allocated.
  const HostMemory host = host_memory();
  const double free_bytes = host.free_bytes;
  auto check_fits = [&](const char* key, std::int64_t n) {
    const double naive_bytes = double(attention::naive_scratch_elements(n)) * kElementBytes;
    if (p.runs_naive() && !host.fits(host_bytes_needed(n, d, heads, true, on_gpu)))
      throw BadInput(fmt::format(
          "parameter '{}': n = {} is too large for impl={}: standard attention materialises an n x n fp32 score "
          "matrix of {}, and only {} of host memory is free; allowed: impl=flash, or a smaller n",
          key, n, flash::impl_name(p.impl), format_bytes_both(naive_bytes), format_bytes_both(free_bytes)));
    if (!host.fits(host_bytes_needed(n, d, heads, false, on_gpu)))
      throw BadInput(fmt::format(
          "parameter '{}': n = {} with d = {} and heads = {} needs {} for q, k, v, o and the reference; only {} "
          "of host memory is free; allowed: a smaller n, d or heads",
          key, n, d, heads, format_bytes_both(host_bytes_needed(n, d, heads, false, on_gpu)),
          format_bytes_both(free_bytes)));
    const DeviceMemory device = device_memory();
    const double scores = double(attention::cuda::naive_device_scratch_bytes(heads, n, precision));
    if (on_gpu && p.runs_naive() && device.free_bytes > 0 && !device.fits(scores))
      throw BadInput(fmt::format(
          "parameter '{}': n = {} is too large for impl={} with heads = {}: standard attention keeps the n x n "
          "scores of every head in device memory, {} in {}, and the GPU has {} free; allowed: impl=flash, or a "
          "smaller n or heads",
          key, n, flash::impl_name(p.impl), heads, format_bytes_both(scores),
          attention::cuda::precision_name(precision), format_bytes_both(device.free_bytes)));
  };
  check_fits("n", p.n);
  for (double size : p.sizes) check_fits("sizes", std::int64_t(size));
}

}  // namespace

void FlashLesson::check_params(const FlashParams& p, BackendKind backend) const {
  const bool on_gpu = backend == BackendKind::Cuda;
  check_precision_and_order(p, on_gpu);
  check_tiles(p, on_gpu);
  if (p.measures()) check_sizes_fit(p, on_gpu);
}

RunBudget FlashLesson::budget_of(const FlashParams& p, BackendKind backend) const {
  if (!p.measures()) return {};
  const bool on_gpu = backend == BackendKind::Cuda;
  const std::int64_t d = p.d, heads = p.heads;
  // Time, counted as the CPU spends it. On the CPU: QK^T and PV are 4 n^2 d FLOP per head and kernel call (a warm-up
  // and one timed call at least, per kernel), at sgemm's rate (both kernels are register-blocked vector loops), and
  // once more for the double reference, whose dot products ran at about 3 GFLOP/s per thread on a 2-core Zen 4 (n =
  // 8192: 3.4 s estimated, 3.4 s measured). On a GPU the kernels take milliseconds; what the host spends is the
  // reference at the sampled rows.
  constexpr double kReferenceGflopsPerThread = 3.0;
  const int threads = std::min(p.threads, describe_cpu().threads);
  const int kernels = p.impl == flash::Impl::All ? 2 : 1;
  double seconds = 0;
  std::vector<double> lengths = p.sizes;
  lengths.push_back(double(p.n));
  for (double n : lengths) {
    const double flop = 4.0 * n * n * double(d) * double(heads);
    if (on_gpu)
      seconds += estimated_seconds(flop * double(std::min<double>(n, kSampledRowsPerHead)) / n,
                                   kReferenceGflopsPerThread, threads);
    else
      seconds += estimated_seconds(flop, kReferenceGflopsPerThread, threads) +
                 estimated_seconds(2.0 * kernels * flop, kBlasGflopsPerThread, threads);
  }
  RunBudget budget;
  budget.cpu_seconds = seconds;
  budget.max_minutes = p.max_minutes;
  budget.cpu_work = fmt::format(
      "4 n^2 d FLOP per head and call with d = {} and heads = {} over n and the sweep's sizes, {:g} "
      "GFLOP/s per thread for the reference and {:g} for the kernels, on {} threads",
      d, heads, kReferenceGflopsPerThread, kBlasGflopsPerThread, threads);
  budget.smaller = "n, d, heads or sizes";
  return budget;
}

flash::FlashTheory flash_theory(const FlashParams& p) {
  const std::int64_t n = p.n, d = p.d;
  const bool causal = p.causal;
  const FlashTileChoice c = flash_tile_choice(p);
  const std::int64_t workers = attention::flash_workers(n, c.tiling, p.threads);
  auto traffic_bytes = [&](LoopOrder order) {
    return attention::flash_traffic(n, d, c.tiling, causal, order, workers).total_elements() * kElementBytes;
  };
  flash::FlashTheory t;
  t.sram_elements = c.sram_elements;
  t.br = c.tiling.br;
  t.bc = c.tiling.bc;
  t.tr = attention::row_blocks(n, c.tiling);
  t.tc = attention::col_blocks(n, c.tiling);
  t.order = order_name(c.order);
  t.scale = attention::default_scale(d);
  t.naive_scratch_bytes = double(attention::naive_scratch_elements(n) * kElementBytes);
  t.flash_scratch_bytes = double(attention::flash_scratch_elements(n, d, c.tiling, c.order, workers) * kElementBytes);
  t.scratch_ratio = t.naive_scratch_bytes / t.flash_scratch_bytes;
  t.hbm_bytes_naive = attention::naive_traffic(n, d).total_elements() * kElementBytes;
  t.hbm_bytes_flash = traffic_bytes(c.order);
  t.hbm_bytes_flash_fa1 = traffic_bytes(LoopOrder::KvOuter);
  t.hbm_bytes_flash_fa2 = traffic_bytes(LoopOrder::QOuter);
  // Both kernels skip masked keys: n(n+1)/2 visible scores instead of n^2, each a d-long dot product and a d-long
  // weighted add of a value row.
  t.flops = causal ? 2.0 * double(d) * double(n) * double(n + 1) : attention::matmul_flops(n, d);
  t.flops_all_heads = t.flops * double(p.heads);
  return t;
}

flash::FlashTheory FlashLesson::theory_of(const FlashParams& p) const { return flash_theory(p); }

namespace {

Setup setup_of(const FlashParams& p) {
  Setup s;
  const FlashTileChoice choice = flash_tile_choice(p);
  s.tiling = choice.tiling;
  s.order = choice.order;
  s.heads = p.heads;
  s.precision = p.precision;
  s.threads = p.threads;
  s.repeats = p.repeats;
  s.naive = p.runs_naive();
  s.flash = p.runs_flash();
  return s;
}

template <typename Device>
void add_backend_notes(RunResult& result, const Device& device, const Setup& s) {
  result.backend.repeats = s.repeats;
  result.backend.timer = Device::kTimer;
  for (std::string& note : device.notes(s.heads)) result.backend.notes.push_back(std::move(note));
}

// The chosen shape on `device`, then in the other precisions it compares there.
template <typename Device>
flash::FlashMeasured measure_chosen_size(Device& device, const FlashParams& p, const Setup& s,
                                         const KernelMeasurements& main, RunPlan& plan, RunContext& ctx) {
  const double flops_all_heads = flash_theory(p).flops_all_heads;
  flash::FlashMeasured measured = measured_at_chosen_size(main, s, flops_all_heads, Device::checked_rows_per_head(p.n));
  for (const Precision precision : Device::compared_precisions(p.d)) {
    if (precision == s.precision) {
      measured.by_precision.push_back(figures_of(main, precision, flops_all_heads));
    } else {
      plan.start(fmt::format("n = {} in {}", p.n, attention::cuda::precision_name(precision)));
      Setup other = s;
      other.precision = precision;
      measured.by_precision.push_back(figures_of(measure_size(device, other, ctx), precision, flops_all_heads));
    }
  }
  return measured;
}

// The measured run on one device (attention_devices.h): the same code times the kernels on the CPU or a GPU.
template <typename Device>
void measure_on(Device& device, const FlashParams& p, RunContext& ctx, RunResult& result) {
  Setup s = setup_of(p);
  add_backend_notes(result, device, s);
  auto problem_at = [&](std::int64_t n) { return Problem{n, p.d, p.causal, attention::default_scale(p.d)}; };
  // Where the device compares precisions (a GPU: both, where d allows bf16), each is measured at the chosen n; the
  // sweep runs in the chosen one.
  const std::size_t precisions = std::max<std::size_t>(1, Device::compared_precisions(p.d).size());
  RunPlan plan(ctx.control, double(p.sizes.size() + precisions));

  // 1. The chosen shape: time, peak scratch, error, and what the lesson expects of them.
  plan.start(fmt::format("n = {}", p.n));
  s.problem = problem_at(p.n);
  const KernelMeasurements main = measure_size(device, s, ctx);
  const flash::FlashMeasured measured = measure_chosen_size(device, p, s, main, plan, ctx);

  // 2. The sweep: time, peak scratch and error against n, with the theory lines for memory and traffic.
  SweepSeries sweep(s.order);
  for (double size : p.sizes) {
    plan.start(fmt::format("sweep n = {}", size));
    s.problem = problem_at(std::int64_t(size));
    // At the chosen n the sweep shows the measurement the table shows: one number, not two samples of it.
    sweep.add<Device>(s, std::int64_t(size) == p.n ? main : measure_size(device, s, ctx));
  }
  result.series = sweep.take();
  plan.finish();
  result.measured = make_values(measured);
}

}  // namespace

RunResult FlashLesson::run_with(const FlashParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  if (!p.measures()) {
    result.measured = make_values(flash::FlashMeasured{.example = run_flash_worked_example(p.order)});
    result.backend.notes.push_back("worked example only: the course's two tiles through v2_flash<double> on the CPU");
  } else if (ctx.backend == BackendKind::Cuda) {
    CudaAttention device(ctx.ledger, ctx.control, p.repeats);
    measure_on(device, p, ctx, result);
  } else {
    CpuAttention device(ctx.ledger, ctx.control, p.threads, p.repeats);
    measure_on(device, p, ctx, result);
  }
  finish_result(result, ctx.ledger);
  return result;
}

std::string FlashLesson::text_report(const RunResult& r) const {
  const auto* m = r.measured_as<flash::FlashMeasured>();
  if (m == nullptr) return {};
  if (m->example) return format_flash_worked_example(*m->example);
  if (!m->naive || !m->flash || !m->comparison) return {};
  const flash::KernelComparison& c = *m->comparison;
  const bool on_gpu = r.backend.kind == "cuda";
  const FlashParams p = read_params(recorded_params(*this, r));
  std::string out =
      fmt::format("what the lesson expects (n = {}, d = {}, heads = {}, causal = {}, {}, {} on {}, flash kernel {}):\n",
                  p.n, p.d, p.heads, p.causal ? 1 : 0, attention::cuda::precision_name(p.precision), r.backend.kind,
                  r.backend.device, m->flash_kernel.empty() ? "v2_flash" : m->flash_kernel);
  // On a CPU the expectation is "about as fast"; on a GPU, where HBM is the bottleneck FlashAttention removes,
  // flash must be faster.
  const bool time_as_expected = c.time_ratio_flash_over_naive <= (on_gpu ? 1.0 : kFlashMaxTimeRatio);
  out += fmt::format("  time    flash {:.3f} ms / naive {:.3f} ms = {:.3f} (medians; fastest runs: {:.3f}): {}\n",
                     m->flash->ms, m->naive->ms, c.time_ratio_flash_over_naive, c.time_ratio_flash_over_naive_min,
                     time_as_expected
                         ? (on_gpu ? "flash faster than standard attention, as the lesson teaches"
                                   : "flash about as fast as standard attention or faster, as expected")
                         : (on_gpu ? "flash slower than standard attention, which the lesson does not expect on a GPU"
                                   : "flash clearly slower than standard attention, which the lesson does not expect"));
  const auto* theory = r.theory_as<flash::FlashTheory>();
  if (c.scratch_ratio_naive_over_flash && theory != nullptr) {
    // The closed form at the run's own n, d and tiles: n^2 scores against a worker's tiles grows as n / tile.
    const double scratch_ratio = *c.scratch_ratio_naive_over_flash, expected = theory->scratch_ratio;
    out += fmt::format("  memory  naive peak scratch {} / flash {} = {:.0f}x: {}\n",
                       format_bytes_binary(double(m->naive->peak_bytes)),
                       format_bytes_binary(double(m->flash->peak_bytes)), scratch_ratio,
                       scratch_ratio >= kFlashScratchShareOfTheory * expected
                           ? fmt::format("as the closed form says ({:.0f}x at this n)", expected)
                           : fmt::format("less than the closed form's {:.0f}x at this n", expected));
  } else if (on_gpu) {
    out += fmt::format("  memory  naive {} of n x n scores in device memory; flash none beyond q, k, v and o\n",
                       format_bytes_binary(double(m->naive->peak_bytes)));
  }
  const double naive_err = m->naive->max_abs_err, flash_err = m->flash->max_abs_err;
  out += fmt::format("  error   flash {:.3g}, naive {:.3g} against the double reference{}: {}\n", flash_err, naive_err,
                     on_gpu ? fmt::format(" ({} sampled rows per head)", m->rows_checked_per_head) : "",
                     attention::meets_accuracy_rule(flash_err, naive_err)
                         ? "flash within twice standard attention's error, as FlashAttention's rule asks"
                         : "flash more than twice as far off as standard attention: FlashAttention's rule is broken");
  for (const flash::PrecisionFigures& f : m->by_precision) {
    if (!f.naive || !f.flash) continue;
    out += fmt::format(
        "  {:<5}   naive {:.3f} ms ({:.1f} TFLOP/s), flash {} {:.3f} ms ({:.1f} TFLOP/s), ratio {:.3f}, "
        "errors {:.2g} / {:.2g}\n",
        f.precision, f.naive->ms, f.naive->tflops, f.flash_kernel, f.flash->ms, f.flash->tflops,
        f.flash->ms / f.naive->ms, f.naive->max_abs_err, f.flash->max_abs_err);
  }
  if (on_gpu && m->flash_kernel == "v2_flash")
    out += fmt::format("  ({})\n", kFlashPlainKernelCaveat);
  else if (!on_gpu && (p.n != 4096 || p.d != 64))
    out += "  (the time expectation is for n = 4096, d = 64 on the CPU; the memory one follows n)\n";
  else if (!on_gpu)
    out +=
        "  (on a CPU the caches play SRAM and there is no gap like a GPU's between HBM and on-chip memory: the "
        "memory saving shows, the GPU's speed-up does not)\n";
  return out;
}

std::shared_ptr<const flash::FlashSteps> FlashLesson::step_data_of(const FlashParams& p) const {
  return flash::make_steps(p, flash_theory(p));
}

}  // namespace dlsys
