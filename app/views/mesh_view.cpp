// Views of the mesh lesson: the mesh with its coordinates and groups, every rank's measured timeline, and the weights
// against one device's; the table from step to view.
#include "app/views/mesh_view.h"

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "engine/units.h"

namespace dlsys::gui::mesh_view {

namespace {

// A dp group's colour: the ranks at the same (t, p) in every replica.
ImU32 dp_group_color(const MeshTheory& t, const RankTheory& r) { return series_color(r.t + t.tp * r.p); }

// Black or white, whichever reads better on `fill`.
ImU32 text_on(ImU32 fill) {
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(fill);
  return 0.299f * c.x + 0.587f * c.y + 0.114f * c.z > 0.5f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

// Pipeline stages side by side, replicas one under another; a frame per tp group holding its ranks, each rank
// filled with its dp group's colour; an arrow from each stage's tp group to the next stage's.
void draw_mesh_figure(const MeshTheory& t, float height) {
  const float s = ui_scale();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float arrow_w = 36 * s;
  const float cell_w = (width - arrow_w * float(t.pp - 1)) / float(t.pp);
  const float cell_h = (height - line) / float(t.dp);
  for (int p = 0; p < t.pp; ++p) {
    const float x0 = o.x + float(p) * (cell_w + arrow_w);
    const std::string stage =
        fmt::format("stage p = {}: layers {}..{}", p, p * t.layers_per_stage, (p + 1) * t.layers_per_stage - 1);
    draw->AddText({x0, o.y}, text_color(), stage.c_str());
    for (int d = 0; d < t.dp; ++d) {
      const float y0 = o.y + line + float(d) * cell_h, y1 = y0 + cell_h - 8 * s;
      draw->AddRect({x0, y0}, {x0 + cell_w, y1}, highlight_color(), 4 * s, 0, 2 * s);
      const std::string group = fmt::format("replica d = {}: tp group", d);
      draw->AddText({x0 + 6 * s, y0 + 3 * s}, muted_text_color(), group.c_str());
      const float box_w = (cell_w - 12 * s) / float(t.tp), top = y0 + line + 4 * s, bottom = y1 - 6 * s;
      for (int tr = 0; tr < t.tp; ++tr) {
        const RankTheory& r = t.rank_costs[std::size_t(tr + t.tp * (d + t.dp * p))];
        const ImVec2 a{x0 + 6 * s + float(tr) * box_w, top}, b{a.x + box_w - 4 * s, bottom};
        const ImU32 fill = dp_group_color(t, r);
        draw->AddRectFilled(a, b, fill, 3 * s);
        const std::string name = fmt::format("rank {}", r.rank), coords = fmt::format("({},{},{})", r.d, r.t, r.p);
        const float mid = (a.y + b.y) / 2;
        for (const auto& [text, dy] : {std::pair{name, -line}, std::pair{coords, 0.0f}}) {
          const float tw = ImGui::CalcTextSize(text.c_str()).x;
          if (tw < b.x - a.x) draw->AddText({(a.x + b.x - tw) / 2, mid + dy}, text_on(fill), text.c_str());
        }
      }
      if (p + 1 < t.pp) {
        const float ya = (y0 + y1) / 2, xa = x0 + cell_w + 4 * s, xb = xa + arrow_w - 8 * s;
        draw->AddLine({xa, ya}, {xb, ya}, text_color(), 2 * s);
        draw->AddTriangleFilled({xb, ya}, {xb - 8 * s, ya - 5 * s}, {xb - 8 * s, ya + 5 * s}, text_color());
      }
    }
  }
  ImGui::Dummy({width, height});
}

}  // namespace

void draw_mesh(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MeshTheory& t = steps->theory;
  draw_color_key({{0, "a tp group: all-reduces on every layer", highlight_color()},
                  {series_color(0),
                   "fill: the rank's dp group (same t and p in every replica), all-reduces once a "
                   "step"},
                  {text_color(), "arrow: activations to the next stage, gradients back"}});
  begin_figure();
  draw_mesh_figure(t, main_figure_height());
  end_figure(fmt::format("the mesh, dp x tp x pp = {} x {} x {}", t.dp, t.tp, t.pp));
  draw_value_table(
      "mesh", {{"ranks", fmt::format("{} = {} x {} x {}", t.ranks, t.dp, t.tp, t.pp)},
               {"rank number", "t + tp (d + dp p): a tp group on adjacent ranks"},
               {"groups", fmt::format("{} tp groups of {}, {} dp groups of {}, {} pipelines of {}", t.dp * t.pp, t.tp,
                                      t.tp * t.pp, t.dp, t.dp * t.tp, t.pp)},
               {"each rank holds", fmt::format("{} of {} layers, {} of the 4h = {} hidden columns", t.layers_per_stage,
                                               t.layers, t.inner_per_rank, 4 * t.hidden)}});
}

namespace {

void span_tooltip(const Timeline& timeline, const TimelineHover& hover) {
  if (hover.timeline < 0 || hover.span < 0) return;
  const TimelineSpan& span = timeline.spans[std::size_t(hover.span)];
  ImGui::BeginTooltip();
  ImGui::Text("%s, %s: %.1f to %.1f %s (%.1f)", timeline.lanes[std::size_t(span.lane)].c_str(), span.label.c_str(),
              span.start, span.end, timeline.time_unit.c_str(), span.end - span.start);
  ImGui::EndTooltip();
}

}  // namespace

void draw_timeline(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MeshMeasured* m = measured_of(ctx);
  const bool measured = m != nullptr && !ctx.result->timelines.empty();
  const Timeline& timeline = measured ? ctx.result->timelines.front() : steps->simulated;
  if (!measured) draw_needs_run(ctx, "time every rank's ops; until then, the step simulated in cost units");
  span_tooltip(timeline,
               draw_timeline_alone(measured ? "mesh_measured" : "mesh_simulated", timeline, main_figure_height()));
  const MeshTheory& t = steps->theory;
  if (!measured) {
    draw_note(fmt::format("1F1B bubble (pp - 1) / (m + pp - 1) = {}: the hatched time at each stage's ends.",
                          percent_text(t.bubble_fraction)));
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const RankMeasured& r : m->rank_runs)
    rows.push_back({fmt::format("{} ({},{},{})", r.rank, r.d, r.t, r.p), format_duration_us(r.step_us),
                    format_duration_us(r.compute_us), format_duration_us(r.tp_us), format_duration_us(r.dp_us),
                    format_duration_us(r.step_us - r.compute_us - r.tp_us - r.dp_us)});
  draw_columns_table("mesh_times", {"rank (d,t,p)", "step", "compute", "tp all-reduce", "dp all-reduce", "waiting"},
                     rows);
  draw_note(fmt::format(
      "Step (makespan over the ranks): median {} of {} steps after the first, {} to {}. The all-reduces take {} of "
      "the ranks' time; waiting is the pipeline's bubble, messages not yet there and, with more ranks than cores, "
      "time without a core.",
      format_duration_us(m->step.us), m->losses.size() > 1 ? m->losses.size() - 1 : 1,
      format_duration_us(m->step.min_us), format_duration_us(m->step.max_us), percent_text(m->comm_share)));
}

void draw_check(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MeshMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "train the mesh and one device and compare their weights");
  const MeshTheory& t = steps->theory;
  draw_value_table("check",
                   {{"max |dW_mesh - dW_one| / max |dW_one|",
                     fmt::format("{} ({} the tolerance {})", short_number_text(m->update_max_rel_err),
                                 m->within_tolerance ? "below" : "NOT below", short_number_text(t.update_tolerance))},
                    {"loss, largest relative difference", short_number_text(m->loss_max_rel_err)},
                    {"dp replicas at the end", m->replicas_identical ? "bit-identical" : "DIFFERENT"}});
  PlotSpec spec{"Loss per step: the mesh and one device", {"step", ""}, {"loss", ""}, {}, {}};
  if (const Series* one = ctx.result->find_series("loss_one_device")) {
    PlotLine line = line_from_series(*one, theory_color());
    line.style = SeriesStyle::Line;
    spec.lines.push_back(std::move(line));
  }
  if (const Series* mesh = ctx.result->find_series("loss_mesh")) {
    PlotLine line = line_from_series(*mesh, series_color(0));
    line.marker = MarkerShape::Square;
    spec.lines.push_back(std::move(line));
  }
  spec.size = {0, plot_height_leaving(1)};
  draw_plot("mesh_loss", spec);
  draw_note(
      "The mesh adds the same products in another order (micro-batches, tp partial sums, the dp ring), so the "
      "updates agree to rounding, not bit for bit; dW is each weight's change over the run.");
}

}  // namespace dlsys::gui::mesh_view

namespace dlsys::gui {

const StepViews& mesh_step_views() {
  static const StepViews views{{"mesh", mesh_view::draw_mesh, StepShows::TheoryOnly},
                               {"timeline", mesh_view::draw_timeline},
                               {"bytes", mesh_view::draw_bytes},
                               {"memory", mesh_view::draw_memory},
                               {"check", mesh_view::draw_check},
                               {"planner", mesh_view::draw_planner, StepShows::TheoryOnly},
                               {"predicted", mesh_view::draw_predicted}};
  return views;
}

}  // namespace dlsys::gui
