#include "lessons/pipeline_common/pipeline_values.h"

#include "engine/json_read.h"

namespace dlsys::pipeline_lesson {

namespace {
template <class T>
void put_if(nlohmann::ordered_json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}
}  // namespace

void to_json(nlohmann::ordered_json& j, const ScheduleComparison& e) {
  j["schedule"] = e.schedule;
  j["title"] = e.title;
  j["available"] = e.available;
  if (!e.available) {
    j["why"] = e.why;
    return;
  }
  j["devices"] = e.devices;
  j["stages"] = e.stages;
  j["chunk"] = e.chunk;
  j["param_copies"] = e.param_copies;
  j["formula"] = e.formula;
  j["formula_source"] = e.formula_source;
  j["bubble_formula"] = e.bubble_formula;
  j["bubble_simulated"] = e.bubble_simulated;
  put_if(j, "bubble_fraction_formula", e.bubble_fraction_formula);
  j["bubble_fraction_simulated"] = e.bubble_fraction_simulated;
  put_if(j, "bubble_ratio_formula", e.bubble_ratio_formula);
  j["bubble_ratio_simulated"] = e.bubble_ratio_simulated;
  j["makespan"] = e.makespan;
  j["stage_fb"] = e.stage_fb;
  j["bubble_stage_fb_formula"] = e.bubble_stage_fb_formula;
  j["bubble_stage_fb_simulated"] = e.bubble_stage_fb_simulated;
  j["peak_inflight"] = e.peak_inflight;
  j["peak_activation_stage_units"] = e.peak_activation_stage_units;
}

void to_json(nlohmann::ordered_json& j, const PipelineTheory& t) {
  j["schedule"] = t.schedule;
  j["stages"] = t.stages;
  j["chunks_per_device"] = t.chunks_per_device;
  j["param_copies"] = t.param_copies;
  j["f"] = t.f;
  j["b_input"] = t.b_input;
  j["b_full"] = t.b_full;
  j["w"] = t.w;
  j["fb"] = t.fb;
  j["bubble_fraction"] = t.bubble_fraction;
  j["bubble_ratio"] = t.bubble_ratio;
  j["makespan"] = t.makespan;
  j["ideal_time"] = t.ideal_time;
  j["bubble_time_worst_device"] = t.bubble_time_worst_device;
  j["notation"] = t.notation;
  j["formula"] = t.formula;
  j["formula_source"] = t.formula_source;
  j["bubble_time_formula"] = t.bubble_time_formula;
  put_if(j, "bubble_fraction_formula", t.bubble_fraction_formula);
  put_if(j, "bubble_ratio_formula", t.bubble_ratio_formula);
  j["fill_drain_idle_fraction"] = t.fill_drain_idle_fraction;
  j["megatron_bubble_ratio"] = t.megatron_bubble_ratio;
  j["course_misprint"] = t.course_misprint;
  j["peak_inflight"] = t.peak_inflight;
  j["comparison"] = t.comparison;
}

void to_json(nlohmann::ordered_json& j, const PipelineMeasured& m) {
  j["mode"] = m.mode;
  j["hardware_threads"] = m.hardware_threads;
  put_if(j, "gpus", m.gpus);
  j["bubble_fraction"] = m.bubble_fraction;
  j["bubble_ratio"] = m.bubble_ratio;
  j["makespan_us"] = m.makespan_us;
  j["makespan_min_us"] = m.makespan_min_us;
  j["makespan_max_us"] = m.makespan_max_us;
  j["bubble_fraction_min"] = m.bubble_fraction_min;
  j["bubble_fraction_max"] = m.bubble_fraction_max;
  j["peak_activation_bytes"] = m.peak_activation_bytes;
  j["peak_inflight"] = m.peak_inflight;
  j["grad_max_rel_err"] = m.grad_max_rel_err;
  j["f_us"] = m.f_us;
  put_if(j, "b_us", m.b_us);
  put_if(j, "b_full_us", m.b_full_us);
  put_if(j, "w_us", m.w_us);
  j["copy_us"] = m.copy_us;
  put_if(j, "core_share", m.core_share);
  j["replay_bubble_fraction"] = m.replay_bubble_fraction;
  j["replay_makespan_us"] = m.replay_makespan_us;
  j["bubble_fraction_minus_theory"] = m.bubble_fraction_minus_theory;
  put_if(j, "bubble_gap_waiting", m.bubble_gap_waiting);
  j["bubble_gap_uneven_op_times"] = m.bubble_gap_uneven_op_times;
  put_if(j, "serial_caveat", m.serial_caveat);
}

void from_json(const nlohmann::ordered_json& j, ScheduleComparison& e) {
  read_key(j, "schedule", e.schedule);
  read_key(j, "title", e.title);
  read_key(j, "available", e.available);
  if (!e.available) {
    read_key(j, "why", e.why);
    return;
  }
  read_key(j, "devices", e.devices);
  read_key(j, "stages", e.stages);
  read_key(j, "chunk", e.chunk);
  read_key(j, "param_copies", e.param_copies);
  read_key(j, "formula", e.formula);
  read_key(j, "formula_source", e.formula_source);
  read_key(j, "bubble_formula", e.bubble_formula);
  read_key(j, "bubble_simulated", e.bubble_simulated);
  read_key_if_present(j, "bubble_fraction_formula", e.bubble_fraction_formula);
  read_key(j, "bubble_fraction_simulated", e.bubble_fraction_simulated);
  read_key_if_present(j, "bubble_ratio_formula", e.bubble_ratio_formula);
  read_key(j, "bubble_ratio_simulated", e.bubble_ratio_simulated);
  read_key(j, "makespan", e.makespan);
  read_key(j, "stage_fb", e.stage_fb);
  read_key(j, "bubble_stage_fb_formula", e.bubble_stage_fb_formula);
  read_key(j, "bubble_stage_fb_simulated", e.bubble_stage_fb_simulated);
  read_key(j, "peak_inflight", e.peak_inflight);
  read_key(j, "peak_activation_stage_units", e.peak_activation_stage_units);
}

void from_json(const nlohmann::ordered_json& j, PipelineTheory& t) {
  read_key(j, "schedule", t.schedule);
  read_key(j, "stages", t.stages);
  read_key(j, "chunks_per_device", t.chunks_per_device);
  read_key(j, "param_copies", t.param_copies);
  read_key(j, "f", t.f);
  read_key(j, "b_input", t.b_input);
  read_key(j, "b_full", t.b_full);
  read_key(j, "w", t.w);
  read_key(j, "fb", t.fb);
  read_key(j, "bubble_fraction", t.bubble_fraction);
  read_key(j, "bubble_ratio", t.bubble_ratio);
  read_key(j, "makespan", t.makespan);
  read_key(j, "ideal_time", t.ideal_time);
  read_key(j, "bubble_time_worst_device", t.bubble_time_worst_device);
  read_key(j, "notation", t.notation);
  read_key(j, "formula", t.formula);
  read_key(j, "formula_source", t.formula_source);
  read_key(j, "bubble_time_formula", t.bubble_time_formula);
  read_key_if_present(j, "bubble_fraction_formula", t.bubble_fraction_formula);
  read_key_if_present(j, "bubble_ratio_formula", t.bubble_ratio_formula);
  read_key(j, "fill_drain_idle_fraction", t.fill_drain_idle_fraction);
  read_key(j, "megatron_bubble_ratio", t.megatron_bubble_ratio);
  read_key(j, "course_misprint", t.course_misprint);
  read_key(j, "peak_inflight", t.peak_inflight);
  read_key(j, "comparison", t.comparison);
}

void from_json(const nlohmann::ordered_json& j, PipelineMeasured& m) {
  read_key(j, "mode", m.mode);
  read_key(j, "hardware_threads", m.hardware_threads);
  read_key_if_present(j, "gpus", m.gpus);
  read_key(j, "bubble_fraction", m.bubble_fraction);
  read_key(j, "bubble_ratio", m.bubble_ratio);
  read_key(j, "makespan_us", m.makespan_us);
  read_key(j, "makespan_min_us", m.makespan_min_us);
  read_key(j, "makespan_max_us", m.makespan_max_us);
  read_key(j, "bubble_fraction_min", m.bubble_fraction_min);
  read_key(j, "bubble_fraction_max", m.bubble_fraction_max);
  read_key(j, "peak_activation_bytes", m.peak_activation_bytes);
  read_key(j, "peak_inflight", m.peak_inflight);
  read_key(j, "grad_max_rel_err", m.grad_max_rel_err);
  read_key(j, "f_us", m.f_us);
  read_key_if_present(j, "b_us", m.b_us);
  read_key_if_present(j, "b_full_us", m.b_full_us);
  read_key_if_present(j, "w_us", m.w_us);
  read_key(j, "copy_us", m.copy_us);
  read_key_if_present(j, "core_share", m.core_share);
  read_key(j, "replay_bubble_fraction", m.replay_bubble_fraction);
  read_key(j, "replay_makespan_us", m.replay_makespan_us);
  read_key(j, "bubble_fraction_minus_theory", m.bubble_fraction_minus_theory);
  read_key_if_present(j, "bubble_gap_waiting", m.bubble_gap_waiting);
  read_key(j, "bubble_gap_uneven_op_times", m.bubble_gap_uneven_op_times);
  read_key_if_present(j, "serial_caveat", m.serial_caveat);  // absent from runs recorded before it existed
}

}  // namespace dlsys::pipeline_lesson
