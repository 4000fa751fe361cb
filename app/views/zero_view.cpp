// Views of the ZeRO lesson: the 16 bytes of one parameter and the course's numbers, one rank's model states as the
// ZeRO paper's figure 1 stacks them (theory beside each rank's ledger from the run), the measured timeline of a step
// at every stage, the exact reduction factors against N beside the lecture's limits, and the calculator.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <map>

#include "app/gui/figure_size.h"
#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/gui/timeline.h"
#include "app/views/stacked_bars.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/zero/zero_steps.h"
#include "lessons/zero/zero_values.h"

namespace dlsys::gui {

namespace {

using zero_lesson::StageBar;
using zero_lesson::ZeroMeasured;
using zero_lesson::ZeroSteps;
using zero_lesson::ZeroTheory;

const ZeroSteps* steps_of(const ViewContext& ctx) { return step_data_as<ZeroSteps>(ctx); }

const ZeroMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result && !ctx.result_stale ? ctx.result->measured_as<ZeroMeasured>() : nullptr;
}

// Why there is no ledger to show: the calculator runs nothing, or no run has finished yet.
void note_no_run(const ZeroSteps& steps, const char* what) {
  draw_note(steps.mode == zero_lesson::Mode::Theory
                ? std::string("mode = theory runs nothing; set mode = run to ") + what + "."
                : std::string("Press Run to ") + what + ".");
}

std::string gb_text(double bytes) {
  if (bytes >= 1e12) return fmt::format("{} TB", format_number(bytes / 1e12, 4));
  if (bytes >= 1e9) return fmt::format("{} GB", format_number(bytes / 1e9, 4));
  if (bytes < 1000) return fmt::format("{:g} B", bytes);
  return format_bytes_both(bytes);
}

// The kinds of memory in the order the paper stacks them, bottom up, with one colour each.
std::vector<StackPart> parts() {
  return {{"16-bit weights", series_color(0)},
          {"16-bit gradients", series_color(1)},
          {"optimizer: fp32 master, m, v", series_color(2)},
          {"activations", series_color(4)},
          {"comm: buckets, gathered layer", series_color(5)},
          {"workspace: fp32 layer", series_color(6)}};
}

std::string elements_text(double n) {
  if (n >= 1e9) return fmt::format("{} billion", format_number(n / 1e9, 4));
  if (n >= 1e6) return fmt::format("{} million", format_number(n / 1e6, 4));
  return format_count(n);
}

using Bar = StackedBar;

void draw_stacked_bars(const std::vector<Bar>& bars, float height, double limit = 0,
                       const std::string& limit_label = "", float chart_width = 0, const std::string& title = "") {
  gui::draw_stacked_bars(parts(), bars, height, limit, limit_label, chart_width, title);
}

// The bars' height when `table_rows` rows of a table and a heading of up to two lines must fit under them.
// They are the step's main figure: never less than its share of the window, less what the figure drew above them
// since `figure_top` (its heading).
float bars_height(float table_rows, float figure_top) {
  const float heading_h = 2 * heading_font()->FontSize * ImGui::GetIO().FontGlobalScale + 8 * ui_scale();
  const float below = table_rows > 0 ? heading_h + table_rows * ImGui::GetFrameHeightWithSpacing() : 0;
  const float least = main_figure_height() - (ImGui::GetCursorScreenPos().y - figure_top);
  return std::max({ImGui::GetContentRegionAvail().y - below, least, ImGui::GetTextLineHeight() * 6});
}

Bar bar_of(const std::string& label, const StageBar& b) {
  return {label, {b.weights, b.gradients, b.optimizer, b.activations}};
}

std::string stage_name(int stage) { return stage == 0 ? "stage 0 (DDP)" : fmt::format("stage {}", stage); }

void number_rows(const char* id, const std::vector<zero_lesson::WorkedNumber>& numbers) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& n : numbers) rows.push_back({n.what, fmt::format("{} = {}", n.arithmetic, gb_text(n.bytes))});
  draw_value_table(id, rows);
}

