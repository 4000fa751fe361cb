// The planner's figure (see mesh_planner_figure.h).
#include "app/views/mesh_planner_figure.h"

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/stacked_bars.h"
#include "app/views/view.h"
#include "engine/units.h"

namespace dlsys::gui {

namespace {

const mesh::Plan* best_of(const mesh::PlannerResult& r) { return r.best >= 0 ? &r.plans[r.best] : nullptr; }

SeriesPoint point_of(const mesh::Plan& p) {
  const double gb = p.memory.total() / 1e9;
  return {p.step_s, gb, gb, gb};
}

std::string seconds_text(double s) {
  if (s < 1e-3) return fmt::format("{} us", format_number(s * 1e6, 3));
  if (s < 1) return fmt::format("{} ms", format_number(s * 1e3, 3));
  return fmt::format("{} s", format_number(s, 3));
}

std::string rate_text(double per_s) {
  if (per_s >= 1e6) return fmt::format("{} M", format_number(per_s / 1e6, 4));
  if (per_s >= 1e3) return fmt::format("{} k", format_number(per_s / 1e3, 4));
  return format_number(per_s, 4);
}

std::vector<StackPart> memory_parts() {
  return {{"16-bit weights", series_color(0)},
          {"16-bit gradients", series_color(1)},
          {"optimizer: fp32 master, m, v", series_color(2)},
          {"activations", series_color(4)}};
}

std::vector<double> memory_values(const mesh::MemoryPerGpu& m) {
  return {m.weights, m.gradients, m.optimizer, m.activations};
}

}  // namespace

void draw_planner_scatter(const mesh::PlannerResult& r, float height, int marked, const std::string& marked_name) {
  const mesh::Cluster& cluster = r.input.cluster;
  const std::string title =
      fmt::format("Every plan for {} on {} GPUs: memory against step time", r.input.model.name, cluster.gpus);
  PlotSpec spec{title, {"estimated step time", "s", true}, {"memory per GPU", "GB", true}, {}, {}};
  PlotLine fits{"fits", with_alpha(series_color(0), 0.55f), SeriesStyle::Markers};
  PlotLine too_big{"does not fit", with_alpha(muted_text_color(), 0.35f), SeriesStyle::Markers};
  too_big.marker = MarkerShape::Square;
  PlotLine across{"tp across nodes", with_alpha(series_color(3), 0.45f), SeriesStyle::Markers};
  across.marker = MarkerShape::Triangle;
  for (const mesh::Plan& p : r.plans) (!p.fits ? too_big : !p.allowed ? across : fits).points.push_back(point_of(p));
  PlotLine frontier{"frontier", theory_color(), SeriesStyle::LineAndMarkers};
  for (int i : r.frontier) frontier.points.push_back(point_of(r.plans[i]));
  if (!too_big.points.empty()) spec.lines.push_back(too_big);
  if (!across.points.empty()) spec.lines.push_back(across);
  if (!fits.points.empty()) spec.lines.push_back(fits);
  if (!frontier.points.empty()) spec.lines.push_back(frontier);
  if (const mesh::Plan* best = best_of(r)) {
    PlotLine mark{"best: " + mesh::plan_short_label(best->choice), highlight_color(), SeriesStyle::Markers};
    mark.marker = MarkerShape::Diamond;
    mark.label_points = true;
    mark.points.push_back(point_of(*best));
    spec.lines.push_back(mark);
  }
  if (marked >= 0 && marked < int(r.plans.size())) {
    PlotLine mark{fmt::format("{}: {}", marked_name, mesh::plan_short_label(r.plans[marked].choice)), run_color(1),
                  SeriesStyle::Markers};
    mark.marker = MarkerShape::Square;
    mark.label_points = true;
    mark.points.push_back(point_of(r.plans[marked]));
    spec.lines.push_back(mark);
  }
  spec.guides.push_back({false, cluster.gpu_memory_bytes / 1e9,
                         fmt::format("GPU memory {} GB", format_number(cluster.gpu_memory_bytes / 1e9, 4)),
                         warning_color()});
  spec.size = {0, height > 0 ? height : main_figure_height()};
  draw_plot("planner_scatter", spec);
  draw_note(fmt::format(
      "{}, {} GPUs a node. The frontier: plans no other plan beats in both memory and time. Step time = (compute + "
      "tp all-reduces) / (1 - bubble) + the other communication not hidden by compute, each collective steps x alpha + "
      "bytes / beta.",
      cluster.name, cluster.gpus_per_node));
  if (r.best < 0)
    draw_warning_band("No plan fits in the GPU's memory: more GPUs, a shorter sequence or a smaller batch.");
}

void draw_planner_frontier_memory(const mesh::PlannerResult& r, float height) {
  std::vector<StackedBar> bars;
  for (std::size_t k = 0; k < r.frontier.size() && k < std::size_t(mesh::kTopPlans); ++k) {
    const mesh::Plan& p = r.plans[r.frontier[k]];
    bars.push_back({seconds_text(p.step_s), memory_values(p.memory)});  // the plans are in the scatter
  }
  const std::string title = "The frontier's plans by step time, fastest first: memory per GPU by kind";
  begin_figure();
  draw_stacked_bars(memory_parts(), bars, height, r.input.cluster.gpu_memory_bytes,
                    fmt::format("GPU memory {}", short_bytes(r.input.cluster.gpu_memory_bytes)), 0, title);
  end_figure(title);
}

void draw_planner_time_breakdown(const mesh::PlannerResult& r, float height) {
  const std::vector<StackPart> parts = {{"compute", series_color(0)},
                                        {"pipeline bubble", muted_text_color()},
                                        {"tp all-reduces", series_color(1)},
                                        {"pp sends", series_color(2)},
                                        {"dp collectives not hidden", series_color(3)}};
  std::vector<StackedBar> bars;
  for (std::size_t k = 0; k < r.top.size(); ++k) {
    const mesh::Plan& p = r.plans[r.top[k]];
    bars.push_back(
        {fmt::format("#{}", k + 1), {p.compute_s, p.bubble_s, p.tp.exposed_s, p.pp.exposed_s, p.dp.exposed_s}});
  }
  const std::string title = "Where the fastest plans' step time goes (numbered as in the table)";
  begin_figure();
  draw_stacked_bars(parts, bars, height, 0, "", 0, title, seconds_text);
  end_figure(title);
}

void draw_planner_top_table(const mesh::PlannerResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < r.top.size(); ++k) {
    const mesh::Plan& p = r.plans[r.top[k]];
    rows.push_back({fmt::format("#{}", k + 1), mesh::plan_short_label(p.choice), seconds_text(p.step_s),
                    rate_text(p.tokens_per_s), short_bytes(p.memory.total()), short_bytes(p.memory.activations),
                    percent_text(p.bubble), seconds_text(p.exposed_comm_s), short_bytes(p.bytes_intra_node),
                    short_bytes(p.bytes_inter_node)});
  }
  draw_heading("The fastest plans that fit: dp x tp x pp, ZeRO stage, micro-batches m; per GPU and step");
  draw_columns_table("planner_top",
                     {"", "plan", "step", "tokens/s", "memory", "activations", "bubble", "exposed comm", "sent in node",
                      "sent across"},
                     rows);
}

