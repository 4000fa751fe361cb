// The data-parallel lesson's parameters, the one place it refuses them, its closed forms and its run plan.
#include "lessons/ddp/ddp_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "engine/backend.h"
#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/gpu_ring_plan.h"
#include "kernels/ddp/buckets.h"
#include "kernels/ddp/ddp_cuda.h"
#include "kernels/ddp/simulate.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/ddp/ddp_processes.h"
#include "lessons/ddp/ddp_steps.h"

namespace dlsys {

using ddp::DdpParams;
using ddp::SyncMode;
using ddp::TrainConfig;
using ddp::WireFormat;

namespace {
// A bucket count above this would spend the run in handshakes; the bucket sweep stops there too.
constexpr std::int64_t kMaxBuckets = 8192;
const std::vector<std::string> kModeChoices = {"ddp", "dataparallel"};   // in the order of SyncMode
const std::vector<std::string> kWireChoices = {"fp32", "bf16", "fp16"};  // in the order of WireFormat
}  // namespace

std::vector<ParamSpec> DdpLesson::params() const {
  return {
      {.key = "n",
       .label = "ranks N",
       .type = ParamType::Integer,
       .default_text = "2",
       .min = 1,
       .max = 64,
       .help = "data-parallel ranks (CPU threads here, or processes with launcher=mpi), each with a full replica; must "
               "divide the batch"},
      {.key = "layers",
       .label = "layers",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 512,
       .help = "residual MLP blocks y = x + relu(x W1) W2"},
      {.key = "width",
       .label = "width",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 8,
       .max = 16384,
       .help = "each block has 2 width^2 weights"},
      {.key = "batch",
       .label = "global batch B",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = 65536,
       .unit = "rows",
       .help = "rows per optimizer step, all ranks together; a multiple of N x accumulate"},
      {.key = "bucket",
       .label = "bucket size",
       .type = ParamType::Bytes,
       .default_text = "4MiB",
       .min = 8,
       .max = 64.0 * (1 << 30),
       .help = "fp32 gradient bytes per all-reduce (PyTorch's default: 25 MiB)"},
      {.key = "mode",
       .label = "how gradients meet",
       .type = ParamType::Choice,
       .default_text = "ddp",
       .choices = kModeChoices,
       .help = "ddp: ring all-reduce per bucket, every rank steps; dataparallel: rank 0 gathers and steps alone"},
      {.key = "accumulate",
       .label = "accumulation steps k",
       .type = ParamType::Integer,
       .default_text = "1",
       .min = 1,
       .max = 64,
       .help = "micro-steps per optimizer step; gradients are reduced on the last one only"},
      {.key = "grad_dtype",
       .label = "gradients on the wire",
       .type = ParamType::Choice,
       .default_text = "fp32",
       .choices = kWireChoices,
       .help = "bf16 / fp16: rounded to 16 bits for the all-reduce, half the bytes"},
      {.key = "steps",
       .label = "timed steps",
       .type = ParamType::Integer,
       .default_text = "3",
       .min = 1,
       .max = 50,
       .help = "optimizer steps timed per configuration, after one untimed"},
      max_minutes_param(),
      launcher_param(
          "(n is then the number of processes; mode ddp with fp32 gradients, the chosen configuration only)"),
  };
}

std::vector<std::string> DdpLesson::process_launch_params(int world_size, bool) const {
  return ddp::process_launch_params(world_size);
}

namespace ddp {

DdpParams read_ddp_params(const ParamValues& values) {
  DdpParams p;
  p.n = int(values.integer("n"));
  p.n_text = values.text("n");
  p.layers = int(values.integer("layers"));
  p.width = int(values.integer("width"));
  p.batch = int(values.integer("batch"));
  p.bucket_bytes = values.real("bucket");
  p.mode = static_cast<SyncMode>(choice_index(values, "mode", kModeChoices));
  p.accumulate = int(values.integer("accumulate"));
  p.grad_dtype = static_cast<WireFormat>(choice_index(values, "grad_dtype", kWireChoices));
  p.steps = int(values.integer("steps"));
  p.max_minutes = values.real("max_minutes");
  if (values.has("launcher")) p.launcher = static_cast<Launcher>(choice_index(values, "launcher", kLauncherChoices));
  return p;
}

}  // namespace ddp

DdpParams DdpLesson::read_params(const ParamValues& values) const { return ddp::read_ddp_params(values); }

TrainConfig ddp_config(const DdpParams& p) {
  TrainConfig c;
  c.shape = {p.layers, p.width};
  c.ranks = p.n;
  c.global_batch = p.batch;
  c.accumulate = p.accumulate;
  c.bucket_elements = ddp::bucket_elements_for_bytes(std::int64_t(p.bucket_bytes));
  c.wire = p.grad_dtype;
  c.mode = p.mode;
  c.steps = p.steps + 1;
  return c;
}

namespace {

bool divides_batch(const TrainConfig& c) { return c.global_batch % (c.ranks * c.accumulate) == 0; }

std::int64_t gradient_elements(const TrainConfig& c) { return training::parameter_count(c.shape); }

// The bucket caps the sweep tries: the whole gradient, then halvings, then quarterings down to latency-bound sizes.
std::vector<std::int64_t> swept_bucket_elements(const TrainConfig& c) {
  const std::int64_t whole = gradient_elements(c);
  std::set<std::int64_t> caps;
  for (std::int64_t d : {1, 2, 4, 8, 16, 64, 256, 1024, 4096}) {
    const std::int64_t cap = std::max<std::int64_t>(2, whole / d / 2 * 2);
    if (ddp::bucket_count(c.shape, cap) <= kMaxBuckets && cap * 4 >= 1024) caps.insert(cap);
  }
  return {caps.rbegin(), caps.rend()};
}

}  // namespace

std::vector<PlannedRun> ddp_run_plan(const DdpParams& p, BackendKind backend) {
  const TrainConfig chosen = ddp_config(p);
  const bool gpu = backend == BackendKind::Cuda;
  std::vector<PlannedRun> plan;
  if (p.launcher == ddp::Launcher::Mpi) return plan;
  auto same = [](const TrainConfig& a, const TrainConfig& b) {
    return a.ranks == b.ranks && a.accumulate == b.accumulate && a.wire == b.wire && a.mode == b.mode &&
           (a.mode == SyncMode::DataParallel || a.bucket_elements == b.bucket_elements);
  };
  auto add = [&](TrainConfig c, const char* purpose) {
    if (!divides_batch(c) || same(c, chosen)) return;
    if (gpu && (c.mode != SyncMode::Ddp || c.wire != WireFormat::Fp32)) return;  // CPU-only variants
    for (const PlannedRun& r : plan)
      if (same(r.config, c)) return;
    plan.push_back({c, purpose});
  };
  TrainConfig base = chosen;
  base.mode = SyncMode::Ddp;
  base.wire = WireFormat::Fp32;
  base.accumulate = 1;
  add(base, "variant");
  for (WireFormat w : {WireFormat::Bf16, WireFormat::Fp16}) {
    TrainConfig c = base;
    c.wire = w;
    add(c, "variant");
  }
  {
    TrainConfig c = base;
    c.accumulate = chosen.accumulate > 1 ? chosen.accumulate : 2;
    add(c, "variant");
    c.mode = SyncMode::DataParallel;
    c.accumulate = 1;
    add(c, "variant");
  }
  for (std::int64_t cap : swept_bucket_elements(base)) {
    TrainConfig c = base;
    c.bucket_elements = cap;
    add(c, "bucket sweep");
  }
  std::set<int> ranks{1, 2, 4, chosen.ranks};
  for (int n : ranks)
    for (SyncMode mode : {SyncMode::Ddp, SyncMode::DataParallel}) {
      TrainConfig c = base;
      c.ranks = n;
      c.mode = mode;
      add(c, "ranks sweep");
    }
  TrainConfig bench = base;
  bench.ranks = kBenchRanks;
  bench.bucket_elements = std::max<std::int64_t>(2, gradient_elements(bench) / 4 / 2 * 2);
  // Always its own run, with more timed steps than the sweeps: one number the lesson states, so its median should
  // not hang on two or three steps.
  bench.steps = std::max(bench.steps, kBenchTimedSteps + 1);
  if (divides_batch(bench)) plan.push_back({bench, "benchmark"});
  return plan;
}

double ddp_cpu_run_seconds(const DdpParams& p) {
  const TrainConfig chosen = ddp_config(p);
  const auto step_flop = [](const TrainConfig& c) {
    return 12.0 * c.global_batch * double(c.shape.width) * c.shape.width * c.shape.layers;
  };
  double flop = chosen.steps * step_flop(chosen);  // the single-rank reference
  double parameter_passes = 0;
  std::vector<TrainConfig> trained{chosen};
  for (const PlannedRun& r : ddp_run_plan(p)) trained.push_back(r.config);
  for (const TrainConfig& c : trained) {
    flop += c.steps * step_flop(c);
    parameter_passes += (c.steps + 1.0) * c.ranks * double(gradient_elements(c));
  }
  return estimated_seconds(flop, kDdpGflops, 1) + parameter_passes * kDdpSecondsPerParameterPass;
}

namespace {

std::string allowed_ranks(int batch, int accumulate) {
  std::string out;
  for (int n = 1; n <= 64 && out.size() < 60; ++n)
    if (batch % (n * accumulate) == 0) out += (out.empty() ? "" : ", ") + std::to_string(n);
  return out.empty() ? "none (raise batch)" : out;
}

void check_split(const TrainConfig& c) {
  if (c.global_batch % (c.ranks * c.accumulate) != 0)
    throw BadInput(fmt::format(
        "parameter 'n': value '{}' is not allowed with batch = {} and accumulate = {} (each rank takes batch / (n x "
        "accumulate) rows per micro-step); allowed: n dividing batch / accumulate: {}",
        c.ranks, c.global_batch, c.accumulate, allowed_ranks(c.global_batch, c.accumulate)));
}

void check_bucket_count(const TrainConfig& c) {
  if (c.mode == SyncMode::Ddp && ddp::bucket_count(c.shape, c.bucket_elements) > kMaxBuckets)
    throw BadInput(fmt::format(
        "parameter 'bucket': value '{}' is not allowed for a gradient of {} (it makes {} buckets, each a ring "
        "all-reduce); allowed: at least {} bytes (at most {} buckets)",
        format_bytes_both(double(c.bucket_elements * 4)), format_bytes_both(double(gradient_elements(c) * 4)),
        ddp::bucket_count(c.shape, c.bucket_elements), (gradient_elements(c) + kMaxBuckets - 1) / kMaxBuckets * 4,
        kMaxBuckets));
}

// The host memory a run needs, with the message that names what it holds (the time is the lesson's budget).
void check_host_memory(const DdpParams& p, BackendKind backend) {
  const TrainConfig chosen = ddp_config(p);
  const std::vector<PlannedRun> plan = ddp_run_plan(p, backend);
  double largest = ddp::train_bytes(chosen);
  int most_steps = chosen.steps;
  for (const PlannedRun& r : plan) {
    largest = std::max(largest, ddp::train_bytes(r.config));
    most_steps = std::max(most_steps, r.config.steps);
  }
  const double params = double(gradient_elements(chosen)), w = chosen.shape.width;
  const double data_bytes = double(most_steps) * chosen.global_batch * w * 2 * 4;
  const double single_bytes = params * 8 + (2.0 * chosen.shape.layers + 4) * chosen.global_batch * w * 4;
  const double needed = largest + data_bytes + single_bytes + params * 4 * 2;  // + the two weight sets compared
  const HostMemory host = host_memory();
  if (!host.fits(needed))
    throw BadInput(fmt::format(
        "parameters 'layers' = {}, 'width' = {}, 'batch' = {}, 'n' = {}: the run needs {} (a replica of weights, "
        "gradients and activations on every rank, the data set and the single-rank reference) but only {} of host "
        "memory is available; lower layers, width, batch or n",
        chosen.shape.layers, chosen.shape.width, chosen.global_batch, chosen.ranks, format_bytes_both(needed),
        format_bytes_both(host.free_bytes)));
}

// What the GPU trainer does not do: DataParallel's master copies and the 16-bit wires stay on the CPU backend.
void check_gpu_variant(const TrainConfig& c) {
  if (c.mode != SyncMode::Ddp)
    throw BadInput(
        "parameter 'mode': value 'dataparallel' is not allowed with --backend cuda (the GPU path trains DDP only; "
        "DataParallel's single master runs on the CPU backend); allowed: mode = ddp, or --backend cpu");
  if (c.wire != WireFormat::Fp32)
    throw BadInput(fmt::format(
        "parameter 'grad_dtype': value '{}' is not allowed with --backend cuda (the GPU path all-reduces fp32 "
        "gradients; 16-bit wires run on the CPU backend); allowed: grad_dtype = fp32, or --backend cpu",
        ddp::wire_name(c.wire)));
}

// On a GPU: every configuration's device memory on GPU 0 (every rank, when ranks are emulated there).
void check_gpu_memory(const DdpParams& p) {
  const CudaStatus& cuda = cuda_status();
  const bool nccl = collectives::cuda::nccl_compiled();
  const TrainConfig chosen = ddp_config(p);
  std::vector<TrainConfig> configs{chosen};
  for (const PlannedRun& r : ddp_run_plan(p, BackendKind::Cuda)) configs.push_back(r.config);
  double largest = 0;
  int largest_ranks = chosen.ranks;
  for (const TrainConfig& c : configs) {
    const collectives::GpuPlacement placement = collectives::plan_gpu_placement(c.ranks, cuda.device_count, nccl);
    const double bytes = double(ddp::cuda::gpu0_bytes_needed(c, placement));
    if (bytes > largest) {
      largest = bytes;
      largest_ranks = c.ranks;
    }
  }
  if (!device_memory().fits(largest))
    throw BadInput(fmt::format(
        "parameters 'layers' = {}, 'width' = {}, 'batch' = {}, 'n' = {}: on the GPU the run needs {} on GPU 0 (N = "
        "{}: weights, gradients, activations and rows of {} there) but only {} is free; lower layers, width, batch "
        "or n, or run on --backend cpu",
        chosen.shape.layers, chosen.shape.width, chosen.global_batch, chosen.ranks, format_bytes_both(largest),
        largest_ranks, largest_ranks > cuda.device_count && largest_ranks > 1 ? "every rank, emulated" : "one rank",
        format_bytes_both(double(cuda.device.memory_free_bytes))));
}

}  // namespace

void DdpLesson::check_params(const DdpParams& p, BackendKind backend) const {
  if (p.launcher == ddp::Launcher::Mpi) ddp::check_process_run(p, backend);
  check_split(ddp_config(p));
  if (backend == BackendKind::Cuda) check_gpu_variant(ddp_config(p));
  check_bucket_count(ddp_config(p));
}

void DdpLesson::check_run(const DdpParams& p, BackendKind backend) const {
  check_host_memory(p, backend);
  if (backend == BackendKind::Cuda) check_gpu_memory(p);
}

RunBudget DdpLesson::budget_of(const DdpParams& p, BackendKind backend) const {
  return {.cpu_seconds = ddp_cpu_run_seconds(p),
          .max_minutes = p.max_minutes,
          .cpu_work = fmt::format(
              "{} configurations and the single-rank reference, each step 12 B w^2 L FLOP at {:g} GFLOP/s and {:g} "
              "ns per parameter of every rank",
              ddp_run_plan(p, backend).size() + 1, kDdpGflops, kDdpSecondsPerParameterPass * 1e9),
          .smaller = "layers, width, batch or steps"};
}

ddp::DdpTheory ddp_theory(const DdpParams& p) {
  const TrainConfig c = ddp_config(p);
  ddp::DdpTheory t;
  const std::int64_t params = gradient_elements(c), wire = ddp::wire_bytes_per_element(c.wire);
  t.parameters = params;
  t.gradient_bytes = params * 4;
  t.wire_gradient_bytes = params * wire;
  t.bucket_bytes = c.bucket_elements * 4;
  t.rows_per_rank_per_micro_step = c.global_batch % (c.ranks * c.accumulate) == 0 ? c.rows_per_micro_step() : 0;
  const std::int64_t n = c.ranks, w = c.shape.width;
  t.dataparallel_rank0_bytes_sent = (n - 1) * (params * 4 + 2 * w * (c.global_batch / n) * 4);
  t.dataparallel_rank0_bytes_received = (n - 1) * params * wire;
  t.ring_closed_form_bytes = 2.0 * double(n - 1) / double(n) * double(t.wire_gradient_bytes);
  if (c.mode == SyncMode::Ddp) {
    const std::vector<ddp::Bucket> buckets = ddp::assign_buckets(c.shape, c.bucket_elements);
    t.buckets = std::int64_t(buckets.size());
    for (const ddp::Bucket& b : buckets)
      t.bytes_per_rank_per_step += wire == 4 ? ddp::ring_bytes_sent(b.elements(), c.ranks, 0, 4)
                                             : ddp::ring_bytes_sent(b.elements() / 2, c.ranks, 0, 4);
  } else {
    t.bytes_per_rank_per_step = t.dataparallel_rank0_bytes_sent;
  }
  t.flop_per_step = 12.0 * c.global_batch * double(w) * double(w) * c.shape.layers;
  return t;
}

ddp::DdpTheory DdpLesson::theory_of(const DdpParams& p) const { return ddp_theory(p); }

namespace {

Timeline simulated_timeline(const TrainConfig& c, const std::string& name) {
  const ddp::AssumedRates rates;
  Timeline t;
  t.name = fmt::format("{} (simulated: {:g} GFLOP/s, links {:g} GB/s, {:g} us per ring step)", name, rates.gflops,
                       rates.link_gbps, rates.latency_us);
  t.source = "theory";
  t.mode = "simulated";
  t.lanes = {"each rank's compute", "each rank's comm"};
  for (const ddp::OpSpan& s : ddp::simulate_step(c, rates))
    t.spans.push_back(
        {.lane = s.comm_lane ? 1 : 0, .start = s.start_us, .end = s.end_us, .kind = s.kind, .label = s.label});
  return t;
}

}  // namespace

std::vector<Timeline> ddp_theory_timelines(const DdpParams& p) {
  TrainConfig c = ddp_config(p);
  c.mode = SyncMode::Ddp;
  c.accumulate = 1;
  std::vector<Timeline> out{simulated_timeline(
      c, fmt::format("DDP, N = {}, bucket {}", c.ranks, format_bytes_binary(double(c.bucket_elements * 4))))};
  c.bucket_elements = training::parameter_count(c.shape);
  out.push_back(simulated_timeline(c, fmt::format("DDP, N = {}, one bucket", c.ranks)));
  return out;
}

std::vector<Timeline> DdpLesson::theory_timelines(const ParamValues& values) const {
  return ddp_theory_timelines(read_params(values));
}

std::shared_ptr<const ddp::DdpSteps> DdpLesson::step_data_of(const DdpParams& p) const {
  return ddp::make_steps(p, ddp_theory(p));
}

}  // namespace dlsys
