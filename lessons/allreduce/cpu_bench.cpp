// The allreduce lesson on the CPU: N rank threads of a Communicator, each with its own send and recv buffer,
// exchanging through the engine's channels (collectives/). Buffers are made once, for the largest size, and every
// size uses a prefix of them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "engine/backend.h"
#include "engine/host_buffer.h"
#include "engine/units.h"
#include "kernels/collectives/collectives.h"
#include "kernels/collectives/copy_probe.h"
#include "kernels/collectives/cost_model.h"
#include "kernels/collectives/reference.h"
#include "lessons/allreduce/allreduce_values.h"
#include "lessons/allreduce/bench.h"

namespace dlsys::allreduce {

bool compares_algorithms(const BenchConfig& config) {
  return config.op == collectives::Op::AllReduce && config.n_ranks <= kComparisonMaxRanks;
}

namespace {

collectives::CommOptions comm_options(const BenchConfig& config) {
  return {.segment_bytes = config.segment_bytes,
          .slots_per_channel = 4,
          .poll = true,
          .full_mesh = compares_algorithms(config)};
}

// The bytes a rank sends in one call of the ring, busbw x time: the probe copies as many, so the ceiling and busbw
// pay the same wake-ups for the same bytes. (N = 1 sends nothing; its probe copies the message.)
std::int64_t probe_bytes_per_rank(const BenchConfig& config, std::int64_t bytes) {
  const double factor = collectives::busbw_factor(config.op, config.n_ranks);
  if (factor == 0) return bytes;
  return std::max<std::int64_t>(4, static_cast<std::int64_t>(factor * double(bytes)) / 4 * 4);
}

// Samples per probe: the ceiling is a best case, so it gets a few samples even when the collective gets one.
int probe_repeats(const BenchConfig& config) { return std::max(3, config.repeats); }

struct State {
  std::vector<HostBuffer<float>> send, recv;  // (n_ranks) buffers of (max_count) floats
  std::unique_ptr<collectives::Communicator> comm;

  // Every rank's send and recv buffer, cut to `bytes`.
  collectives::RankBuffers buffers(std::int64_t bytes) {
    collectives::RankBuffers out{{}, {}, bytes / 4};
    for (std::size_t r = 0; r < send.size(); ++r) {
      out.send.push_back(send[r].data());
      out.recv.push_back(recv[r].data());
    }
    return out;
  }