// Step 1: one parameter's 16 bytes as a strip, the course's numbers and GPT-3's.
void draw_states_step(const ViewContext& ctx) {
  const ZeroSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const float s = ui_scale(), line = ImGui::GetTextLineHeight();
  const char* title = "One parameter, trained with mixed-precision Adam";
  const float figure_h = main_figure_height();
  begin_figure();
  draw_heading(title);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  // The strip is the step's figure: it takes the main figure's height, its names under it.
  const float width = std::min(ImGui::GetContentRegionAvail().x, 900 * s);
  const float h = std::max(line * 2.6f, figure_h - (o.y - ImGui::GetItemRectMin().y) - line * 1.5f);
  const struct {
    const char* name;
    int bytes;
    ImU32 color;
  } strip[] = {{"weight", 2, series_color(0)},
               {"gradient", 2, series_color(1)},
               {"fp32 master", 4, series_color(2)},
               {"Adam m", 4, series_color(2)},
               {"Adam v", 4, series_color(2)}};
  ImDrawList* draw = ImGui::GetWindowDrawList();
  float x = o.x;
  for (const auto& part : strip) {
    const float w = width * float(part.bytes) / 16;
    draw->AddRectFilled({x, o.y}, {x + w - 3 * s, o.y + h}, with_alpha(part.color, 0.8f), 4 * s);
    const std::string text = fmt::format("{} B", part.bytes);
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    draw->AddText({x + (w - ts.x) / 2, o.y + (h - ts.y) / 2}, text_color(), text.c_str());
    const ImVec2 ns = ImGui::CalcTextSize(part.name);
    if (ns.x < w - 4 * s) draw->AddText({x + (w - ns.x) / 2, o.y + h + 3 * s}, muted_text_color(), part.name);
    x += w;
  }
  ImGui::Dummy({width, h + line * 1.5f});
  end_figure(title);
  draw_note(
      "= 16 bytes per parameter of model states: a 16-bit weight and gradient, an fp32 master weight and Adam's two "
      "fp32 moments. Activations, temporary buffers and fragmentation come on top.");
  ImGui::Spacing();
  draw_heading("The course's numbers");
  number_rows("zero_course", steps->course);
  ImGui::Spacing();
  draw_heading("GPT-3, 175B: the lecture's 700 GB is the fp32 weights alone");
  number_rows("zero_gpt3", steps->gpt3);
}

// Step 2: DDP's ranks, each with the same bars; the run's stage 0 ledger per rank beside the formula.
void draw_ddp_step(const ViewContext& ctx) {
  const ZeroSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const ZeroTheory& t = steps->theory;
  const std::string title = fmt::format("DDP: every rank holds all of it ({})", t.psi_source);
  const float top = ImGui::GetCursorScreenPos().y;
  begin_figure();
  draw_heading(title);
  std::vector<Bar> bars;
  const int shown = std::min(t.ranks, 8);
  for (int r = 0; r < shown; ++r) bars.push_back(bar_of(fmt::format("rank {}", r), steps->bars.at(0)));
  if (t.ranks > shown) bars.push_back(bar_of(fmt::format("... {} ranks", t.ranks), steps->bars.at(0)));
  const ZeroMeasured* m = measured_of(ctx);
  draw_stacked_bars(bars, bars_height(m ? float(std::min(m->ranks, 8) + 4) : 2.5f, top));
  end_figure(title);
  const StageBar& ddp = steps->bars.at(0);
  draw_note(
      fmt::format("Not free of communication either: every step all-reduces the gradients, 2 Psi = {} elements "
                  "(a ring sends {} per rank), the same volume as stages 1 and 2.",
                  elements_text(ddp.comm_elements), elements_text(ddp.ring_comm_elements)));
  if (!m) {
    note_no_run(*steps, "train the lab's stack and read each rank's ledger at stage 0");
    return;
  }
  const zero_lesson::StageMeasured& s0 = m->stages.at(0);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t r = 0; r < s0.peak_by_rank.size() && r < 8; ++r) {
    const auto& p = s0.peak_by_rank[r];
    rows.push_back({fmt::format("rank {}", r), format_count(double(p.weights)), format_count(double(p.gradients)),
                    format_count(double(p.optimizer)), format_count(double(p.model_states)),
                    p.model_states == s0.model_state_bytes_formula ? "= formula" : "DIFFERENT"});
  }
  draw_heading(fmt::format("The run, stage 0 (lab's stack, Psi = {}): each rank's ledger, bytes; 16 Psi = {}",
                           format_count(double(m->parameters)), format_count(double(s0.model_state_bytes_formula))));
  draw_columns_table("zero_ddp_ledger", {"", "weights", "gradients", "optimizer", "model states", ""}, rows);
}

