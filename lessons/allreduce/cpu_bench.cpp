// The allreduce lesson on the CPU: N rank threads of a Communicator, each with its own send and recv buffer,
// exchanging through the engine's channels (collectives/). Buffers are made once, for the largest size, and every
// size uses a prefix of them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/backend.h"
#include "engine/host_buffer.h"
#include "engine/units.h"
#include "kernels/collectives/collectives.h"
#include "kernels/collectives/copy_probe.h"
#include "kernels/collectives/reference.h"
#include "lessons/allreduce/bench.h"

namespace dlsys::allreduce {

namespace {

// The copy probe moves as many bytes per thread as the run's largest message (so both see the same caches), at
// least 1 MiB so the timer resolves it and at most 64 MiB (far beyond the caches) so it stays quick.
std::int64_t copy_probe_bytes(const BenchConfig& config) {
  return std::clamp<std::int64_t>(config.max_bytes, 1ll << 20, 64ll << 20);
}

collectives::CommOptions comm_options(const BenchConfig& config) {
  return {.segment_bytes = config.segment_bytes, .slots_per_channel = 4, .poll = true};
}

// One rank's link is one thread copying memory. Its rate can exceed neither what one thread copies alone nor its
// 1/N share of what the threads running the ring copy together (they share one memory system, and with more ranks
// than hardware threads they also share the cores). The ceiling is the smaller of the two, both measured now, each
// as the faster of memcpy (the engine's probe) and the streaming-store copy the ring itself uses for its results.
Ceiling measure_cpu_ceiling(int n_ranks, int hardware_threads, std::int64_t probe_bytes) {
  const int threads = std::min(n_ranks, hardware_threads);
  const double memcpy_one = measure_copy_bandwidth_gbps(1, probe_bytes);
  const double stream_one = collectives::streaming_copy_bandwidth_gbps(1, probe_bytes);
  const double memcpy_all = threads == 1 ? memcpy_one : measure_copy_bandwidth_gbps(threads, probe_bytes);
  const double stream_all =
      threads == 1 ? stream_one : collectives::streaming_copy_bandwidth_gbps(threads, probe_bytes);
  const double one_thread = std::max(memcpy_one, stream_one);
  const double together = std::max(memcpy_all, stream_all);
  const double share = together / n_ranks;
  Ceiling c;
  c.gbps = std::min(one_thread, share);
  c.how = fmt::format(
      "ceiling = min(one thread copying {:.2f} GB/s, 1/{} of {} threads copying together {:.2f} GB/s = {:.2f}) = "
      "{:.2f} "
      "GB/s; copies of {} per thread, the faster of memcpy and streaming stores; a rank's link is one thread copying, "
      "and all ranks' links share the memory system",
      one_thread, n_ranks, threads, together, share, c.gbps, format_bytes_binary(double(probe_bytes)));
  c.figures = {{"memcpy_one_thread_gbps", memcpy_one}, {"stream_copy_one_thread_gbps", stream_one},
               {"memcpy_threads_gbps", memcpy_all},    {"stream_copy_threads_gbps", stream_all},
               {"copy_threads", double(threads)},      {"copy_probe_bytes", double(probe_bytes)}};
  return c;
}

}  // namespace

std::int64_t cpu_bench_bytes(const BenchConfig& config, int hardware_threads) {
  const std::int64_t probe = 2 * copy_probe_bytes(config) * std::min(config.n_ranks, hardware_threads);  // 2 buffers
  return 2 * config.n_ranks * config.max_bytes +
         collectives::Communicator::link_bytes(config.n_ranks, comm_options(config)) + probe;
}

TimingStats time_calls(const std::function<void()>& call, int repeats, const RunControl& control,
                       int& calls_per_sample) {
  control.check_cancelled();
  Stopwatch first;
  call();
  const double first_us = std::max(first.elapsed_us(), 0.1);
  calls_per_sample = static_cast<int>(std::clamp(2000.0 / first_us, 1.0, 1000.0));
  TimingStats stats = measure(
      [&] {
        for (int i = 0; i < calls_per_sample; ++i) call();
      },
      MeasureOptions{.warmup = 1, .repeats = repeats, .max_total_us = 10e6}, [&] { control.check_cancelled(); });
  stats.median_us /= calls_per_sample;
  stats.min_us /= calls_per_sample;
  stats.max_us /= calls_per_sample;
  return stats;
}

Bench make_cpu_bench(const BenchConfig& config, MemoryLedger& ledger, const RunControl& control) {
  const int n = config.n_ranks;
  const int hardware_threads = describe_cpu().threads;
  const std::int64_t max_count = config.max_bytes / 4;

  // Shared between the Bench's copies of the closure: the buffers (N x (max_count) each) and the communicator.
  struct State {
    std::vector<HostBuffer<float>> send, recv;
    std::unique_ptr<collectives::Communicator> comm;
  };
  auto state = std::make_shared<State>();
  for (int r = 0; r < n; ++r) {
    state->send.emplace_back(ledger, "send buffers", max_count);
    state->recv.emplace_back(ledger, "recv buffers", max_count);
    collectives::fill_inputs(state->send.back().data(), r, max_count, hardware_threads);
  }
  state->comm = std::make_unique<collectives::Communicator>(n, ledger, comm_options(config));

  Bench bench;
  bench.ceiling = measure_cpu_ceiling(
      n, hardware_threads, copy_probe_bytes(config));  // after allocating: the probe and the ring see one machine
  bench.emulated = true;
  bench.notes.push_back(fmt::format(
      "ranks are threads of one process (N = {}); a link is a channel of {} slots of {} that the sender copies into "
      "and the receiver reads from; waiting ranks {}",
      n, comm_options(config).slots_per_channel, format_bytes_binary(double(config.segment_bytes)),
      state->comm->polls() ? "poll briefly, then sleep" : "sleep at once (they share cores)"));
  if (n > hardware_threads)
    bench.notes.push_back(
        fmt::format("{} ranks time-share {} hardware threads: ranks wait for a core as well as for "
                    "data, so busbw falls with N here where real links would not",
                    n, hardware_threads));
  bench.notes.push_back(bench.ceiling.how);

  const collectives::Algorithm algorithm =
      config.algo == "naive" ? collectives::Algorithm::Naive : collectives::Algorithm::Ring;
  bench.measure = [state, config, algorithm, n, hardware_threads, &control](std::int64_t bytes) {
    collectives::RankBuffers buffers{{}, {}, bytes / 4};
    for (int r = 0; r < n; ++r) {
      buffers.send.push_back(state->send[r].data());
      buffers.recv.push_back(state->recv[r].data());
    }
    auto call = [&] { collectives::run_collective(*state->comm, config.op, algorithm, buffers); };
    SizePoint point;
    point.bytes = double(bytes);
    point.time = time_calls(call, config.repeats, control, point.calls_per_sample);

    // The checked call: outputs poisoned first, so an element the collective never wrote counts as wrong.
    for (float* out : buffers.recv) std::fill(out, out + buffers.count, std::numeric_limits<float>::quiet_NaN());
    std::vector<std::int64_t> sent_before(n);
    for (int r = 0; r < n; ++r) sent_before[r] = state->comm->bytes_sent_by(r);
    call();
    point.bytes_sent_max_rank = 0;
    for (int r = 0; r < n; ++r)
      point.bytes_sent_max_rank =
          std::max(point.bytes_sent_max_rank, double(state->comm->bytes_sent_by(r) - sent_before[r]));
    point.wrong = collectives::count_wrong(config.op, buffers.recv, buffers.count, hardware_threads);
    return point;
  };
  return bench;
}

}  // namespace dlsys::allreduce
