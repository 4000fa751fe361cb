#pragma once
// The all-reduce lesson's typed values: the collective's cost at the chosen size and what one run measured.
// `dlsys-lab run --json` writes them under "theory" and "measured" with these field names as keys.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::allreduce {

struct AllreduceTheory {
  int steps = 0;                   // on the critical path: 2(N-1) for the ring all-reduce
  double bytes_sent_per_rank = 0;  // the busiest rank's
  double busbw_factor = 0;         // busbw = algbw x this (nccl-tests)
  double model_bytes = 0;          // bytes the alpha-beta model charges at 1/beta
  double count = 0;                // float32 elements in the message
  double chunk_bytes = 0;          // S / N
};

struct AlphaBeta {
  double alpha_us = 0;   // per step: the latency term
  double beta_gbps = 0;  // per link: the bandwidth term
  // The two terms of the model at the chosen size S: steps x alpha, and model bytes / beta.
  double alpha_term_us = 0;
  double beta_term_us = 0;
};

// One measured size, as a row of nccl-tests' table.
struct SweepRow {
  double bytes = 0;
  double count = 0;  // float32 elements
  double time_us = 0, time_min_us = 0, time_max_us = 0;
  double algbw_gbps = 0, busbw_gbps = 0;
  double ceiling_gbps = 0;  // the copy ceiling measured at this size in the same run
  std::int64_t wrong = 0;
  bool above_ceiling = false;  // the median busbw beat the ceiling's best sample (a caveat says why)
};

// One algorithm of the comparison: its closed forms at N and the largest swept size, and its own sweep and fit.
struct AlgorithmRun {
  std::string algo;  // ring, naive, recursive_doubling, rabenseifner, direct
  int steps = 0;     // closed form
  int messages_sent = 0;
  double bytes_sent_per_rank = 0;   // closed form, the busiest rank, at the largest swept size
  double bytes_sent_counted = -1;   // counted by the links in the checked call at that size (-1: none)
  NullableField<double> alpha_us;   // its own alpha-beta fit over its sweep
  NullableField<double> beta_gbps;  // (none when the fit is degenerate)
  std::int64_t wrong = 0;           // wrong elements over its sweep
  std::vector<SweepRow> sweep;      // no copy ceiling: ceiling_gbps 0
};

// Every algorithm at the sweep's sizes, and where the ring overtakes recursive doubling.
struct AlgorithmComparison {
  std::vector<AlgorithmRun> algorithms;
  // S* where ring and recursive doubling take the same alpha-beta time, with the ring's fitted alpha and beta.
  NullableField<double> crossover_predicted_bytes;
  NullableField<double> crossover_measured_bytes;  // the first swept size from which on the ring was faster
  std::string crossover_sentence;                  // both, in one plain sentence
};

struct AllreduceMeasured {
  double time_us = 0, time_min_us = 0, time_max_us = 0;  // one call at the chosen size
  double algbw_gbps = 0, busbw_gbps = 0;
  std::int64_t wrong = 0;   // elements that differ from the reference at the chosen size
  double ceiling_gbps = 0;  // the copy ceiling measured at the chosen size in the same run
  double busbw_fraction_of_ceiling = 0;
  std::optional<AlphaBeta> fit;               // none when the times do not grow with the bytes sent
  std::int64_t sweep_wrong = 0;               // wrong elements over the whole sweep
  std::optional<double> bytes_sent_max_rank;  // counted by the implementation, where it counts
  int calls_per_sample = 0;
  std::vector<std::pair<std::string, double>> ceiling_figures;  // the measurements behind the ceiling at S
  std::vector<SweepRow> sweep;                                  // every swept size
  int hardware_threads = 0;                                     // of the machine the ranks ran on
  bool oversubscribed = false;                                  // more ranks than hardware threads
  // Plain sentences the measured step shows beside its numbers: what disturbed the run or qualifies a point.
  std::vector<std::string> caveats;
  NullableField<AlgorithmComparison> comparison;  // all-reduce on CPU ranks, N <= kComparisonMaxRanks
  std::string comparison_skipped;                 // why there is none, in one sentence
};

// The comparison needs a link between every pair of ranks: N(N-1) links, bounded here.
inline constexpr int kComparisonMaxRanks = 8;

DLSYS_VALUES_JSON(AllreduceTheory, steps, bytes_sent_per_rank, busbw_factor, model_bytes, count, chunk_bytes)
DLSYS_VALUES_JSON(SweepRow, bytes, count, time_us, time_min_us, time_max_us, algbw_gbps, busbw_gbps, ceiling_gbps,
                  wrong, above_ceiling)
DLSYS_VALUES_JSON(AlgorithmRun, algo, steps, messages_sent, bytes_sent_per_rank, bytes_sent_counted, alpha_us,
                  beta_gbps, wrong, sweep)
// The view sizes its plot from the first algorithm's sweep.
inline void check_comparison(const AlgorithmComparison& c) { check_not_empty("algorithms", c.algorithms.size()); }
DLSYS_VALUES_TO_JSON(AlgorithmComparison, algorithms, crossover_predicted_bytes, crossover_measured_bytes,
                     crossover_sentence)
DLSYS_VALUES_FROM_JSON_CHECKED(AlgorithmComparison, check_comparison, algorithms, crossover_predicted_bytes,
                               crossover_measured_bytes, crossover_sentence)
void to_json(nlohmann::ordered_json& json, const AllreduceMeasured& measured);
void from_json(const nlohmann::ordered_json& json, AllreduceMeasured& measured);

}  // namespace dlsys::allreduce
