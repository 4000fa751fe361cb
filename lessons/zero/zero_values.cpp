#include "lessons/zero/zero_values.h"

namespace dlsys::zero_lesson {

namespace {
// Each rank's own bytes stay in the struct (the view's table); the JSON says whether they agree, between the
// documented keys, and lists them after those (what a recorded run's table shows per rank).
DLSYS_VALUES_PART(StageHead, StageMeasured, stage, peak_bytes_per_rank)
DLSYS_VALUES_PART(StageRest, StageMeasured, model_state_bytes_formula, model_states_match_formula, comm_bytes,
                  comm_elements, ring_comm_elements_formula, comm_matches_formula, max_rel_err_vs_stage0,
                  bit_identical_to_stage0, step_us, step_us_min, step_us_max, losses, collectives_per_step,
                  peak_by_rank)

bool ranks_hold_equal_bytes(const StageMeasured& s) {
  bool equal = true;
  for (const PeakBytes& p : s.peak_by_rank)
    equal &= p.model_states == s.peak_bytes_per_rank.model_states && p.total == s.peak_bytes_per_rank.total;
  return equal;
}
}  // namespace

void to_json(nlohmann::ordered_json& j, const StageMeasured& s) {
  StageHead::write(j, s);
  j["ranks_hold_equal_bytes"] = ranks_hold_equal_bytes(s);
  StageRest::write(j, s);
}

void from_json(const nlohmann::ordered_json& j, StageMeasured& s) {
  StageHead::read(j, s);
  StageRest::read(j, s);  // ranks_hold_equal_bytes follows from peak_by_rank
}

}  // namespace dlsys::zero_lesson
