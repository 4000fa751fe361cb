// Views of the mesh lesson: the mesh with its coordinates and groups, every rank's measured timeline, bytes per group
// and memory per rank beside their closed forms, and the weights against one device's.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/mesh_planner_figure.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/mesh/mesh_planner.h"
#include "lessons/mesh/mesh_steps.h"
#include "lessons/mesh/mesh_values.h"

namespace dlsys::gui {

namespace {

using mesh_lesson::MeshMeasured;
using mesh_lesson::MeshSteps;
using mesh_lesson::MeshTheory;
using mesh_lesson::RankMeasured;
using mesh_lesson::RankTheory;

const MeshSteps* steps_of(const ViewContext& ctx) { return step_data_as<MeshSteps>(ctx); }

const MeshMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result && !ctx.result_stale ? ctx.result->measured_as<MeshMeasured>() : nullptr;
}

// A dp group's colour: the ranks at the same (t, p) in every replica.
ImU32 dp_group_color(const MeshTheory& t, const RankTheory& r) { return series_color(r.t + t.tp * r.p); }

// Black or white, whichever reads better on `fill`.
ImU32 text_on(ImU32 fill) {
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(fill);
  return 0.299f * c.x + 0.587f * c.y + 0.114f * c.z > 0.5f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

std::string bytes_text(std::int64_t bytes) { return format_bytes_both(double(bytes)); }

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

void span_tooltip(const Timeline& timeline, const TimelineHover& hover) {
  if (hover.timeline < 0 || hover.span < 0) return;
  const TimelineSpan& span = timeline.spans[std::size_t(hover.span)];
  ImGui::BeginTooltip();
  ImGui::Text("%s, %s: %.1f to %.1f %s (%.1f)", timeline.lanes[std::size_t(span.lane)].c_str(), span.label.c_str(),
              span.start, span.end, timeline.time_unit.c_str(), span.end - span.start);
  ImGui::EndTooltip();
}

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
      format_duration_us(m->step_us), m->losses.size() > 1 ? m->losses.size() - 1 : 1,
      format_duration_us(m->step_min_us), format_duration_us(m->step_max_us), percent_text(m->comm_share)));
}

void draw_bytes(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MeshTheory& t = steps->theory;
  const MeshMeasured* m = measured_of(ctx);
  std::vector<Bar> bars;
  const auto add = [&](const std::string& what, std::int64_t formula, const std::int64_t* counted, int color) {
    bars.push_back({what + ": formula", double(formula), theory_color(), bytes_text(formula)});
    if (counted != nullptr)
      bars.push_back({what + ": counted", double(*counted), series_color(color),
                      fmt::format("{}{}", bytes_text(*counted), *counted == formula ? " (equal)" : " (DIFFERENT)")});
  };
  add("tp group", t.tp_group_bytes, m ? &m->tp_group_bytes : nullptr, 0);
  add("dp group", t.dp_group_bytes, m ? &m->dp_group_bytes : nullptr, 1);
  add("pipelines", t.pp_bytes, m ? &m->pp_bytes : nullptr, 2);
  double largest = 1;
  for (const Bar& b : bars) largest = std::max(largest, b.value);
  draw_bars(
      bars,
      {.full_scale = largest, .title = "bytes sent per step, group 0 of each kind", .height = main_figure_height()});
  if (m == nullptr) draw_needs_run(ctx, "count what every link and message carried");
  draw_note(
      "Every group of a kind sends the same: the bars are group 0's (replica 0, stage 0 for tp; tp rank 0, "
      "stage 0 for dp) and every pipeline message.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < t.rank_costs.size(); ++i) {
    const RankTheory& k = t.rank_costs[i];
    const RankMeasured* r = m && i < m->rank_runs.size() ? &m->rank_runs[i] : nullptr;
    const auto cell = [&](std::int64_t formula, std::int64_t RankMeasured::*field) {
      return r ? fmt::format("{} / {}", r->*field, formula) : fmt::format("- / {}", formula);
    };
    rows.push_back({fmt::format("{} ({},{},{})", k.rank, k.d, k.t, k.p), cell(k.tp_bytes, &RankMeasured::tp_bytes),
                    cell(k.dp_bytes, &RankMeasured::dp_bytes), cell(k.pp_bytes, &RankMeasured::pp_bytes)});
  }
  draw_columns_table("mesh_bytes", {"rank (d,t,p)", "tp B (counted / formula)", "dp B", "pipeline B"}, rows);
  draw_note(fmt::format(
      "tp: {} all-reduces a rank, each 2 (t - 1)/t = {} of {} B; dp: {} of each rank's {} B gradient shard; pipeline: "
      "{} B a message.",
      t.rank_costs.empty() ? 0 : t.rank_costs.front().tp_all_reduces, short_number_text(t.tp_ring_factor),
      t.activation_bytes, short_number_text(t.dp_ring_factor), t.shard_gradient_bytes, t.activation_bytes));
}

