#pragma once
// How the allreduce lesson measures one message size on a backend: time per call, the wrong-element check, and the
// ceiling it compares bus bandwidth with. One implementation per backend (cpu_bench.cpp, gpu_bench.cpp).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "engine/measure.h"
#include "engine/run_control.h"
#include "kernels/collectives/op.h"
#include "lessons/allreduce/allreduce_params.h"

namespace dlsys::allreduce {

struct BenchConfig {
  collectives::Op op = collectives::Op::AllReduce;
  Algo algo = Algo::Ring;  // ring, naive or library (the crossbar ones on the CPU as well)
  int n_ranks = 1;
  std::int64_t max_bytes = 0;  // the largest size the run will ask for (buffers are made once, for it)
  std::int64_t segment_bytes = 0;
  int repeats = 5;
  std::vector<std::int64_t> message_bytes;  // every size the run measures: the sweep's, then the chosen one
};

struct SizePoint {
  double bytes = 0;
  TimingStats time;                 // per call
  std::int64_t wrong = 0;           // elements that differ from the reference after a checked call
  double bytes_sent_max_rank = -1;  // bytes the busiest rank copied into its links in one call (-1: not counted)
  int calls_per_sample = 1;         // small sizes are timed as batches of back-to-back calls
  double ceiling_gbps = 0;          // the copy ceiling at this size, measured in the same run
  std::vector<std::pair<std::string, double>> ceiling_figures;  // the measurements behind it, as JSON keys
};

// A backend's measurement: `measure(bytes, detailed)` for any size up to max_bytes, with the copy ceiling at that
// size (`detailed`: also the figures that explain it, which may cost extra probes).
struct Bench {
  std::function<SizePoint(std::int64_t bytes, bool detailed)> measure;
  bool emulated = false;
  std::string timer = "steady_clock";
  std::vector<std::string> notes;
  int hardware_threads = 0;  // CPU ranks: the threads they share (0 on GPUs)
  // The comparison of algorithms: time, #wrong and bytes counted for all-reduce with `algorithm`, without the copy
  // ceiling's probes (ceiling_gbps 0). Empty where the bench cannot run them (GPUs, N > kComparisonMaxRanks).
  std::function<SizePoint(collectives::Algorithm algorithm, std::int64_t bytes)> measure_algorithm;
};

// All-reduce over at most kComparisonMaxRanks CPU ranks gets a link between every pair, for the comparison of
// algorithms.
bool compares_algorithms(const BenchConfig& config);
// Host memory the CPU bench needs for `config`: send and recv buffers per rank, the links, the copy probe.
std::int64_t cpu_bench_bytes(const BenchConfig& config, int hardware_threads);
Bench make_cpu_bench(const BenchConfig& config, MemoryLedger& ledger, const RunControl& control);
// Throws BadInput for what the GPU bench cannot run (naive, NCCL missing) or what would not fit on the GPU or, for
// the check, on the host. The lesson calls it from `validate`, before anything is allocated.
void check_gpu_bench(const BenchConfig& config);
// Without CUDA in the build, the GPU bench's kernels are stubs that throw RunFailure.
Bench make_gpu_bench(const BenchConfig& config, const RunControl& control);

// Every size alike: one untimed warm-up sample, then `repeats` timed ones, stopping once they took 10 s.
inline MeasureOptions timed_samples(int repeats) { return {.warmup = 1, .repeats = repeats, .max_total_us = 10e6}; }

// Times `call` in batches of back-to-back calls (engine/measure.h's measure_batched) with `timer`: the stopwatch, or
// a rank group's (the slowest process's); returns per-call times.
TimingStats time_calls(const std::function<void()>& call, int repeats, const RunControl& control, int& calls_per_sample,
                       const CallTimer& timer = {});

}  // namespace dlsys::allreduce
