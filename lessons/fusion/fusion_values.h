#pragma once
// The fusion lesson's typed values: memory traffic of y = ReLU(x + b) and of pointwise chains, unfused and fused
// (theory), and what one run measured (measured). `dlsys-lab run --json` writes them under "theory" and "measured"
// with the field names as keys.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::fusion {

struct FusionTheory {
  std::int64_t rows = 0, cols = 0;
  std::string bias;  // broadcast | full
  // y = ReLU(x + b) with the chosen bias, whole arrays: 4 B per memory operation that reaches main memory, a
  // broadcast bias read once.
  double bytes_unfused = 0, bytes_fused = 0;
  double byte_ratio = 0;  // bytes_unfused / bytes_fused
  int launches_unfused = 0, launches_fused = 0;
  int memory_ops_unfused = 0, memory_ops_fused = 0;  // per element, with the chosen bias
  // Per element, both biases: the course's 5 and 3 operations hold for a full-size bias (20 B against 12 B); its own
  // code broadcasts the bias, which then stays in cache (16 B against 8 B).
  double byte_ratio_broadcast = 0, byte_ratio_full = 0;
  // x.cos().cos(): global accesses per element, unfused and fused.
  int cos_accesses_unfused = 0, cos_accesses_fused = 0;
  std::vector<double> chain_lengths;                    // L
  std::vector<double> chain_bytes_per_element_unfused;  // 8 L
  double chain_bytes_per_element_fused = 0;             // 8
  double small_bytes = 0;                               // one array of the in-cache step
};
DLSYS_VALUES_JSON(FusionTheory, rows, cols, bias, bytes_unfused, bytes_fused, byte_ratio, launches_unfused,
                  launches_fused, memory_ops_unfused, memory_ops_fused, byte_ratio_broadcast, byte_ratio_full,
                  cos_accesses_unfused, cos_accesses_fused, chain_lengths, chain_bytes_per_element_unfused,
                  chain_bytes_per_element_fused, small_bytes)

// Medians with the fastest and slowest call, microseconds.
using Timing = TimeSpread;

// Each time below is written as three keys from its name: "cos_us", "cos_us_min", "cos_us_max".
using TimingField = SpreadUnitFirst;

struct ChainMeasure {
  int length = 0;
  TimingField unfused, fused;
};
DLSYS_VALUES_JSON(ChainMeasure, length, unfused, fused)

struct FusionMeasured {
  // y = ReLU(x + b) at rows x cols with the chosen bias.
  double unfused_us = 0, fused_us = 0;
  double speedup = 0;         // unfused_us / fused_us
  double effective_gbps = 0;  // bytes_fused / fused_us: the fused kernel's bandwidth
  double max_abs_err = 0;     // every output of the run against its double reference
  TimingField unfused, fused;
  // Both biases, for the byte ratios beside them.
  TimingField unfused_broadcast, fused_broadcast, unfused_full, fused_full;
  double speedup_broadcast = 0, speedup_full = 0;
  // The roofline lesson's measured bandwidth, taken in this run: STREAM copy on arrays of the same size.
  double stream_copy_gbps = 0;
  double effective_fraction_of_stream = 0;
  // x.cos().cos(), and GELU against ReLU.
  TimingField cos, cos_cos_unfused, cos_cos_fused, relu, gelu;
  double cos_cos_speedup = 0;   // unfused / fused
  double cos_cos_over_cos = 0;  // fused cos.cos / one cos
  double gelu_over_relu = 0;
  std::vector<ChainMeasure> chains;
  // The same y = ReLU(x + b) on arrays that fit in cache: time per call, and one call that only hands a single
  // element to the worker pool (what a call costs with no bytes to move).
  TimingField small_unfused, small_fused, dispatch;
  std::string dispatch_what;  // what that call is on this backend
  double small_speedup = 0;
  double error_tolerance = 0;
  int wrong = 0;
  FlagField speedup_bar_met;  // speedup within kSpeedupTolerance of the byte ratio
};

void to_json(nlohmann::ordered_json& json, const FusionMeasured& measured);
void from_json(const nlohmann::ordered_json& json, FusionMeasured& measured);

}  // namespace dlsys::fusion
