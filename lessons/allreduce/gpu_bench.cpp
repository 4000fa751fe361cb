// The allreduce lesson on GPUs: the project's ring or NCCL (collectives_cuda.h), checked on the host against the
// same reference as the CPU ranks.
#include <fmt/format.h>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/reference.h"
#include "lessons/allreduce/bench.h"
#include "lessons/common/run_budget.h"

namespace dlsys::allreduce {

void check_gpu_bench(const BenchConfig& config) {
  namespace gpu = collectives::cuda;
  if (config.algo == Algo::Naive)
    throw BadInput(
        "parameter 'algo': value 'naive' runs on the cpu backend only; allowed on cuda: ring, library "
        "(or pass --backend cpu)");
  const gpu::Implementation implementation =
      config.algo == Algo::Library ? gpu::Implementation::Nccl : gpu::Implementation::Ring;
  if (implementation == gpu::Implementation::Nccl && !gpu::nccl_compiled())
    throw BadInput("parameter 'algo': value 'library' needs NCCL, which this build does not have; allowed: ring");
  const gpu::Placement placement = gpu::place_ranks(config.n_ranks);
  if (implementation == gpu::Implementation::Nccl && placement.emulated)
    throw BadInput(
        fmt::format("parameter 'algo': value 'library' (NCCL) needs one GPU per rank: n = {} but {}; "
                    "allowed here: ring",
                    config.n_ranks, placement.description));
  if (implementation == gpu::Implementation::Nccl && config.op != collectives::Op::AllReduce)
    for (const std::int64_t bytes : config.message_bytes)
      if (bytes % (4 * config.n_ranks) != 0)
        throw BadInput(fmt::format(
            "parameters 'bytes'/'sizes': NCCL's {} needs every size divisible by 4 x N = {} bytes; got {} bytes; "
            "allowed: multiples of {} bytes, or algo=ring",
            config.op == collectives::Op::ReduceScatter ? "reduce-scatter" : "all-gather", 4 * config.n_ranks, bytes,
            4 * config.n_ranks));

  // Refuse what cannot fit before allocating: per device, send + recv + scratch for each rank placed on it.
  const DeviceInfo& device = cuda_status().device;
  const int ranks_per_device = placement.emulated ? config.n_ranks : 1;
  const double needed = 2.5 * double(config.max_bytes) * ranks_per_device;
  if (!device_memory().fits(needed))
    throw BadInput(
        fmt::format("parameters 'n' = {} and 'bytes'/'sizes' up to {}: {} rank(s) per GPU need {} but GPU 0 "
                    "has {} free; lower n, bytes or sizes",
                    config.n_ranks, format_bytes_binary(double(config.max_bytes)), ranks_per_device,
                    format_bytes_both(needed), format_bytes_both(double(device.memory_free_bytes))));
  const double host_needed = double(config.n_ranks) * double(config.max_bytes);  // results copied back for the check
  if (!host_memory().fits(host_needed))
    throw BadInput(
        fmt::format("parameters 'n' = {} and 'bytes'/'sizes' up to {}: checking the results needs {} of "
                    "host memory; lower n, bytes or sizes",
                    config.n_ranks, format_bytes_binary(double(config.max_bytes)), format_bytes_both(host_needed)));
}

Bench make_gpu_bench(const BenchConfig& config, const RunControl& control) {
  namespace gpu = collectives::cuda;
  const gpu::Implementation implementation =
      config.algo == Algo::Library ? gpu::Implementation::Nccl : gpu::Implementation::Ring;
  const gpu::Placement placement = gpu::place_ranks(config.n_ranks);

  Bench bench;
  bench.emulated = placement.emulated;
  bench.timer = "cuda_event";
  bench.notes.push_back(placement.description);
  const std::int64_t probe_bytes =
      std::min<std::int64_t>(std::max<std::int64_t>(config.max_bytes, 1 << 20), 256ll << 20);
  const double ceiling_gbps = gpu::copy_bandwidth_gbps(config.n_ranks, probe_bytes);
  bench.notes.push_back(
      fmt::format("ceiling = {} copy of {}: {:.1f} GB/s, what one rank can move to its neighbour (one probe, used "
                  "for every size)",
                  placement.emulated || config.n_ranks == 1 ? "device-to-device" : "GPU 0 -> GPU 1 peer",
                  format_bytes_binary(double(probe_bytes)), ceiling_gbps));
  if (placement.emulated)
    bench.notes.push_back(
        "emulated ranks share one GPU's memory bandwidth: a copy to a 'neighbour' is a copy within "
        "the same device");

  bench.measure = [config, implementation, ceiling_gbps, probe_bytes, &control](std::int64_t bytes, bool detailed) {
    control.check_cancelled();
    const std::int64_t count = bytes / 4;
    std::vector<std::vector<float>> results(config.n_ranks, std::vector<float>(static_cast<std::size_t>(count)));
    std::vector<float*> pointers;
    for (auto& r : results) pointers.push_back(r.data());
    const gpu::GpuMeasurement m = gpu::measure(config.op, implementation, config.n_ranks, count,
                                               MeasureOptions{.warmup = 2, .repeats = config.repeats}, pointers);
    SizePoint point;
    point.bytes = double(bytes);
    point.time = m.time;
    point.wrong = collectives::count_wrong(config.op, pointers, count, describe_cpu().threads);
    point.ceiling_gbps = ceiling_gbps;
    if (detailed) point.ceiling_figures = {{"copy_probe_bytes", double(probe_bytes)}};
    return point;
  };
  return bench;
}

}  // namespace dlsys::allreduce
