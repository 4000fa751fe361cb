// Views of the quant lesson: decode's bytes per token, error against bits and granularity beside D^2 / 12, an outlier
// channel against per-tensor scales and LLM.int8()'s split, GEMV time against bytes per weight, NF4 and double
// quantization, and 2:4 sparsity drawn on the trained model's own weights.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/quant/quant_steps.h"
#include "lessons/quant/quant_values.h"

namespace dlsys::gui {

namespace {

using quant::QuantMeasured;
using quant::QuantSteps;
using Table = std::vector<std::vector<std::string>>;

const QuantSteps* steps_of(const ViewContext& ctx) { return step_data_as<QuantSteps>(ctx); }
const QuantMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->measured_as<QuantMeasured>() : nullptr;
}

float plot_height_leaving(float rows_below, float least) {
  const float avail = ImGui::GetContentRegionAvail().y;
  return std::max(avail * least, avail - rows_below * ImGui::GetFrameHeightWithSpacing());
}

PlotLine series_line(const RunResult& r, const std::string& id, ImU32 color, SeriesStyle style, bool dashed = false) {
  PlotLine line;
  if (const Series* s = r.find_series(id)) {
    line = line_from_series(*s, color);
    line.style = style;
    line.whiskers = style != SeriesStyle::Line && line.whiskers;
    line.dashed = dashed;
  }
  return line;
}

std::string sci(double v) { return fmt::format("{:.3g}", v); }

void draw_why_step(const ViewContext& ctx) {
  const QuantSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  ImGui::PushFont(heading_font());
  ImGui::TextWrapped("Decoding one token at batch 1 reads all %s weights once", format_count(s->parameters).c_str());
  ImGui::PopFont();
  Table rows;
  for (const quant::DecodeRow& d : s->decode)
    rows.push_back({d.format, format_number(d.bytes_per_weight, 3), format_bytes_decimal(d.model_bytes),
                    fmt::format("{:.2f} ms", d.ms_per_token), fmt::format("{:.0f}", d.tokens_per_s),
                    format_number(d.flop_per_byte, 3)});
  draw_columns_table(
      "decode",
      {"weights in", "bytes / weight", "7B model", "per token, at least", "tokens / s, at most", "FLOP / byte"}, rows);
  ImGui::Spacing();
  ImGui::TextWrapped(
      "Time per token >= model bytes / memory bandwidth, here an H100 SXM's %.2f TB/s (NVIDIA's datasheet). Its "
      "tensor cores need about %.0f FLOP per byte (989 TFLOP/s dense BF16 / 3.35 TB/s) to be the limit; at batch 1 "
      "decode does 2 FLOP per weight, so memory is the limit in every format, and fewer bytes per weight are "
      "fewer milliseconds per token. The chosen scheme (%s) stores %.4g bits per weight: %g for the code and %.4g "
      "for the scales.",
      s->bandwidth_gbps / 1e3, s->ridge_flop_per_byte, s->chosen_label.c_str(),
      s->chosen_code_bits + s->chosen_overhead_bits, s->chosen_code_bits, s->chosen_overhead_bits);
}

void draw_error_step(const ViewContext& ctx) {
  const QuantMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run("quantization error on the trained model's weights");
  const RunResult& r = *ctx.result;
  const char* granularities[] = {"tensor", "channel", "block"};
  PlotSpec mse{"Weight mean squared error, absmax", {"bits", "", false}, {"MSE", "", true}, {}, {}};
  PlotSpec out{"Relative error of the model's outputs, absmax", {"bits", "", false}, {"error", "", true}, {}, {}};
  for (int g = 0; g < 3; ++g) {
    const std::string key = fmt::format("absmax_{}", granularities[g]);
    mse.lines.push_back(series_line(r, "mse_" + key, series_color(g), SeriesStyle::Markers));
    mse.lines.push_back(series_line(r, "noise_" + key, series_color(g), SeriesStyle::Line, true));
    out.lines.push_back(series_line(r, "output_err_" + key, series_color(g), SeriesStyle::LineAndMarkers));
  }
  const float avail = plot_height_leaving(4.5f, 0.6f);
  const float half = ImGui::GetContentRegionAvail().x * 0.5f - ImGui::GetStyle().ItemSpacing.x;
  mse.size = {half, avail};
  out.size = {half, avail};
  draw_plot("mse", mse);
  ImGui::SameLine();
  draw_plot("outputs", out);
  const std::string predicted = m->uniform_noise_mse ? sci(*m->uniform_noise_mse) : "- (nf4: uneven steps)";
  draw_value_table("chosen", {{"chosen scheme: weight MSE, measured / D^2 / 12 from its scales",
                               sci(m->weight_mse) + " / " + predicted},
                              {"chosen scheme: relative error of the outputs", sci(m->output_rel_err)},
                              {"the model's own loss in fp32 (for scale)", sci(m->model_final_loss)}});
}

void draw_outliers_step(const ViewContext& ctx) {
  const QuantMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run("an outlier channel against int8 scales");
  const RunResult& r = *ctx.result;
  PlotSpec spec{fmt::format("Activations entering layer 2: largest |x| per channel (channel {} x {:g})",
                            m->outlier_channel, m->outlier_factor),
                {"channel", "", false},
                {"max |x|", "", true},
                {},
                {}};
  spec.lines.push_back(series_line(r, "activation_column_absmax", series_color(0), SeriesStyle::Markers));
  spec.guides.push_back({false, 6.0, "6.0: LLM.int8() keeps these in 16 bits", theory_color()});
  spec.size = {0, plot_height_leaving(6.5f, 0.45f)};
  draw_plot("columns", spec);
  draw_columns_table("outlier_errors", {"X quantized to int8 (W int8 per channel)", "relative error of X W^T"},
                     {{"one scale for the tensor, no outlier", sci(m->err_per_tensor_clean)},
                      {"one scale for the tensor, with the outlier", sci(m->err_per_tensor_outlier)},
                      {"one scale per token, with the outlier", sci(m->err_per_token_outlier)},
                      {fmt::format("LLM.int8(): {} channel{} with |x| >= 6 in fp16, the rest per token",
                                   m->split_columns, m->split_columns == 1 ? "" : "s"),
                       sci(m->err_llm_int8)}});
}

void draw_gemv_step(const ViewContext& ctx) {
  const QuantMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run("GEMV time for each format");
  const RunResult& r = *ctx.result;
  PlotSpec spec{fmt::format("y = W x at batch 1, {0} x {0}, weights flushed from the caches first", r.params.at("n")),
                {"bytes read per weight", "B", true},
                {"time", "us", true},
                {},
                {}};
  spec.lines.push_back(series_line(r, "gemv_bandwidth_line", theory_color(), SeriesStyle::Line, true));
  spec.lines.push_back(series_line(r, "gemv_time_vs_bytes", series_color(0), SeriesStyle::Markers));
  spec.size = {0, plot_height_leaving(float(m->gemv.size()) + 2.5f, 0.45f)};
  draw_plot("gemv", spec);
  Table rows;
  for (const quant::GemvTiming& g : m->gemv)
    rows.push_back({g.label, format_number(g.bytes_per_weight, 3), format_duration_us(g.us),
                    fmt::format("{:.1f}", g.gbps), fmt::format("{:.2f}x", m->fp32_gemv_us / g.us),
                    g.wrong ? "WRONG" : fmt::format("{:.1e}", g.max_rel_err)});
  draw_columns_table("gemv_table", {"format", "bytes / weight", "median", "GB/s", "vs fp32", "error vs its reference"},
                     rows);
}

void draw_nf4_step(const ViewContext& ctx) {
  const QuantSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  const float third = ImGui::GetContentRegionAvail().x / 3;
  ImGui::BeginGroup();
  Table levels;
  for (std::size_t i = 0; i < s->nf4_levels.size(); ++i)
    levels.push_back({std::to_string(i), fmt::format("{:+.6f}", s->nf4_levels[i])});
  draw_columns_table("levels", {"code", "NF4 level"}, levels);
  ImGui::EndGroup();
  ImGui::SameLine(third);
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(0);
  draw_value_table(
      "overhead",
      {{"fp32 scale per 64 weights", fmt::format("{:.3f} bits / weight", s->nf4_overhead_bits)},
       {"after double quantization", fmt::format("{:.3f} bits / weight", s->nf4_double_quant_overhead_bits)},
       {"7B in 16 bits", format_bytes_decimal(s->parameters * 2)},
       {"7B in 8 bits", format_bytes_decimal(s->parameters * 1)},
       {"7B in 4 bits", format_bytes_decimal(s->parameters * 0.5)},
       {"+ NF4 constants", format_bytes_decimal(s->nf4_constants_bytes)},
       {"+ after double quantization", format_bytes_decimal(s->nf4_double_quant_constants_bytes)},
       {"int8 against fp32 / fp16", "4x / 2x smaller"}});
  if (const QuantMeasured* m = measured_of(ctx)) {
    ImGui::Spacing();
    draw_value_table("nf4_measured", {{"trained weights, blocks of 64: int4 absmax MSE", sci(m->mse_int4_absmax_block)},
                                      {"NF4 MSE", sci(m->mse_nf4_block)},
                                      {"NF4, double-quantized scales", sci(m->mse_nf4_block_double_quant)},
                                      {"outputs: int4 absmax / NF4", sci(m->output_rel_err_int4_absmax_block) + " / " +
                                                                         sci(m->output_rel_err_nf4_block)}});
  } else {
    ImGui::TextDisabled("Press Run to compare NF4 with int4 on the trained model's weights.");
  }
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

void draw_sparsity_step(const ViewContext& ctx) {
  const QuantSteps* s = steps_of(ctx);
  const QuantMeasured* m = measured_of(ctx);
  if (!m || !s) return draw_needs_run("2:4 sparsity on the trained model's weights");
  const float sc = ui_scale();
  const int rows = m->sparse_sample_rows, cols = m->sparse_sample_cols;
  const float cell =
      std::clamp((ImGui::GetContentRegionAvail().x - 20 * sc) / float(std::max(cols, 1)), 24 * sc, 70 * sc);
  const float cell_h = ImGui::GetTextLineHeight() * 1.8f;
  ImGui::TextUnformatted("W2, top-left corner: each group of 4 keeps its 2 largest |w| (filled)");
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = std::size_t(r * cols + c);
      const ImVec2 a{o.x + c * cell + (c / 4) * 6 * sc, o.y + r * cell_h};
      const ImVec2 b{a.x + cell - 3 * sc, a.y + cell_h - 3 * sc};
      const bool kept = m->sparse_sample_kept[i] != 0;
      draw->AddRectFilled(a, b, kept ? with_alpha(series_color(0), 0.85f) : with_alpha(muted_text_color(), 0.15f),
                          3 * sc);
      const std::string label = fmt::format("{:.2f}", m->sparse_sample[i]);
      const ImVec2 size = ImGui::CalcTextSize(label.c_str());
      if (size.x < cell - 4 * sc)
        draw->AddText({a.x + (cell - 3 * sc - size.x) / 2, a.y + (cell_h - 3 * sc - size.y) / 2},
                      kept ? panel_color() : muted_text_color(), label.c_str());
    }
  ImGui::Dummy({cols * cell + (cols / 4) * 6 * sc, rows * cell_h + 4 * sc});
  draw_columns_table(
      "sparsity_errors", {"half of the weights zeroed", "weights, relative error", "outputs"},
      {{"2:4: the 2 largest of every 4", sci(m->sparse_2_4_weight_rel_err), sci(m->sparse_2_4_output_rel_err)},
       {"the largest half anywhere (unstructured)", sci(m->unstructured_half_weight_rel_err),
        sci(m->unstructured_half_output_rel_err)}});
  ImGui::TextWrapped(
      "Stored as 2:4 in fp16: 2 values of 2 bytes and a 2-bit position each per 4 weights = %.3f bytes per weight, "
      "against %.0f dense. Sparse tensor cores skip the zeros: half the multiplications of a dense GEMM.",
      s->sparse_2_4_bytes_per_weight, s->dense_fp16_bytes_per_weight);
}

}  // namespace

const StepViews& quant_step_views() {
  static const StepViews views{{"why", draw_why_step},   {"error", draw_error_step}, {"outliers", draw_outliers_step},
                               {"gemv", draw_gemv_step}, {"nf4", draw_nf4_step},     {"sparsity", draw_sparsity_step}};
  return views;
}

}  // namespace dlsys::gui
