#pragma once
// What the precision steps draw before a run, from the layouts alone: each format's limits (exact), chosen values
// rounded into the chosen format with their bits, a weight that small updates never move in 16 bits, and the bytes
// of mixed-precision training.
#include <memory>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/step_data.h"
#include "lessons/precision/precision_params.h"

namespace dlsys::precision {

struct FormatLimit {
  std::string what;   // "largest finite"
  std::string power;  // "(2 - 2^-10) x 2^15"
  std::string exact;  // "65504"
  std::string bits;   // "0 11110 1111111111"
  std::string hex;    // "0x7bff"
};

struct FormatCard {
  std::string name;
  int exponent_bits = 0, mantissa_bits = 0, bias = 0;
  bool chosen = false;
  std::vector<FormatLimit> limits;
};

struct RoundingRow {
  std::string input;    // as typed
  std::string why;      // what the value shows
  std::string rounded;  // exact decimal of the result
  std::string bits, hex;
  std::string relative_error;  // "4.9e-4" or "-" when exact
  std::string note;            // "tie: to even", "subnormal", "flushed to 0", "overflow: inf"
};

struct MemoryRow {
  std::string what;
  int bytes_per_parameter = 0;
};

struct PrecisionSteps final : StepData {
  std::string chosen_format;
  std::vector<FormatCard> cards;  // the chosen format's first, then the other two
  std::vector<RoundingRow> rounding;
  // A weight of 1 given `update_count` updates of `update` each: kept in 16 bits it never moves; an fp32 master copy
  // does, and its 16-bit copy follows in steps of the format's spacing.
  double update = 0;
  int update_count = 0;
  std::vector<Series> update_series;  // ids: fp16_weight, bf16_weight, fp32_master, fp16_copy_of_master
  double fp16_after = 0, bf16_after = 0, master_after = 0, fp16_copy_after = 0;
  // Mixed-precision Adam's model states, and the same with everything in fp32.
  std::vector<MemoryRow> mixed_bytes, fp32_bytes;
  std::int64_t mlp_parameters = 0;
  double seven_b_parameters = 7e9;
  int allreduce_ranks = 8;
  double allreduce_fp32_bytes = 0, allreduce_16bit_bytes = 0;  // per rank per step, 7B gradients
  // fp16's thresholds for the gradient histogram, as log2 of the value.
  double fp16_flush_log2 = -25, fp16_min_subnormal_log2 = -24, fp16_min_normal_log2 = -14, fp16_max_log2 = 0;
};

std::shared_ptr<const PrecisionSteps> make_precision_steps(const PrecisionParams& params);

}  // namespace dlsys::precision
