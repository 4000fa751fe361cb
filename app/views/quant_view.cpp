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
  if (!m) return draw_needs_run(ctx, "quantization error on the trained model's weights");
  const RunResult& r = *ctx.result;
  const char* granularities[] = {"tensor", "channel", "block"};
  static int scheme = 0;  // 0 absmax, 1 affine: which scheme both plots show
  if (!ctx.figure) {
    ImGui::RadioButton("absmax (symmetric)", &scheme, 0);
    ImGui::SameLine();
    ImGui::RadioButton("affine (zero point)", &scheme, 1);
  }
  const char* name = scheme == 0 ? "absmax" : "affine";
  PlotSpec mse{fmt::format("Weight MSE ({})", name), {"bits", "", false}, {"MSE", "", true}, {}, {}};
  PlotSpec out{fmt::format("Output relative error ({})", name), {"bits", "", false}, {"error", "", true}, {}, {}};
  for (int g = 0; g < 3; ++g) {
    const std::string key = fmt::format("{}_{}", name, granularities[g]);
    mse.lines.push_back(run_series_line(r, "mse_" + key, series_color(g), SeriesStyle::Markers, {.whiskers = true}));
    mse.lines.push_back(run_series_line(r, "noise_" + key, series_color(g), SeriesStyle::Line, {.dashed = true}));
    out.lines.push_back(
        run_series_line(r, "output_err_" + key, series_color(g), SeriesStyle::LineAndMarkers, {.whiskers = true}));
  }
  draw_plot_pair("mse", std::move(mse), "outputs", std::move(out), plot_height_leaving(4.5f));
  const std::string predicted = m->uniform_noise_mse ? sci(*m->uniform_noise_mse) : "- (nf4: uneven steps)";
  draw_value_table("chosen", {{"chosen scheme: weight MSE, measured / D^2 / 12 from its scales",
                               sci(m->weight_mse) + " / " + predicted},
                              {"chosen scheme: relative error of the outputs", sci(m->output_rel_err)},
                              {"the model's own loss in fp32 (for scale)", sci(m->model_final_loss)}});
}

void draw_outliers_step(const ViewContext& ctx) {
  const QuantMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run(ctx, "an outlier channel against int8 scales");
  const RunResult& r = *ctx.result;
  PlotSpec spec{fmt::format("Activations entering layer 2: largest |x| per channel (channel {} x {:g})",
                            m->outlier_channel, m->outlier_factor),
                {"channel", "", false},
                {"max |x|", "", true},
                {},
                {}};
  spec.lines.push_back(
      run_series_line(r, "activation_column_absmax", series_color(0), SeriesStyle::Markers, {.whiskers = true}));
  spec.guides.push_back({false, 6.0, "6.0: LLM.int8() keeps these in 16 bits", theory_color()});
  spec.size = {0, plot_height_leaving(6.5f)};
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
  const auto* run_theory = m ? ctx.result->theory_as<quant::QuantTheory>() : nullptr;
  if (!m || !run_theory) return draw_needs_run(ctx, "GEMV time for each format");
  const RunResult& r = *ctx.result;
  PlotSpec spec{fmt::format("y = W x, {0} x {0}, batch 1", run_theory->n),
                {"bytes read per weight", "B", true},
                {"time", "us", true},
                {},
                {}};
  spec.lines.push_back(run_series_line(r, "gemv_bandwidth_line", theory_color(), SeriesStyle::Line, {.dashed = true}));
  for (std::size_t i = 0; i < m->gemv.size(); ++i)
    spec.lines.push_back(
        run_series_line(r, "gemv_" + m->gemv[i].key, series_color(int(i)), SeriesStyle::Markers, {.whiskers = true}));
  spec.size = {0, plot_height_leaving(float(m->gemv.size()) + 2.5f)};
  draw_plot("gemv", spec);
  Table rows;
  for (const quant::GemvTiming& g : m->gemv)
    rows.push_back({g.label, format_number(g.bytes_per_weight, 3), format_duration_us(g.gemv_us),
                    fmt::format("{:.1f}", g.gbps), fmt::format("{:.2f}x", m->fp32_gemv_us / g.gemv_us),
                    g.wrong ? "WRONG" : fmt::format("{:.1e}", g.max_rel_err)});
  draw_columns_table("gemv_table", {"format", "bytes / weight", "median", "GB/s", "vs fp32", "error vs its reference"},
                     rows);
}

