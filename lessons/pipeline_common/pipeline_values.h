#pragma once
// The pipeline lessons' typed values (bubble and schedules): the chosen schedule's closed forms and simulated step,
// the comparison across schedules, and what one real step measured. `dlsys-lab run --json` writes them under
// "theory" and "measured" with these field names as keys, in this order.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::pipeline_lesson {

// One schedule with the same p, m and per-chunk costs (bubble times in cost units).
struct ScheduleComparison {
  std::string schedule, title;
  bool available = false;
  std::string why;  // why not, when not available (and then nothing below is set)
  int devices = 0, stages = 0;
  std::string chunk;  // the share of the model in one chunk, "1/4"
  int param_copies = 0;
  std::string formula, formula_source;
  double bubble_formula = 0, bubble_simulated = 0;
  std::optional<double> bubble_fraction_formula;  // where the published table gives a makespan
  double bubble_fraction_simulated = 0;
  std::optional<double> bubble_ratio_formula;
  double bubble_ratio_simulated = 0;
  double makespan = 0;
  // The bubble in units of one full-stage F + B (1/p of the model: stages / devices chunks), so that schedules whose
  // chunks are smaller (interleaved, DualPipeV) compare with the others: 1F1B p - 1, interleaved (p - 1)/v.
  double stage_fb = 0;  // F + B of a full stage, in cost units
  double bubble_stage_fb_formula = 0, bubble_stage_fb_simulated = 0;
  int peak_inflight = 0;                   // stashed (micro-batch, chunk) pairs on the fullest device
  double peak_activation_stage_units = 0;  // the same in micro-batches through 1/p of the model
};

struct PipelineTheory {
  std::string schedule;
  int stages = 0, chunks_per_device = 0, param_copies = 0;
  double f = 0, b_input = 0, b_full = 0, w = 0, fb = 0;  // costs: b_input is the ZB paper's B, b_full DeepSeek-V3's
  double bubble_fraction = 0;                            // idle / (p x makespan), from the simulated timeline
  double bubble_ratio = 0;  // bubble time over ideal compute time (Megatron-LM's normalisation)
  double makespan = 0, ideal_time = 0, bubble_time_worst_device = 0;
  std::string notation;  // full | input: what b means in the parameters
  std::string formula, formula_source;
  double bubble_time_formula = 0;
  std::optional<double> bubble_fraction_formula, bubble_ratio_formula;
  double fill_drain_idle_fraction = 0, megatron_bubble_ratio = 0;
  double course_misprint = 0;      // the course's misprinted formula at this p and m (errata E1)
  std::vector<int> peak_inflight;  // per device
  std::vector<ScheduleComparison> comparison;
};

struct PipelineMeasured {
  std::string mode;  // concurrent | emulated | replayed
  int hardware_threads = 0;
  std::optional<int> gpus;  // on the CUDA backend
  double bubble_fraction = 0, bubble_ratio = 0;
  double makespan_us = 0, makespan_min_us = 0, makespan_max_us = 0;
  double bubble_fraction_min = 0, bubble_fraction_max = 0;
  std::vector<std::int64_t> peak_activation_bytes;  // per device, from the memory ledger
  std::vector<int> peak_inflight;
  double grad_max_rel_err = 0;
  double f_us = 0;  // median op times
  std::optional<double> b_us, b_full_us, w_us;
  double copy_us = 0;
  std::optional<double> core_share;  // concurrent on the CPU: the share of a core the stage threads got
  double replay_bubble_fraction = 0, replay_makespan_us = 0;  // the same op times replayed with no waiting
  double bubble_fraction_minus_theory = 0;
  // The gap to theory in two parts (they add up to bubble_fraction_minus_theory): waiting overheads = measured -
  // replay (absent when replayed: the replay is the measurement), uneven op times = replay - theory.
  std::optional<double> bubble_gap_waiting;
  double bubble_gap_uneven_op_times = 0;
  // On a GPU, when the measured idle share sits at (p - 1)/p, what p devices taking turns give: the stages did not
  // run side by side, and the view says why in this sentence.
  std::optional<std::string> serial_caveat;
};

void to_json(nlohmann::ordered_json& json, const ScheduleComparison& entry);
void from_json(const nlohmann::ordered_json& json, ScheduleComparison& entry);

DLSYS_VALUES_JSON(PipelineTheory, schedule, stages, chunks_per_device, param_copies, f, b_input, b_full, w, fb,
                  bubble_fraction, bubble_ratio, makespan, ideal_time, bubble_time_worst_device, notation, formula,
                  formula_source, bubble_time_formula, bubble_fraction_formula, bubble_ratio_formula,
                  fill_drain_idle_fraction, megatron_bubble_ratio, course_misprint, peak_inflight, comparison)
DLSYS_VALUES_JSON(PipelineMeasured, mode, hardware_threads, gpus, bubble_fraction, bubble_ratio, makespan_us,
                  makespan_min_us, makespan_max_us, bubble_fraction_min, bubble_fraction_max, peak_activation_bytes,
                  peak_inflight, grad_max_rel_err, f_us, b_us, b_full_us, w_us, copy_us, core_share,
                  replay_bubble_fraction, replay_makespan_us, bubble_fraction_minus_theory, bubble_gap_waiting,
                  bubble_gap_uneven_op_times, serial_caveat)

}  // namespace dlsys::pipeline_lesson
