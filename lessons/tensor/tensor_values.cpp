#include "lessons/tensor/tensor_values.h"

#include "engine/json_read.h"

namespace dlsys::tensor {

namespace {
DLSYS_VALUES_PART(Timings, TensorMeasured, placement, on_gpu, compute_us, compute_us_min, compute_us_max, comm_us,
                  comm_us_min, comm_us_max, step_us, step_us_min, step_us_max, compute_cpu_us, comm_bytes,
                  comm_bytes_match_formula, max_rel_err)
// Between them each tensor's error as "max_rel_err_<key>"; the errors again whole after the documented keys, each
// tensor's name beside its key, so a recorded run labels its rows the same way.
DLSYS_VALUES_PART(Checks, TensorMeasured, activation_bytes_measured, activation_bytes_match_formula, collectives,
                  timed_steps, compute_ratio_t2_over_t1, compute_cpu_ratio_t2_over_t1, compute_ratio_bar,
                  meets_compute_bar, at_bar_sizes, max_rel_err_bar, meets_error_bar, errors, gpu_scaling_caveat)
}  // namespace

// The course example (example = course) is written alone.
void to_json(nlohmann::ordered_json& j, const TensorMeasured& m) {
  if (m.example) {
    j = *m.example;
    return;
  }
  Timings::write(j, m);
  for (const MeasuredError& e : m.errors) j["max_rel_err_" + e.key] = e.max_rel_err;
  Checks::write(j, m);
}

void from_json(const nlohmann::ordered_json& j, TensorMeasured& m) {
  m = TensorMeasured{};
  if (j.is_object() && j.contains("y")) {
    read_value(j, m.example.emplace());
    return;
  }
  Timings::read(j, m);
  Checks::read(j, m);
}

}  // namespace dlsys::tensor