// Levels on a number line from -1 to 1: a tick per level, the code under it.
void draw_levels(const char* name, const std::vector<float>& levels, ImU32 color) {
  const float sc = ui_scale(), h = ImGui::GetTextLineHeight();
  const float label_w = ImGui::CalcTextSize("int4 absmax  ").x;
  const float width = ImGui::GetContentRegionAvail().x - label_w - 20 * sc;
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddText({o.x, o.y + h * 0.4f}, text_color(), name);
  const float x0 = o.x + label_w, y = o.y + h;
  draw->AddLine({x0, y}, {x0 + width, y}, muted_text_color(), 1.5f * sc);
  for (float level : levels) {
    const float x = x0 + (level + 1) / 2 * width;
    draw->AddLine({x, y - h * 0.7f}, {x, y + h * 0.7f}, color, 3 * sc);
  }
  ImGui::Dummy({label_w + width, 2.2f * h});
}

void draw_nf4_step(const ViewContext& ctx) {
  const QuantSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("NF4 (16 levels) and int4 absmax (15) on [-1, 1], times each block's absmax");
  ImGui::PopFont();
  draw_levels("NF4", s->nf4_levels, series_color(0));
  std::vector<float> integers;
  for (int k = -7; k <= 7; ++k) integers.push_back(float(k) / 7);
  draw_levels("int4 absmax", integers, series_color(1));  // 15 levels: -7 .. 7
  ImGui::PushFont(mono_font());
  for (std::size_t half = 0; half < 2; ++half) {  // two rows of eight: a line break never splits a number
    std::string listed = half == 0 ? "NF4 " : "    ";
    for (std::size_t i = 8 * half; i < 8 * half + 8 && i < s->nf4_levels.size(); ++i)
      listed += fmt::format("  {:+.4f}", s->nf4_levels[i]);
    ImGui::TextUnformatted(listed.c_str());
  }
  ImGui::PopFont();
  ImGui::Spacing();
  draw_value_table("overhead",
                   {{"an fp32 scale per 64 weights", fmt::format("{:.3f} bits per weight", s->nf4_overhead_bits)},
                    {"scales double-quantized: 8/64 + 32/(64 x 256)",
                     fmt::format("{:.3f} bits per weight", s->nf4_double_quant_overhead_bits)},
                    {"a 7B model in 16 / 8 / 4 bits",
                     fmt::format("{} / {} / {}", format_bytes_decimal(s->parameters * 2),
                                 format_bytes_decimal(s->parameters), format_bytes_decimal(s->parameters * 0.5))},
                    {"+ NF4's scales, before / after double quantization",
                     format_bytes_decimal(s->nf4_constants_bytes) + " / " +
                         format_bytes_decimal(s->nf4_double_quant_constants_bytes)},
                    {"int8 against fp32 / fp16", "4x / 2x smaller"}});
  const QuantMeasured* m = measured_of(ctx);
  if (!m) {
    ImGui::TextDisabled("Press Run to compare NF4 with int4 on the trained model's weights.");
    return;
  }
  ImGui::Spacing();
  draw_columns_table("nf4_measured", {"blocks of 64", "trained weights: MSE", "outputs", "normal weights: MSE"},
                     {{"int4 absmax", sci(m->mse_int4_absmax_block), sci(m->output_rel_err_int4_absmax_block),
                       sci(m->normal_mse_int4_absmax_block)},
                      {"NF4", sci(m->mse_nf4_block), sci(m->output_rel_err_nf4_block), sci(m->normal_mse_nf4_block)},
                      {"NF4, double-quantized scales", sci(m->mse_nf4_block_double_quant), "-",
                       sci(m->normal_mse_nf4_block_double_quant)}});
  ImGui::TextWrapped(
      "NF4's levels are quantiles of a normal distribution: it wins where weights are bell-shaped, as a large "
      "trained model's are (normal weights: %s of int4's error). This small model started from PyTorch's uniform "
      "initialisation and trained briefly; its weights are still nearly uniform, which evenly spaced integers fit "
      "better (%s of int4's error).",
      fmt::format("{:.0f}%", 100 * m->normal_mse_nf4_block / m->normal_mse_int4_absmax_block).c_str(),
      fmt::format("{:.0f}%", 100 * m->mse_nf4_block / m->mse_int4_absmax_block).c_str());
}

void draw_sparsity_step(const ViewContext& ctx) {
  const QuantSteps* s = steps_of(ctx);
  const QuantMeasured* m = measured_of(ctx);
  if (!m || !s) return draw_needs_run(ctx, "2:4 sparsity on the trained model's weights");
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
  static const StepViews views{{"why", draw_why_step, StepShows::TheoryOnly},
                               {"error", draw_error_step},
                               {"outliers", draw_outliers_step},
                               {"gemv", draw_gemv_step},
                               {"nf4", draw_nf4_step},
                               {"sparsity", draw_sparsity_step}};
  return views;
}

}  // namespace dlsys::gui
