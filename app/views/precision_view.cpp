// Views of the precision lesson: the three bit layouts with their exact limits, values rounded into the chosen format
// with their bits, the fp32 run's gradients against fp16's range, GradScaler's state machine and its trace, the four
// training curves, and the bytes of mixed-precision training.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/precision/precision_steps.h"
#include "lessons/precision/precision_values.h"

namespace dlsys::gui {

namespace {

using precision::PrecisionMeasured;
using precision::PrecisionSteps;
using precision::PrecisionTheory;
using precision::Training;
using Rows = std::vector<std::pair<std::string, std::string>>;

const PrecisionSteps* steps_of(const ViewContext& ctx) { return step_data_as<PrecisionSteps>(ctx); }

const Training* training_of(const ViewContext& ctx) {
  const PrecisionMeasured* m = ctx.result ? ctx.result->measured_as<PrecisionMeasured>() : nullptr;
  return m && m->training ? &*m->training : nullptr;
}

std::string power_label(double value) {
  const double exponent = std::log2(value);
  if (value > 0 && exponent == std::floor(exponent)) return fmt::format("2^{:.0f}", exponent);
  return format_number(value, 6);
}

// The fields of a format as coloured boxes, one per bit: sign, exponent, mantissa.
void draw_bit_layout(const precision::FormatCard& card, float box) {
  const float s = ui_scale();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const int bits = 1 + card.exponent_bits + card.mantissa_bits;
  const ImU32 colors[] = {series_color(5), series_color(0), series_color(2)};
  for (int i = 0; i < bits; ++i) {
    const int field = i == 0 ? 0 : (i <= card.exponent_bits ? 1 : 2);
    const ImVec2 a{o.x + i * box, o.y}, b{a.x + box - 2 * s, a.y + box};
    draw->AddRectFilled(a, b, with_alpha(colors[field], 0.85f), 2 * s);
  }
  const char* names[] = {"sign", "exponent", "mantissa"};
  const int starts[] = {0, 1, 1 + card.exponent_bits}, widths[] = {1, card.exponent_bits, card.mantissa_bits};
  const float label_y = o.y + box + 2 * s;
  float next_free_x = o.x;
  for (int f = 0; f < 3; ++f) {
    const std::string label = f == 0 ? "s" : fmt::format("{} {}", names[f], widths[f]);
    const float x = std::max(next_free_x, o.x + starts[f] * box);
    draw->AddText({x, label_y}, colors[f], label.c_str());
    next_free_x = x + ImGui::CalcTextSize(label.c_str()).x + 8 * s;
  }
  ImGui::Dummy({bits * box, box + ImGui::GetTextLineHeight() + 6 * s});
}

void draw_layouts_step(const ViewContext& ctx) {
  const PrecisionSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const float box = std::clamp(avail_w / 36.0f, 8 * ui_scale(), 22 * ui_scale());
  for (const precision::FormatCard& card : steps->cards) {
    ImGui::PushFont(heading_font());
    const std::string heading =
        fmt::format("{}: 1 sign, {} exponent, {} mantissa bits, bias {}{}", card.name, card.exponent_bits,
                    card.mantissa_bits, card.bias, card.chosen ? "  (the chosen format)" : "");
    if (card.chosen)
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(highlight_color()), "%s", heading.c_str());
    else
      ImGui::TextUnformatted(heading.c_str());
    ImGui::PopFont();
    draw_bit_layout(card, box);
    std::vector<std::vector<std::string>> rows;
    for (const precision::FormatLimit& l : card.limits) rows.push_back({l.what, l.power, l.exact, l.bits});
    draw_columns_table(card.name.c_str(), {"", "from the layout", "exact value", "bits"}, rows);
    ImGui::Spacing();
  }
}

void draw_rounding_step(const ViewContext& ctx) {
  const PrecisionSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  // What rounding does to training first (the step's figure), then the rule value by value.
  PlotSpec spec{fmt::format("A weight of 1 given {} updates of {:g}", steps->update_count, steps->update),
                {"updates applied", "", false},
                {"weight - 1", "", false},
                {},
                {}};
  const ImU32 colors[] = {theory_color(), series_color(1), series_color(5), series_color(2)};
  for (std::size_t i = 0; i < steps->update_series.size(); ++i) {
    PlotLine line = line_from_series(steps->update_series[i], colors[i % 4]);
    line.style = SeriesStyle::Line;
    line.dashed = i == 0;
    spec.lines.push_back(std::move(line));
  }
  spec.size = {0, main_figure_height()};
  draw_plot("updates", spec);
  // One line without wrapping: a wrapped line may break a number after its decimal point.
  ImGui::TextUnformatted(
      fmt::format("after {} updates: fp16 weight {}, bf16 weight {}; fp32 master {}, its fp16 copy {}",
                  steps->update_count, format_number(steps->fp16_after, 8), format_number(steps->bf16_after, 8),
                  format_number(steps->master_after, 8), format_number(steps->fp16_copy_after, 8))
          .c_str());
  ImGui::Spacing();
  ImGui::PushFont(heading_font());
  ImGui::Text("Rounded into %s, to nearest, ties to even", steps->chosen_format.c_str());
  ImGui::PopFont();
  std::vector<std::vector<std::string>> rows;
  for (const precision::RoundingRow& r : steps->rounding)
    rows.push_back({r.note.empty() ? r.why : r.why + ": " + r.note, r.input, r.rounded, r.bits, r.relative_error});
  draw_columns_table("rounding", {"", "value", "rounded (exact)", "bits", "rel. error"}, rows);
  ImGui::TextDisabled("Set round=VALUE (and format) to add your own value; dlsys-lab run prints it with its bits.");
}

void draw_gradients_step(const ViewContext& ctx) {
  const Training* t = training_of(ctx);
  const PrecisionSteps* steps = steps_of(ctx);
  if (!t || !steps) return draw_needs_run(ctx, "the gradients of a real training run");
  const RunResult& r = *ctx.result;
  // The histogram against fp16's limits is the main figure; the shares by scale and the table follow it.
  const float hist_h = main_figure_height();
  PlotSpec hist{"fp32 run's gradient values per octave", {"log2 |gradient|", "", false}, {"share", "%", false}, {}, {}};
  hist.x.max = steps->fp16_max_log2 + 8;  // room for the 65504 guide's label
  hist.lines.push_back(run_series_line(r, "grad_hist_first", series_color(0), SeriesStyle::LineAndMarkers));
  hist.lines.push_back(run_series_line(r, "grad_hist_last", series_color(2), SeriesStyle::LineAndMarkers));
  hist.guides.push_back({true, steps->fp16_min_subnormal_log2, "2^-24", theory_color()});
  hist.guides.push_back({true, steps->fp16_min_normal_log2, "2^-14", muted_text_color()});
  hist.guides.push_back({true, steps->fp16_max_log2, "65504", theory_color()});
  hist.size = {0, hist_h};
  draw_plot("histogram", hist);
  ImGui::TextDisabled(
      "fp16: below 2^-24 (its smallest subnormal) values round to 0, from 2^-24 to 2^-14 they are "
      "subnormal, past 65504 inf.");
  const int k = t->scaled_log2;
  PlotSpec shares{"Share lost in fp16 if the gradients are multiplied by 2^k",
                  {"k (scale 2^k)", "", false},
                  {"share", "%", false},
                  {},
                  {}};
  shares.lines.push_back(run_series_line(r, "flushed_vs_scale_first", series_color(0), SeriesStyle::Line));
  shares.lines.push_back(run_series_line(r, "flushed_vs_scale_last", series_color(2), SeriesStyle::Line));
  shares.lines.push_back(run_series_line(r, "overflow_vs_scale_first", series_color(1), SeriesStyle::Line));
  shares.guides.push_back({true, double(k), fmt::format("initial scale 2^{}", k), theory_color()});
  shares.size = {0, kSecondFigureShare * hist_h};
  draw_plot("shares", shares);
  draw_value_table(
      "flushed",
      {
          {"flushed to 0 in fp16 at scale 1: step 1 / last step",
           percent_text(t->flushed_share_first_scale1, 2) + " / " + percent_text(t->flushed_share_last_scale1, 2)},
          {fmt::format("at scale 2^{}: step 1 / last step", k),
           percent_text(t->flushed_share_first_scaled, 2) + " / " + percent_text(t->flushed_share_last_scaled, 2)},
          {"measured over the whole fp16 run without scaling", percent_text(t->fp16_unscaled.underflow_fraction, 2)},
          {"measured over the whole fp16 run with loss scaling", percent_text(t->fp16_scaled.underflow_fraction, 2)},
      });
}

void draw_loss_scaling_step(const ViewContext& ctx) {
  const PrecisionTheory* theory = ctx.result ? ctx.result->theory_as<PrecisionTheory>() : nullptr;
  const Training* t = training_of(ctx);
  if (!t || !theory) return draw_needs_run(ctx, "a loss-scaled fp16 run, step by step");
  const RunResult& r = *ctx.result;
  PlotSpec spec{"fp16, loss scaling: S after each step", {"step", "", false}, {"S", "", true}, {}, {}};
  spec.lines.push_back(run_series_line(r, "scale_fp16_scaled", series_color(0), SeriesStyle::Line));
  PlotLine skipped = run_series_line(r, "skipped_fp16_scaled", series_color(1), SeriesStyle::Markers);
  skipped.name = "skipped: an inf in the gradients";
  spec.lines.push_back(std::move(skipped));
  draw_context_and_figure(
      [&] {
        draw_columns_table("rules", {"GradScaler's rule", "PyTorch's default", "this run"},
                           {{"scale S at the start", "65536 = 2^16", power_label(theory->init_scale)},
                            {"inf or NaN in any gradient", "skip the step, S x 0.5",
                             fmt::format("skip, S x {:g}", theory->backoff_factor)},
                            {"growth_interval clean steps in a row", "S x 2 after 2000",
                             fmt::format("S x {:g} after {}", theory->growth_factor, theory->growth_interval)}});
      },
      [&] {
        spec.size = {0, plot_height_leaving(6.5f)};
        draw_plot("scale", spec);
      });
  // One short line without wrapping: a wrapped line may break a number after its decimal point.
  ImGui::TextUnformatted(fmt::format("doubled {} times, peak {}, {} steps skipped; final loss {:.3g} = {:.3f} x fp32's",
                                     t->fp16_scaled_growths, power_label(t->fp16_scaled_peak_scale),
                                     t->fp16_scaled.skipped_steps, t->fp16_scaled.final_loss, t->scaled_over_fp32)
                             .c_str());
  std::vector<std::vector<std::string>> rows;
  for (const precision::SkippedStep& e : t->fp16_scaled_first_skips)
    rows.push_back({std::to_string(e.step), power_label(e.scale_before), power_label(e.scale_after)});
  if (rows.empty()) rows.push_back({"none yet", "the scale still fits every gradient", ""});
  draw_columns_table("skips", {"skipped step", "S with an inf in the gradients", "S after backing off"}, rows);
}

// One run's training curves. fp32 last, dashed, so that it stays visible where the scaled fp16 and bf16 curves lie on
// it.
std::vector<PlotLine> loss_lines(const RunResult& r) {
  std::vector<PlotLine> lines;
  lines.push_back(run_series_line(r, "loss_fp16_unscaled", series_color(1), SeriesStyle::Line));
  lines.push_back(run_series_line(r, "loss_fp16_scaled", series_color(0), SeriesStyle::Line));
  lines.push_back(run_series_line(r, "loss_bf16", series_color(2), SeriesStyle::Line));
  if (r.find_series("loss_chosen"))
    lines.push_back(run_series_line(r, "loss_chosen", series_color(3), SeriesStyle::Line));
  lines.push_back(run_series_line(r, "loss_fp32", theory_color(), SeriesStyle::Line));
  lines.back().dashed = true;
  return lines;
}

void draw_curves_step(const ViewContext& ctx) {
  const Training* t = training_of(ctx);
  if (!t) return draw_needs_run(ctx, "four training runs of the same model");
  PlotSpec spec{"Training loss, per mini-batch", {"step", "", false}, {"loss", "", true}, {}, {}};
  add_compared_lines(ctx, spec, loss_lines);
  spec.size = {0, plot_height_leaving(7)};
  draw_plot("curves", spec);
  std::vector<std::vector<std::string>> rows;
  for (const precision::TrainingSummary* s : {&t->fp32, &t->fp16_unscaled, &t->fp16_scaled, &t->bf16})
    rows.push_back({s->label, fmt::format("{:.4g}", s->final_loss),
                    fmt::format("{:.3g}", s->final_loss / t->fp32.final_loss), percent_text(s->underflow_fraction, 2),
                    std::to_string(s->skipped_steps)});
  draw_columns_table("finals",
                     {"run", "final loss (whole data set)", "x fp32's", "gradient values lost to 0", "skipped"}, rows);
  ImGui::TextDisabled("The noise in the targets sets a floor no fit can pass: %.3g.", t->noise_floor);
}

void draw_bytes_table(const char* id, const char* title, const std::vector<precision::MemoryRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  int total = 0;
  for (const precision::MemoryRow& row : rows) {
    cells.push_back({row.what, std::to_string(row.bytes_per_parameter)});
    total += row.bytes_per_parameter;
  }
  cells.push_back({"model states per parameter", std::to_string(total)});
  draw_columns_table(id, {title, "bytes"}, cells);
}

void draw_memory_step(const ViewContext& ctx) {
  const PrecisionSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const float half = ImGui::GetContentRegionAvail().x * 0.5f;
  ImGui::BeginGroup();
  draw_bytes_table("mixed", "mixed-precision Adam", steps->mixed_bytes);
  ImGui::EndGroup();
  ImGui::SameLine(half);
  ImGui::BeginGroup();
  draw_bytes_table("fp32", "fp32 Adam", steps->fp32_bytes);
  ImGui::EndGroup();
  ImGui::Spacing();
  const double seven_b = steps->seven_b_parameters;
  draw_value_table(
      "totals",
      {
          {fmt::format("this lesson's MLP: {} parameters x 16", format_count(double(steps->mlp_parameters))),
           fmt::format("{} bytes", format_count(16.0 * double(steps->mlp_parameters)))},
          {"a 7B model: 7e9 x 16 (model states only; activations come on top)", format_bytes_both(16 * seven_b)},
          {fmt::format("ring all-reduce of fp32 gradients (28 GB), {} ranks: 2 (N-1)/N x K per rank",
                       steps->allreduce_ranks),
           format_bytes_both(steps->allreduce_fp32_bytes)},
          {"the same with 16-bit gradients (14 GB)", format_bytes_both(steps->allreduce_16bit_bytes)},
      });
  ImGui::Spacing();
  ImGui::TextWrapped(
      "Both columns come to 16 bytes: with Adam, 16-bit training saves no model-state memory. It halves the bytes of "
      "activations, of every gradient sent between ranks, and of every weight read, and tensor cores multiply 16-bit "
      "numbers several times faster. Sharding the 16 bytes across ranks is what ZeRO does (the zero lesson).");
  const PrecisionMeasured* m = ctx.result ? ctx.result->measured_as<PrecisionMeasured>() : nullptr;
  if (m == nullptr || !m->gpu) return;
  const precision::GpuFormats& g = *m->gpu;
  ImGui::Spacing();
  std::vector<std::vector<std::string>> rows;
  for (const precision::GpuGemmRate& r : g.gemm)
    rows.push_back({r.format, fmt::format("{:.1f}", r.tflops), fmt::format("{:.2g}", r.max_rel_err)});
  draw_columns_table(
      "gpu_gemm",
      {fmt::format("cuBLAS GEMM on this GPU, n = {}", g.gemm_n), "TFLOP/s (median)", "error from the inputs' rounding"},
      rows);
  ImGui::TextWrapped(
      "CUDA's own conversions of %lld fp32 values: %lld fp16 and %lld bf16 results differ from the "
      "lab's software rounding, bit for bit.",
      static_cast<long long>(g.values_checked), static_cast<long long>(g.fp16_mismatches),
      static_cast<long long>(g.bf16_mismatches));
}

}  // namespace

const StepViews& precision_step_views() {
  static const StepViews views{{"layouts", draw_layouts_step, StepShows::TheoryOnly},
                               {"rounding", draw_rounding_step, StepShows::TheoryOnly},
                               {"gradients", draw_gradients_step},
                               {"loss_scaling", draw_loss_scaling_step},
                               {"curves", draw_curves_step, StepShows::Measurement, CompareLayout::Overlaid},
                               {"memory", draw_memory_step}};
  return views;
}

}  // namespace dlsys::gui
