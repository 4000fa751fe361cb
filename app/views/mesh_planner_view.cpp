// Views of the mesh lesson's planner: every way to train a real model on a cluster, and the run beside the planner's
// prediction for its own mesh.
#include <fmt/format.h>

#include <algorithm>

#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/mesh_planner_figure.h"
#include "app/views/mesh_view.h"
#include "engine/units.h"
#include "lessons/mesh/mesh_planner.h"

namespace dlsys::gui::mesh_view {

void draw_planner(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const mesh_lesson::PlannerTheory& t = steps->theory.planner;
  draw_heading(fmt::format("{} ({}B parameters) on {} GPUs; {} sequences of {} tokens a step", t.model,
                           format_number(t.parameters / 1e9, 3), t.gpus, t.global_batch, t.seq));
  draw_planner_figure(steps->planner);
}

void draw_predicted(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MeshMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "train the mesh and set it beside the planner's prediction");
  const mesh_lesson::RunPrediction& pr = m->prediction;
  const auto bytes_pair = [](double planner, std::int64_t measured) {
    return std::vector<std::string>{fmt::format("{:.0f}", planner), std::to_string(measured),
                                    double(measured) == planner ? "equal" : "DIFFERENT"};
  };
  const auto row = [](const char* what, std::vector<std::string> cells) {
    cells.insert(cells.begin(), what);
    return cells;
  };
  std::vector<Bar> bars{{"planner: compute, bubble", pr.step_us - pr.exposed_comm_us, series_color(0),
                         format_duration_us(pr.step_us - pr.exposed_comm_us)},
                        {"planner: + exposed comm.", pr.step_us, series_color(1), format_duration_us(pr.step_us)},
                        {"measured (median)", m->step.us, theory_color(),
                         fmt::format("{}: {} x the estimate", format_duration_us(m->step.us),
                                     format_number(m->step_over_prediction, 3))}};
  draw_bars(bars, {.full_scale = std::max(pr.step_us, m->step.us),
                   .title = "step time: the planner's estimate and the run",
                   .height = main_figure_height()});
  draw_columns_table("mesh_predicted", {"per rank and step", "planner", "measured", ""},
                     {row("tp bytes sent (busiest rank)", bytes_pair(pr.tp_bytes, m->busiest_tp_bytes)),
                      row("pipeline bytes sent (busiest rank)", bytes_pair(pr.pp_bytes, m->busiest_pp_bytes)),
                      row("dp bytes sent (busiest rank)", bytes_pair(pr.dp_bytes, m->busiest_dp_bytes)),
                      row("weights (largest shard)", bytes_pair(pr.weight_bytes, m->largest_weight_bytes)),
                      row("bubble (p - 1) / (m + p - 1)", {percent_text(pr.bubble), "see the timeline", ""})});
  draw_note(mesh_lesson::prediction_inputs_text(pr, steps->theory.ranks));
}

}  // namespace dlsys::gui::mesh_view