  // The checked call, after the timed ones: outputs poisoned first, so an element the collective never wrote counts
  // as wrong; the busiest rank's bytes counted by the links.
  void checked_call(const std::function<void()>& call, collectives::Op op, const collectives::RankBuffers& buffers,
                    int hardware_threads, SizePoint& point) {
    for (float* out : buffers.recv) std::fill(out, out + buffers.count, std::numeric_limits<float>::quiet_NaN());
    const int n = comm->size();
    std::vector<std::int64_t> sent_before(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) sent_before[std::size_t(r)] = comm->bytes_sent_by(r);
    call();
    point.bytes_sent_max_rank = 0;
    for (int r = 0; r < n; ++r)
      point.bytes_sent_max_rank =
          std::max(point.bytes_sent_max_rank, double(comm->bytes_sent_by(r) - sent_before[std::size_t(r)]));
    point.wrong = collectives::count_wrong(op, buffers.recv, buffers.count, hardware_threads);
  }
};

// Per-rank GB/s of the best sample: ranks 0..copying-1 each copy `bytes` at once, woken like the collective's ranks.
double probe_gbps(State& state, const collectives::RankBuffers& buffers, std::int64_t bytes, collectives::CopyKind kind,
                  int copying, int repeats, const RunControl& control) {
  int calls = 0;
  const TimingStats t = time_calls([&] { collectives::copy_on_ranks(*state.comm, buffers, bytes, kind, copying); },
                                   repeats, control, calls);
  return t.min_us > 0 ? double(bytes) / (t.min_us * 1e3) : 0.0;
}

}  // namespace

std::int64_t cpu_bench_bytes(const BenchConfig& config, int /*hardware_threads*/) {
  // The probe copies within the ranks' own buffers: nothing beyond them and the links.
  return 2 * config.n_ranks * config.max_bytes +
         collectives::Communicator::link_bytes(config.n_ranks, comm_options(config));
}

TimingStats time_calls(const std::function<void()>& call, int repeats, const RunControl& control, int& calls_per_sample,
                       const CallTimer& timer) {
  return measure_batched(
      [&](int calls) {
        return time_call_us(timer, [&] {
          for (int i = 0; i < calls; ++i) call();
        });
      },
      timed_samples(repeats), [&] { control.check_cancelled(); }, calls_per_sample, timer.name);
}

Bench make_cpu_bench(const BenchConfig& config, MemoryLedger& ledger, const RunControl& control) {
  const int n = config.n_ranks;
  const int hardware_threads = describe_cpu().threads;
  const std::int64_t max_count = config.max_bytes / 4;

  // Shared between the Bench's copies of the closure: the buffers and the communicator.
  auto state = std::make_shared<State>();
  for (int r = 0; r < n; ++r) {
    state->send.emplace_back(ledger, "send buffers", max_count);
    state->recv.emplace_back(ledger, "recv buffers", max_count);
    collectives::fill_inputs(state->send.back().data(), r, max_count, hardware_threads);
  }
  state->comm = std::make_unique<collectives::Communicator>(n, ledger, comm_options(config));

  Bench bench;
  bench.emulated = true;
  bench.hardware_threads = hardware_threads;
  if (n > hardware_threads)
    bench.notes.push_back(fmt::format("{} ranks time-share {} hardware threads", n, hardware_threads));
  bench.notes.push_back(
      fmt::format("ranks are threads of one process; a link is a channel of {} slots of {}; waiting ranks {}",
                  comm_options(config).slots_per_channel, format_bytes_binary(double(config.segment_bytes)),
                  state->comm->polls() ? "spin while spinning pays, then yield their core, then sleep"
                                       : "yield their core, then sleep (they share cores)"));

  const collectives::Algorithm algorithm = lab_algorithm(config.algo).value_or(collectives::Algorithm::Ring);
  bench.measure = [state, config, algorithm, n, hardware_threads, &control](std::int64_t bytes, bool detailed) {
    const collectives::RankBuffers buffers = state->buffers(bytes);
    const std::int64_t probe_bytes = probe_bytes_per_rank(config, bytes);
    const int repeats = probe_repeats(config);
    using collectives::CopyKind;
    auto probe = [&](CopyKind kind, int copying) {
      return probe_gbps(*state, buffers, probe_bytes, kind, copying, repeats, control);
    };
    // The ceiling's first probe, the collective, the second probe: a disturbance that lasts only part of the size's
    // measurement cannot lower the ceiling on both sides.
    double memcpy_all = probe(CopyKind::Memcpy, n);
    double stream_all = probe(CopyKind::Streaming, n);

    auto call = [&] { collectives::run_collective(*state->comm, config.op, algorithm, buffers); };
    SizePoint point;
    point.bytes = double(bytes);
    point.time = time_calls(call, config.repeats, control, point.calls_per_sample);

    memcpy_all = std::max(memcpy_all, probe(CopyKind::Memcpy, n));
    stream_all = std::max(stream_all, probe(CopyKind::Streaming, n));
    point.ceiling_gbps = std::max(memcpy_all, stream_all);
    if (detailed) {
      // One rank copying alone: how much of the ceiling the ranks lose to sharing the memory system and the cores.
      point.ceiling_figures = {{"memcpy_one_thread_gbps", probe(CopyKind::Memcpy, 1)},
                               {"stream_copy_one_thread_gbps", probe(CopyKind::Streaming, 1)},
                               {"memcpy_threads_gbps", memcpy_all * n},
                               {"stream_copy_threads_gbps", stream_all * n},
                               {"copy_threads", double(n)},
                               {"copy_probe_bytes", double(probe_bytes)}};
    }

    state->checked_call(call, config.op, buffers, hardware_threads, point);
    return point;
  };
  if (compares_algorithms(config))
    bench.measure_algorithm = [state, config, hardware_threads, &control](collectives::Algorithm compared,
                                                                          std::int64_t bytes) {
      const collectives::RankBuffers buffers = state->buffers(bytes);
      auto call = [&] { collectives::run_collective(*state->comm, collectives::Op::AllReduce, compared, buffers); };
      SizePoint point;
      point.bytes = double(bytes);
      point.time = time_calls(call, config.repeats, control, point.calls_per_sample);
      state->checked_call(call, collectives::Op::AllReduce, buffers, hardware_threads, point);
      return point;
    };
  return bench;
}

}  // namespace dlsys::allreduce