void draw_memory(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MeshTheory& t = steps->theory;
  const MeshMeasured* m = measured_of(ctx);
  // Against the rank: the formula's parts stacked as lines (weights, + gradients, + activations, + scratch) and the
  // ledger's total as markers on the top line.
  PlotSpec spec{"Memory per rank: the formula's parts and the ledger", {"rank", ""}, {"bytes", "B"}, {}, {}};
  const char* names[] = {"weights", "+ gradients", "+ stashed activations", "+ backward buffers (formula's total)"};
  for (int part = 0; part < 4; ++part) {
    PlotLine line{.name = names[part], .color = part == 3 ? theory_color() : series_color(part)};
    line.style = SeriesStyle::LineAndMarkers;
    for (const RankTheory& k : t.rank_costs) {
      const std::int64_t parts[] = {k.weight_bytes, k.gradient_bytes, k.activation_bytes, k.scratch_bytes};
      double y = 0;
      for (int i = 0; i <= part; ++i) y += double(parts[i]);
      line.points.push_back({double(k.rank), y, y, y});
    }
    spec.lines.push_back(std::move(line));
  }
  if (m != nullptr) {
    PlotLine ledger{.name = "ledger's total", .color = series_color(4)};
    ledger.style = SeriesStyle::Markers;
    ledger.marker = MarkerShape::Square;
    for (const RankMeasured& r : m->rank_runs)
      ledger.points.push_back({double(r.rank), double(r.total_bytes), double(r.total_bytes), double(r.total_bytes)});
    spec.lines.push_back(std::move(ledger));
  }
  spec.y.min = 0;
  spec.size = {0, main_figure_height()};
  draw_plot("mesh_memory_plot", spec);
  if (m == nullptr) draw_needs_run(ctx, "read every rank's memory from the ledger");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < t.rank_costs.size(); ++i) {
    const RankTheory& k = t.rank_costs[i];
    const RankMeasured* r = m && i < m->rank_runs.size() ? &m->rank_runs[i] : nullptr;
    rows.push_back({fmt::format("{} ({},{},{})", k.rank, k.d, k.t, k.p), std::to_string(k.weight_bytes),
                    std::to_string(k.gradient_bytes),
                    fmt::format("{} = {} x {}", k.activation_bytes, k.in_flight, k.stash_bytes),
                    std::to_string(k.scratch_bytes), r ? std::to_string(r->peak_message_bytes) : "-"});
  }
  draw_columns_table("mesh_memory",
                     {"rank (d,t,p)", "weights B", "gradients B", "activations B (in flight x one)", "scratch B",
                      "messages B (measured)"},
                     rows);
  draw_note(m ? (m->memory_match ? "Every rank's ledger equals the formula, to the byte (messages between stages, "
                                   "which depend on timing, are counted apart)."
                                 : "A rank's ledger DIFFERS from the formula.")
              : "Formula per rank; a run reads the ledger.");
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
                        {"measured (median)", m->step_us, theory_color(),
                         fmt::format("{}: {} x the estimate", format_duration_us(m->step_us),
                                     format_number(m->step_over_prediction, 3))}};
  draw_bars(bars, {.full_scale = std::max(pr.step_us, m->step_us),
                   .title = "step time: the planner's estimate and the run",
                   .height = main_figure_height()});
  draw_columns_table("mesh_predicted", {"per rank and step", "planner", "measured", ""},
                     {row("tp bytes sent (busiest rank)", bytes_pair(pr.tp_bytes, m->busiest_tp_bytes)),
                      row("pipeline bytes sent (busiest rank)", bytes_pair(pr.pp_bytes, m->busiest_pp_bytes)),
                      row("dp bytes sent (busiest rank)", bytes_pair(pr.dp_bytes, m->busiest_dp_bytes)),
                      row("weights (largest shard)", bytes_pair(pr.weight_bytes, m->largest_weight_bytes)),
                      row("bubble (p - 1) / (m + p - 1)", {percent_text(pr.bubble), "see the timeline", ""})});
  draw_note(fmt::format(
      "The planner costs the run's own stack (8 B a parameter, fp32 messages, one MLP all-reduce each way) on {} "
      "hardware threads shared by the ranks: compute at OpenBLAS's rate for each rank's share of a core, links at "
      "{} GB/s and {} us a step. Bytes and memory are exact; time is an estimate: small messages, waiting for a core "
      "and the mailbox are what it leaves out.",
      pr.hardware_threads, short_number_text(mesh_lesson::kRankLink.bandwidth_gbps),
      short_number_text(mesh_lesson::kRankLink.latency_us)));
}

}  // namespace

const StepViews& mesh_step_views() {
  static const StepViews views{{"mesh", draw_mesh, StepShows::TheoryOnly},
                               {"timeline", draw_timeline},
                               {"bytes", draw_bytes},
                               {"memory", draw_memory},
                               {"check", draw_check},
                               {"planner", draw_planner, StepShows::TheoryOnly},
                               {"predicted", draw_predicted}};
  return views;
}

}  // namespace dlsys::gui
