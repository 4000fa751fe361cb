#pragma once
// What the mesh lesson's views share: its step data and run as their types, and the draw function of each step
// (mesh_view.cpp: the mesh, the timeline, the check; mesh_costs_view.cpp: bytes and memory; mesh_planner_view.cpp: the
// planner and the run beside its prediction).
#include "app/views/view.h"
#include "lessons/mesh/mesh_steps.h"
#include "lessons/mesh/mesh_values.h"

namespace dlsys::gui::mesh_view {

using mesh_lesson::MeshMeasured;
using mesh_lesson::MeshSteps;
using mesh_lesson::MeshTheory;
using mesh_lesson::RankMeasured;
using mesh_lesson::RankTheory;

inline const MeshSteps* steps_of(const ViewContext& ctx) { return step_data_as<MeshSteps>(ctx); }
// The run's values, unless it was measured with other parameters than the panel's.
inline const MeshMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result && !ctx.result_stale ? ctx.result->measured_as<MeshMeasured>() : nullptr;
}

void draw_mesh(const ViewContext& ctx);
void draw_timeline(const ViewContext& ctx);
void draw_bytes(const ViewContext& ctx);
void draw_memory(const ViewContext& ctx);
void draw_check(const ViewContext& ctx);
void draw_planner(const ViewContext& ctx);
void draw_predicted(const ViewContext& ctx);

}  // namespace dlsys::gui::mesh_view
