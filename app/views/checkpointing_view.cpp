// Views of the checkpointing lesson: which layers keep activations at each moment of a step (the course's L0, L3, L6
// picture), the ledger's peak against k beside the closed form, the step time against k beside one extra forward
// (4/3), and the calculator for a real model with no, selective and full recompute.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/checkpointing/checkpointing_steps.h"
#include "lessons/checkpointing/checkpointing_values.h"

namespace dlsys::gui {

namespace {

using checkpointing::CalculatorTheory;
using checkpointing::CheckpointingMeasured;
using checkpointing::CheckpointingSteps;
using checkpointing::CheckpointingTheory;
using checkpointing::Kept;
using checkpointing::KeptPicture;

const CheckpointingSteps* steps_of(const ViewContext& ctx) { return step_data_as<CheckpointingSteps>(ctx); }

const CheckpointingMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result && !ctx.result_stale ? ctx.result->measured_as<CheckpointingMeasured>() : nullptr;
}

ImU32 input_color() { return series_color(0); }
ImU32 hidden_color() { return series_color(1); }

// One moment of a step: a column per layer, its input (1 unit high) under its hidden layer (e units), filled where
// kept, the rebuilt segment outlined; the stack's output is the last column.
void draw_picture(const KeptPicture& picture, int expansion, int segment_layers, float height) {
  const float s = ui_scale();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const std::string title = fmt::format("{}: {}", picture.title, format_bytes_both(double(picture.bytes)));
  draw->AddText(o, text_color(), title.c_str());
  const int columns = int(picture.layers.size()) + 1;
  const float column_w = width / float(columns), gap = std::min(3 * s, column_w * 0.2f);
  const float top = o.y + line, bottom = o.y + height - line, unit = (bottom - top) / float(1 + expansion);
  for (int c = 0; c < columns; ++c) {
    const bool output = c + 1 == columns;
    const Kept kept = output ? (picture.output_kept ? Kept::Boundary : Kept::Nothing) : picture.layers[std::size_t(c)];
    const float x0 = o.x + c * column_w, x1 = x0 + column_w - gap;
    const ImVec2 input_a{x0, bottom - unit}, input_b{x1, bottom};
    const ImVec2 hidden_a{x0, top}, hidden_b{x1, bottom - unit - gap};
    if (kept != Kept::Nothing) draw->AddRectFilled(input_a, input_b, output ? theory_color() : input_color());
    if (kept == Kept::Everything) draw->AddRectFilled(hidden_a, hidden_b, hidden_color());
    draw->AddRect(input_a, input_b, grid_color());
    if (!output) draw->AddRect(hidden_a, hidden_b, grid_color());
    const bool labelled = output || c % segment_layers == 0;
    if (labelled && column_w * 4 > ImGui::CalcTextSize("L00").x) {
      const std::string label = output ? "y" : fmt::format("L{}", c);
      draw->AddText({x0, bottom + 2 * s}, muted_text_color(), label.c_str());
    }
  }
  if (picture.rebuilt_segment >= 0) {
    const float x0 = o.x + picture.rebuilt_segment * segment_layers * column_w - gap / 2;
    const float x1 = x0 + segment_layers * column_w;
    draw->AddRect({x0, top - 2 * s}, {x1, bottom + 2 * s}, highlight_color(), 3 * s, 0, 3 * s);
  }
  ImGui::Dummy({width, height});
}

void draw_stack(const ViewContext& ctx) {
  const CheckpointingSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const CheckpointingTheory& t = steps->theory;
  draw_color_key({{input_color(), "a layer's input (a checkpoint: r w floats)"},
                  {hidden_color(), fmt::format("its hidden layer ({} r w floats)", t.expansion)},
                  {theory_color(), "the stack's output"},
                  {0, fmt::format("segment being rebuilt (k = {})", t.segment_layers), highlight_color()}});
  // The backward pass walks its segments, one a tick, from the peak (the last segment, every checkpoint held).
  const std::size_t shown =
      steps->backward.empty() ? 0 : std::size_t(ctx.step_time_s / kAnimationTickS) % steps->backward.size();
  begin_fitted_figure("what each layer keeps");
  // Three pictures share what the view has left above the two-line note, each at least a title, its bars and labels.
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float row_h = std::max(3 * line, (ImGui::GetContentRegionAvail().y - 2.5f * line) / 3);
  draw_picture(steps->keep_all, t.expansion, t.segment_layers, row_h);
  draw_picture(steps->after_forward, t.expansion, t.segment_layers, row_h);
  if (!steps->backward.empty()) draw_picture(steps->backward[shown], t.expansion, t.segment_layers, row_h);
  end_figure("what each layer keeps");
  draw_note(
      fmt::format("Peak: keep everything {}; checkpoint every k = {} {} ({} less), at the first segment the "
                  "backward pass rebuilds.",
                  format_bytes_both(double(t.keep_all_peak_bytes)), t.segment_layers,
                  format_bytes_both(double(t.checkpointed_peak_bytes)), percent_text(t.memory_saving)));
}

void draw_memory(const ViewContext& ctx) {
  const CheckpointingSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const CheckpointingTheory& t = steps->theory;
  const CheckpointingMeasured* m = measured_of(ctx);
  if (m != nullptr)
    draw_value_table("memory", {{"ledger against formula", m->peaks_match_formula ? "equal at every k" : "DIFFERENT"},
                                {"least measured peak at k", std::to_string(m->measured_best_k)},
                                {"gradients against the plain step",
                                 m->all_gradients_identical ? "bit-identical at every k" : "DIFFERENT"}});
  else
    draw_needs_run(ctx, "measure the peak at every k with the memory ledger");
  PlotSpec spec{fmt::format("Peak activations against k (L = {}, e = {})", t.layers, t.expansion),
                {"k (layers per segment)", ""},
                {"peak activations", "B"},
                {},
                {}};
  PlotLine formula = line_from_series(steps->peak_formula, theory_color());
  spec.lines.push_back(std::move(formula));
  PlotLine chen = line_from_series(steps->chen_curve, muted_text_color());
  chen.dashed = true;
  spec.lines.push_back(std::move(chen));
  PlotLine keep_all = line_from_series(steps->keep_all_line, series_color(3));
  keep_all.dashed = true;
  spec.lines.push_back(std::move(keep_all));
  if (m != nullptr)
    if (const Series* measured = ctx.result->find_series("peak_measured")) {
      PlotLine line = line_from_series(*measured, series_color(0));
      line.marker = MarkerShape::Square;
      spec.lines.push_back(std::move(line));
    }
  spec.guides.push_back(
      {true, t.best_k_real, fmt::format("sqrt(L/(1+e)) = {}", format_number(t.best_k_real, 3)), highlight_color()});
  spec.guides.push_back({true, double(t.segment_layers), fmt::format("k = {}", t.segment_layers), series_color(2)});
  spec.guides.push_back(
      {true, t.chen_best_k, fmt::format("sqrt(L) = {}", format_number(t.chen_best_k, 3)), muted_text_color()});
  spec.x.log = true;
  spec.y.log = true;  // the minimum stays visible beside the plain step's peak, many times higher
  spec.y.max = 2.0 * double(t.keep_all_peak_bytes);  // room above the plain step's line for the guides' labels
  spec.size = {0, plot_height_leaving(0)};
  draw_plot("memory_plot", spec);
}

void draw_time(const ViewContext& ctx) {
  const CheckpointingSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const CheckpointingTheory& t = steps->theory;
  const CheckpointingMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "time a step at every k against the plain step");
  draw_value_table(
      "time",
      {{fmt::format("plain step, k = {} (medians)", t.segment_layers),
        fmt::format("{}, {}", format_duration_us(m->keep_all_step_us), format_duration_us(m->checkpointed_step_us))},
       {"measured ratio; one extra forward (F + F + 2F) / (F + 2F)",
        fmt::format("{}; {}", format_number(m->time_ratio, 3), format_number(t.time_ratio, 4))},
       {"1 + measured forward / plain step", format_number(m->predicted_time_ratio, 3)}});
  PlotSpec spec{"Step time over the plain step's, against k", {"k (layers per segment)", ""}, {"ratio", ""}, {}, {}};
  spec.lines.push_back(line_from_series(steps->time_formula, theory_color()));
  if (const Series* measured = ctx.result->find_series("time_measured"))
    spec.lines.push_back(line_from_series(*measured, series_color(0)));
  spec.guides.push_back({false, 1.0, "the plain step", series_color(3)});
  // 4/3 holds where a backward costs two forwards; this run's own forward share says what one more forward costs here,
  // drawn across the same k as the formula.
  if (const double own = m->predicted_time_ratio; own > 0) {
    PlotLine forward_share{"1 + this run's forward / plain step", with_alpha(series_color(0), 0.7f), SeriesStyle::Line,
                           true};
    for (const SeriesPoint& p : steps->time_formula.points) forward_share.points.push_back({p.x, own, own, own});
    spec.lines.push_back(std::move(forward_share));
  }
  spec.x.log = true;
  spec.size = {0, plot_height_leaving(0)};
  draw_plot("time_plot", spec);
}