// Step 3: the paper's figure 1 at the chosen model and N, and the run's ledger at every stage.
void draw_stages_step(const ViewContext& ctx) {
  const ZeroSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const ZeroTheory& t = steps->theory;
  const std::string title = fmt::format("One rank's model states: {}, N = {}, K = 12", t.psi_source, t.ranks);
  const float top = ImGui::GetCursorScreenPos().y;
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x * 3) / 2;
  const bool side_by_side = half >= 24 * ImGui::GetFontSize();  // while four bars and their labels fit in half
  const ZeroMeasured* m = measured_of(ctx);
  if (side_by_side || !m) begin_figure();
  draw_heading(title);
  std::vector<Bar> bars;
  for (const StageBar& b : steps->bars) {
    StageBar states = b;
    states.activations = 0;  // model states only, as the paper draws them
    bars.push_back(bar_of(stage_name(b.stage), states));
  }
  if (!m) {
    draw_stacked_bars(bars, bars_height(1.5f, top));
    end_figure(title);
    note_no_run(*steps, "train the lab's stack on N rank threads at every stage and read each rank's ledger");
    return;
  }
  // Beside the formulas, the run: the largest rank's peak by tag at each stage, everything its ledger counted.
  std::vector<Bar> ledger;
  for (const auto& st : m->stages) {
    const auto& p = st.peak_bytes_per_rank;
    ledger.push_back({stage_name(st.stage),
                      {double(p.weights), double(p.gradients), double(p.optimizer), double(p.activations),
                       double(p.comm), double(p.workspace)}});
  }
  if (side_by_side) {
    const float height = bars_height(7.0f, top);
    draw_stacked_bars(bars, height, 0, "", half, "the paper's formulas");
    ImGui::SameLine(0, ImGui::GetStyle().ItemSpacing.x * 3);
    draw_stacked_bars(ledger, height, 0, "", half, "the run's ledger, one rank, every tag");
    end_figure(title);
  } else {  // one above the other, each a figure of its own; the view scrolls
    for (const auto& [chart, name] :
         {std::pair{&bars, "the paper's formulas"}, std::pair{&ledger, "the run's ledger, one rank, every tag"}}) {
      begin_fitted_figure(name);
      draw_stacked_bars(*chart, main_figure_height(), 0, "", 0, name);
      end_figure(name);
    }
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : m->stages)
    rows.push_back({stage_name(s.stage), format_count(double(s.peak_bytes_per_rank.model_states)),
                    format_count(double(s.model_state_bytes_formula)), s.model_states_match_formula ? "yes" : "NO",
                    format_count(double(s.peak_bytes_per_rank.comm)),
                    fmt::format("{} / {}", format_count(double(s.comm_elements)),
                                format_count(double(s.ring_comm_elements_formula))),
                    s.bit_identical_to_stage0 ? "bit-identical" : fmt::format("{:.1e}", s.max_rel_err_vs_stage0)});
  draw_heading(fmt::format("The run: the lab's stack on {} {}, Psi = {}, {}; ledger against formula", m->ranks,
                           m->on_gpu ? "GPU ranks" : "rank threads", format_count(double(m->parameters)), m->dtype));
  if (m->on_gpu)
    draw_note(fmt::format("On the GPU: {}. Stages compared with GPU stage 0; GPU stage 0 against the CPU's: {:.1e}.",
                          m->placement, m->max_rel_err_gpu_vs_cpu_stage0));
  draw_columns_table("zero_stage_ledger",
                     {"", "model states", "formula", "equal", "comm peak", "sent / ring formula", "vs stage 0"}, rows);
}

