#include "lessons/fusion/fusion_values.h"

namespace dlsys::fusion {

namespace {
// The documented keys open with the two medians; their fastest and slowest calls follow the error.
DLSYS_VALUES_PART(Medians, FusionMeasured, unfused_us, fused_us, speedup, effective_gbps, max_abs_err)
DLSYS_VALUES_PART(Rest, FusionMeasured, speedup_broadcast, speedup_full, stream_copy_gbps, effective_fraction_of_stream,
                  cos, cos_cos_unfused, cos_cos_fused, relu, gelu, cos_cos_speedup, cos_cos_over_cos, gelu_over_relu,
                  small_unfused, small_fused, dispatch, dispatch_what, small_speedup, error_tolerance, wrong,
                  speedup_bar_met,
                  // after the documented keys, so a recorded run can be drawn again: each bias's times, the chains'
                  unfused_broadcast, fused_broadcast, unfused_full, fused_full, chains)

void write_ends(nlohmann::ordered_json& j, const std::string& stem, const TimeSpread& t) {
  j[spread_key(stem, "min", SpreadKeys::UnitFirst)] = t.min_us;
  j[spread_key(stem, "max", SpreadKeys::UnitFirst)] = t.max_us;
}
}  // namespace

void to_json(nlohmann::ordered_json& j, const FusionMeasured& m) {
  j = nlohmann::ordered_json::object();
  Medians::write(j, m);
  write_ends(j, "unfused", m.unfused);
  write_ends(j, "fused", m.fused);
  Rest::write(j, m);
}

void from_json(const nlohmann::ordered_json& j, FusionMeasured& m) {
  Medians::read(j, m);
  read_key(j, "unfused", m.unfused);
  read_key(j, "fused", m.fused);
  Rest::read(j, m);
}

}  // namespace dlsys::fusion