void draw_planner_rules(const mesh::PlannerResult& r) {
  draw_heading("The course's rules of thumb against these plans");
  const auto plan_text = [&](int index, double step_s) {
    return fmt::format("{} ({})", mesh::plan_short_label(r.plans[index].choice), seconds_text(step_s));
  };
  for (const mesh::RuleCheck& rule : r.rules) {
    ImGui::TextWrapped("%s: %s", mesh::rule_statement(rule.rule), mesh::verdict_name(rule.verdict));
    if (rule.best_keeping >= 0 && rule.best_breaking >= 0)
      draw_note(fmt::format("fastest keeping it {}, fastest breaking it {}: keeping it takes {} of the time",
                            plan_text(rule.best_keeping, rule.keeping_step_s),
                            plan_text(rule.best_breaking, rule.breaking_step_s),
                            percent_text(rule.keeping_over_breaking)));
    else
      draw_note(rule.best_keeping < 0 ? "no plan that fits keeps it" : "no plan that fits breaks it");
  }
}

void draw_planner_figure(const mesh::PlannerResult& r) {
  draw_planner_scatter(r);
  ImGui::Spacing();
  draw_planner_frontier_memory(r, main_figure_height() * kSecondFigureShare);
  ImGui::Spacing();
  draw_planner_time_breakdown(r, main_figure_height() * kSecondFigureShare);
  ImGui::Spacing();
  draw_planner_top_table(r);
  ImGui::Spacing();
  draw_planner_rules(r);
}

}  // namespace dlsys::gui