// Step 4: the measured step of every stage, the chosen stage first.
void draw_timeline_step(const ViewContext& ctx) {
  const ZeroMeasured* m = measured_of(ctx);
  const ZeroSteps* steps = steps_of(ctx);
  std::vector<const Timeline*> timelines;
  if (m && !ctx.result->timelines.empty()) {
    for (const Timeline& tl : ctx.result->timelines) timelines.push_back(&tl);
    draw_note(m->on_gpu
                  ? "The last step of each stage, measured with CUDA events on each rank's stream, every rank from its "
                    "own step start; every collective moves one layer, with the 16-bit conversions around it."
                  : "The last step of each stage, measured; every collective moves one layer. Idle: waiting for a ring "
                    "neighbour or a core.");
  } else if (steps != nullptr) {
    for (const Timeline& tl : steps->op_order) timelines.push_back(&tl);
    draw_note(
        "Before a run: the order of one step's operations in cost units (forward 1, backward 2, a collective "
        "(N-1)/N per layer it moves), not times.");
    if (!(m && m->on_gpu)) note_no_run(*steps, "measure them");
  } else {
    return draw_step_data_missing(ctx);
  }
  // The stage chosen in the panel is the one the step is about: it comes first, at the main figure's height.
  const std::size_t chosen = std::size_t(m ? m->stage : steps->theory.stage);
  if (chosen < timelines.size())
    std::rotate(timelines.begin(), timelines.begin() + long(chosen), timelines.begin() + long(chosen) + 1);
  auto tooltip = [](const Timeline& timeline, const TimelineHover& hover) {
    if (hover.timeline < 0 || hover.span < 0) return;
    const TimelineSpan& span = timeline.spans[std::size_t(hover.span)];
    ImGui::SetTooltip("%s, %s: %s, %.1f us", timeline.name.c_str(), timeline.lanes[std::size_t(span.lane)].c_str(),
                      span.label.c_str(), span.end - span.start);
  };
  if (shared_time_axis_toggle(ctx, "zero_stages")) {
    static TimelineViewState view;
    std::size_t lanes = 0;
    for (const Timeline* tl : timelines) lanes += tl->lanes.size() + 1;
    const float least = ImGui::GetTextLineHeight() * (1.2f * float(lanes) + 4);  // every lane readable, else scroll
    const TimelineHover hover =
        draw_timelines("zero_timeline", timelines, false, view, {0, std::max(ImGui::GetContentRegionAvail().y, least)});
    if (hover.timeline >= 0) tooltip(*timelines[std::size_t(hover.timeline)], hover);
    return;
  }
  for (std::size_t i = 0; i < timelines.size(); ++i)
    tooltip(*timelines[i], draw_timeline_alone("zero_" + timelines[i]->name, *timelines[i],
                                               (i == 0 ? 1 : kSecondFigureShare) * main_figure_height()));
}

