#pragma once
// The 3-D parallelism planner's result drawn (kernels/mesh/planner.h): every plan as memory per GPU against its
// estimated step time, the frontier, the GPU's memory and the best plan; the frontier's plans as stacked memory bars;
// the fastest plans as a table; the rules of thumb with their verdicts. Everything drawn is a field of the result.
#include <string>

#include "kernels/mesh/planner.h"

namespace dlsys::gui {

// Memory per GPU (log) against step time for every plan, those that do not fit pale; the frontier as a line, the
// GPU's memory as a guide, the best plan named, and plan `marked` (an index into result.plans, e.g. from
// mesh::find_plan: the mesh a lesson runs) named as `marked_name` when it is 0 or more. `height` 0: the step's main
// figure height.
void draw_planner_scatter(const mesh::PlannerResult& result, float height = 0, int marked = -1,
                          const std::string& marked_name = "");
// The frontier's plans, fastest first (at most mesh::kTopPlans), their memory per GPU stacked by kind against the
// GPU's memory, each named by its step time.
void draw_planner_frontier_memory(const mesh::PlannerResult& result, float height);
// The fastest plans that fit (#1 to #10, as the table numbers them): their step time stacked as compute, the bubble
// and the exposed tp, pp and dp communication.
void draw_planner_time_breakdown(const mesh::PlannerResult& result, float height);
// The fastest plans that fit: the mesh, step time, tokens per second, memory by kind, bubble, exposed communication
// and the bytes per link class.
void draw_planner_top_table(const mesh::PlannerResult& result);
// Each rule of thumb, its verdict and the two plans it was judged by.
void draw_planner_rules(const mesh::PlannerResult& result);
// All four, one under the other: the scatter as the main figure, the rest scrolling under it.
void draw_planner_figure(const mesh::PlannerResult& result);

}  // namespace dlsys::gui