// Decimal units, as the paper's.
std::string gb_text(double bytes) {
  return bytes >= 1e9 ? fmt::format("{} GB", format_number(bytes / 1e9, 4))
                      : fmt::format("{} MB", format_number(bytes / 1e6, 4));
}

void draw_calculator(const ViewContext& ctx) {
  const CheckpointingSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const CalculatorTheory& c = steps->theory.calculator;
  draw_heading(fmt::format("{}: L = {}, h = {}, a = {}, s = {}, b = {}", c.model, c.layers, c.hidden, c.heads, c.seq,
                           c.micro_batch));
  draw_bars(
      {{"no recompute", c.bytes_none, series_color(3),
        fmt::format("{}: L s b h (34 + 5 a s / h)", gb_text(c.bytes_none))},
       {"selective", c.bytes_selective, series_color(1),
        fmt::format("{}: L s b h 34 ({} less)", gb_text(c.bytes_selective), percent_text(c.selective_saving))},
       {"full", c.bytes_full, series_color(0),
        fmt::format("{}: L 2 s b h + one layer ({} less)", gb_text(c.bytes_full), percent_text(c.full_saving))}},
      {.full_scale = c.bytes_none, .title = "activations of the whole model, 16-bit", .height = main_figure_height()});
  const CalculatorTheory& g = steps->gpt3;
  draw_columns_table("gpt3", {"GPT-3 175B, s = 2048, b = 1", "a layer", "96 layers", "saving"},
                     {{"no recompute", gb_text(g.layer_bytes_none), gb_text(g.bytes_none), "-"},
                      {"selective (5 a s / h = 80 of 114 dropped)", gb_text(g.layer_bytes_selective),
                       gb_text(g.bytes_selective), percent_text(g.selective_saving)},
                      {"full", "-", gb_text(g.bytes_full), percent_text(g.full_saving)}});
  draw_note(
      "The formula is a GPT layer's (a 4h MLP, 16-bit, dropout masks of one byte): a SwiGLU model's MLP keeps "
      "somewhat more. Embeddings, logits and workspace are not counted.");
}

}  // namespace

const StepViews& checkpointing_step_views() {
  static const StepViews views{{"stack", draw_stack, StepShows::TheoryOnly},
                               {"memory", draw_memory},
                               {"time", draw_time},
                               {"calculator", draw_calculator, StepShows::TheoryOnly}};
  return views;
}

}  // namespace dlsys::gui