// Step 5: the exact factors against N, with the lecture's limits.
void draw_factors_step(const ViewContext& ctx) {
  const ZeroSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  PlotSpec spec{"DDP's bytes / stage s's, against N", {"ranks N", "", true}, {"reduction", "x", true}, {}, {}, {}};
  // Each stage in the colour the run's sweep gives it; the lecture's limits dashed in their stage's colour.
  const ImU32 colors[] = {series_color(1), series_color(2), series_color(3), series_color(1), series_color(2)};
  for (std::size_t i = 0; i < steps->factors.size(); ++i) {
    PlotLine line = line_from_series(steps->factors[i], colors[i]);
    line.dashed = steps->factors[i].id.rfind("limit", 0) == 0;
    line.style = line.dashed ? SeriesStyle::Line : SeriesStyle::LineAndMarkers;
    spec.lines.push_back(line);
  }
  const ZeroTheory& t = steps->theory;
  spec.guides.push_back({true, double(t.ranks), fmt::format("N = {}", t.ranks), highlight_color()});
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"N = 8: stage 1, stage 2",
       fmt::format("{:.2f}x, {:.2f}x (the lecture: 4x, 8x)", 16 / (4 + 12 / 8.0), 16 / (2 + 14 / 8.0))},
      {"N = 64: stage 1, stage 2", fmt::format("{:.2f}x, {:.2f}x", 16 / (4 + 12 / 64.0), 16 / (2 + 14 / 64.0))},
      {fmt::format("N = {}: stage {}", t.ranks, t.stage),
       fmt::format("{:.2f}x (limit {:g}x)", t.reduction_factor, t.reduction_limit)},
  };
  // The table's three rows under the plots; in a short window the plots' legends take rows of their own, and the
  // table scrolls under them instead.
  const float height = plot_height_leaving(window_is_short() ? 0.0f : 3.1f);
  const ZeroMeasured* m = measured_of(ctx);
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float half = (ImGui::GetContentRegionAvail().x - gap) / 2;
  spec.size = {m ? half : 0, height};
  draw_plot("zero_factors", spec);
  if (m) {  // the run's sweep: every rank's ledger at each N against the formula, stage by stage
    ImGui::SameLine();
    PlotSpec sweep{"The run: model states per rank against N",
                   {"ranks N", "", true},
                   {"bytes", "B", true},
                   {},
                   {},
                   {half, height}};
    for (int stage = 0; stage <= 3; ++stage) {
      const ImU32 color = series_color(stage);
      if (const Series* f = ctx.result->find_series(fmt::format("states_formula_vs_n_stage{}", stage)))
        sweep.lines.push_back(line_from_series(*f, color));
      if (const Series* l = ctx.result->find_series(fmt::format("states_vs_n_stage{}", stage))) {
        PlotLine line = line_from_series(*l, color);
        line.style = SeriesStyle::Markers;
        sweep.lines.push_back(line);
      }
    }
    draw_plot("zero_sweep", sweep);
  }
  draw_value_table("zero_factor_rows", rows);
}

// Step 6: the calculator: every stage's bars with activations against the GPU's memory, and the verdicts.
void draw_calculator_step(const ViewContext& ctx) {
  const ZeroSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const ZeroTheory& t = steps->theory;
  std::vector<std::pair<std::string, std::string>> rows = {
      {"model", t.psi_source},
      {"ranks N, stage", fmt::format("{}, {}", t.ranks, stage_name(t.stage))},
      {"model states per rank", gb_text(t.model_state_bytes_per_rank)},
      {"activations per rank", t.activations_known ? gb_text(t.activation_bytes_per_rank) : "not counted"},
      {"total per rank",
       fmt::format("{} on {}: {}", gb_text(t.total_bytes_per_rank), t.gpu, t.fits ? "fits" : "does not fit")},
      {fmt::format("smallest N at stage {}", t.stage),
       t.min_ranks_to_fit > 0 ? fmt::format("{}", t.min_ranks_to_fit) : "none: what stays whole is too big"},
      {fmt::format("smallest stage at N = {}", t.ranks),
       t.min_stage_to_fit >= 0 ? stage_name(t.min_stage_to_fit) : "none fits"},
  };
  std::vector<Bar> bars;
  for (const StageBar& b : steps->bars) bars.push_back(bar_of(stage_name(b.stage), b));
  draw_stacked_bars(bars, bars_height(float(rows.size()) + 1.5f, ImGui::GetCursorScreenPos().y), t.gpu_bytes, t.gpu);
  draw_value_table("zero_calculator", rows);
  draw_note(t.activation_assumption);
}

}  // namespace

const StepViews& zero_step_views() {
  static const StepViews views{{"states", draw_states_step, StepShows::TheoryOnly},
                               {"ddp", draw_ddp_step},
                               {"stages", draw_stages_step},
                               {"timeline", draw_timeline_step},
                               {"factors", draw_factors_step},
                               {"calculator", draw_calculator_step, StepShows::TheoryOnly}};
  return views;
}

}  // namespace dlsys::gui
