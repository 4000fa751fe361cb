#pragma once
// The live decoder generating the same tokens twice, with its KV cache and recomputing every K and V, timed at every
// position and, many times over, at the last token alone.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/measure.h"
#include "kernels/decoder/decoder.h"
#include "lessons/common/run_plan.h"

namespace dlsys::kvcache {

// The last token's step is cheap to repeat; more samples make the speed-up's median steady on a busy machine.
inline constexpr int kLastStepRepeats = 15;
// The last token's step is timed this many times in a run of `repeats`.
inline int last_step_repeats(int repeats) { return std::max(repeats, kLastStepRepeats); }
// Positions generated untimed on both paths before the timed repeats.
inline constexpr std::int64_t kLiveWarmupTokens = 16;

struct LiveDecodeTimes {
  std::vector<TimingStats> cached_per_position, recompute_per_position;  // one generation per repeat
  TimingStats last_cached, last_recompute;  // the step that generated the last token, on its own
  int last_step_repeats = 0;
  bool tokens_match = false;      // the same greedy tokens both ways
  double max_abs_logit_diff = 0;  // over the first generation: fp32 rounding only
};

// The weight of run_live_decode's parts together, in generations (both paths of one repeat weigh 1).
double live_decode_weight(std::int64_t tokens, int repeats);

// Allocates the weights and both decoders on `ledger` (the KV cache under the tag "kv"); its parts, of
// live_decode_weight in all, go to `plan`.
LiveDecodeTimes run_live_decode(const decoder::Shape& shape, std::int64_t tokens, int repeats, MemoryLedger& ledger,
                                RunPlan& plan);

}  // namespace dlsys::kvcache
