// Views of the kvcache lesson: prefill against decode on the chosen GPU's roofline, what the cache holds per layer and
// token, the formula with the current numbers, weights + KV + workspace against GPU memory, a paged cache's blocks
// against a reservation, and the live decoder's time per token with and without its cache. Every number comes from
// the step data or the run; the views only lay it out.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/view.h"
#include "engine/errors.h"
#include "engine/units.h"
#include "lessons/kvcache/kvcache_lesson.h"
#include "lessons/kvcache/kvcache_steps.h"
#include "lessons/kvcache/kvcache_values.h"
#include "lessons/kvcache/model_notes.h"

namespace dlsys::gui {

namespace {

using kvcache::Sizing;
using kvcache::SizingQuery;

std::string exact_bytes(std::int64_t bytes) {
  return bytes == 0 ? "0 B" : fmt::format("{} B = {}", format_count(double(bytes)), format_bytes_both(double(bytes)));
}

void heading(const std::string& text) {
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopFont();
}

void mono_line(const std::string& text) {
  ImGui::PushFont(mono_font());
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopFont();
}

// Wrapped at the current wrap position (the view's edge unless a caller narrowed it).
void muted_wrapped(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(muted_text_color()));
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

void highlighted_wrapped(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(highlight_color()));
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

ImU32 empty_cell_color() { return with_alpha(muted_text_color(), 0.15f); }

// A row of token cells; `fill(i)` picks each cell's colour (0 = empty). Returns the height used.
template <typename Fill>
float draw_cells(ImDrawList* draw, ImVec2 origin, int count, float cell, Fill fill) {
  const float s = ui_scale();
  for (int i = 0; i < count; ++i) {
    const ImVec2 a{origin.x + i * cell, origin.y}, b{a.x + cell - 3 * s, a.y + cell - 3 * s};
    const ImU32 color = fill(i);
    draw->AddRectFilled(a, b, color ? color : empty_cell_color(), 3 * s);
  }
  return cell;
}

// Prompt cells, then generated cells appearing one per animation tick; the newest outlined.
void draw_token_strip(const ViewContext& ctx) {
  constexpr int kPromptCells = 10, kDecodeCells = 14;
  const int generated = static_cast<int>(ctx.step_time_s / kAnimationTickS) % (kDecodeCells + 3);
  const float s = ui_scale();
  const float cell =
      std::clamp(ImGui::GetContentRegionAvail().x / (kPromptCells + kDecodeCells + 2.0f), 14 * s, 32 * s);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImU32 prefill = series_color(0), decode = with_alpha(series_color(1), 0.8f);
  draw_cells(draw, o, kPromptCells, cell, [&](int) { return prefill; });
  const ImVec2 decode_origin{o.x + (kPromptCells + 1) * cell, o.y};
  draw_cells(draw, decode_origin, kDecodeCells, cell, [&](int i) { return i < generated ? decode : 0u; });
  if (generated > 0) {
    const ImVec2 a{decode_origin.x + (generated - 1) * cell, o.y};
    draw->AddRect(a, {a.x + cell - 3 * s, a.y + cell - 3 * s}, highlight_color(), 3 * s, 0, 2.5f * s);
  }
  ImGui::Dummy({(kPromptCells + kDecodeCells + 2) * cell, cell + 4 * s});
  draw_color_key({{prefill, "prompt: prefill, all at once"},
                  {decode, "generated: decode, one per step"},
                  {decode, "newest token", highlight_color()},
                  {empty_cell_color(), "not generated yet"}});
}

// Prefill and one decode step on the GPU's roofline: the roof, the ridge, and the two phases as points.
void draw_roofline_plot(const kvcache::DecodeRoofline& r, ImVec2 size) {
  PlotSpec spec{fmt::format("{} roofline", r.gpu.name),
                {"arithmetic intensity", "FLOP/byte", true},
                {"attainable", "TFLOP/s", true},
                {},
                {}};
  spec.lines.push_back({"roof", theory_color(), SeriesStyle::Line, false, false, r.roof});
  auto point = [](const kvcache::PhaseCost& phase) {
    const double y = phase.attainable_tflops;
    return std::vector<SeriesPoint>{{phase.intensity, y, y, y}};
  };
  spec.lines.push_back({"prefill", series_color(0), SeriesStyle::Markers, false, false, point(r.prefill)});
  spec.lines.push_back({"decode step", series_color(1), SeriesStyle::Markers, false, false, point(r.decode)});
  spec.guides.push_back({true, r.ridge_flop_per_byte, "ridge", muted_text_color()});
  spec.size = size;
  draw_plot("roofline", spec);
}

std::vector<std::pair<std::string, std::string>> decode_rows(const kvcache::DecodeRoofline& r, const SizingQuery& q) {
  const kvcache::PhaseCost& d = r.decode;
  auto verdict = [](const kvcache::PhaseCost& phase) {
    return fmt::format("{:.3g}{}", phase.intensity, phase.bound.empty() ? "" : ": " + phase.bound);
  };
  std::vector<std::pair<std::string, std::string>> rows = {
      {"weights read per decode step", format_bytes_decimal(d.weight_bytes)},
      {fmt::format("cache read ({} x {} tokens)", q.batch, format_count(double(q.seq))),
       format_bytes_decimal(d.kv_bytes)},
      {"FLOPs per decode step", fmt::format("{:.3g}", d.flops)},
      {"decode: FLOP per byte", verdict(d)},
      {"prefill: FLOP per byte", verdict(r.prefill)},
  };
  if (r.has_gpu)
    rows.push_back({fmt::format("ridge ({:g} TFLOP/s / {:g} TB/s)", r.gpu.peak_tflops, r.gpu.bandwidth_tbps),
                    fmt::format("{:.0f} FLOP per byte", r.ridge_flop_per_byte)});
  rows.push_back({"decode, weights alone", fmt::format("{:.3g} (dense 16-bit: the batch)", r.weights_only_intensity)});
  if (q.model.experts.any())
    rows.push_back(
        {"experts read per layer, at most", fmt::format("{} of {}", d.experts_reached, q.model.experts.routed)});
  if (r.has_gpu) rows.push_back({"one decode step, at least", format_duration_us(d.roofline_seconds * 1e6)});
  return rows;
}

// The width draw_value_table will take for these rows: the longest label and value, plus the cells' padding.
float value_table_width(const std::vector<std::pair<std::string, std::string>>& rows) {
  float label = 0, value = 0;
  for (const auto& row : rows) label = std::max(label, ImGui::CalcTextSize(row.first.c_str()).x);
  ImGui::PushFont(mono_font());
  for (const auto& row : rows) value = std::max(value, ImGui::CalcTextSize(row.second.c_str()).x);
  ImGui::PopFont();
  return label + value + 4 * ImGui::GetStyle().CellPadding.x + ImGui::GetStyle().ItemSpacing.x;
}

void draw_prefill_decode_step(const ViewContext& ctx, const kvcache::KvCacheSteps& steps, const SizingQuery& q,
                              const Sizing&) {
  draw_token_strip(ctx);
  ImGui::Spacing();
  const kvcache::DecodeRoofline& r = steps.roofline;
  if (!r.known) {
    highlighted_wrapped("Arithmetic intensity not computed: " + r.not_known + ".");
    return;
  }
  const auto rows = decode_rows(r, q);
  if (!r.has_gpu) {
    draw_value_table("decode", rows);
    muted_wrapped("This machine has no datasheet peak here, so there is no ridge to compare with: choose a GPU.");
    return;
  }
  // Table and roofline side by side where both fit; else the roofline, the step's main figure, first and the table
  // under it (the view scrolls to it).
  const float table_width = value_table_width(rows);
  const bool side_by_side = ImGui::GetContentRegionAvail().x >= table_width + 22 * ImGui::GetFontSize();
  if (!side_by_side) draw_roofline_plot(r, {0, main_figure_height()});
  ImGui::BeginGroup();
  if (side_by_side) ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + table_width);
  draw_value_table("decode", rows);
  muted_wrapped(r.gpu.source + ".");
  if (side_by_side) ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  if (side_by_side) {
    ImGui::SameLine(0, 12 * ui_scale());
    draw_roofline_plot(r, {0, plot_height_leaving(0)});
  }
}

// What one cell of the grid holds: a key and a value (standard), or a latent and a rotary key (latent attention).
struct CellParts {
  std::string first, second;  // names in the colour key
  float first_share;          // the first part's share of the cell's width
  ImU32 first_color, second_color;
};

CellParts cell_parts(const kvcache::ModelConfig& m) {
  if (m.attention == kvcache::AttentionKind::Latent) {
    const double latent = double(m.latent.kv_lora_rank), rope = double(m.latent.qk_rope_head_dim);
    return {fmt::format("latent c_KV ({} wide)", m.latent.kv_lora_rank),
            fmt::format("rotary key ({} wide, shared by all heads)", m.latent.qk_rope_head_dim),
            std::clamp(float(latent / (latent + rope)), 0.5f, 0.75f), series_color(0), series_color(2)};
  }
  return {fmt::format("K: {} KV heads x {}", m.kv_heads, m.head_dim),
          fmt::format("V: {} KV heads x {}", m.kv_heads, m.head_dim), 0.5f, series_color(0), series_color(1)};
}

void draw_cache_contents_step(const ViewContext& ctx, const kvcache::KvCacheSteps&, const SizingQuery& q,
                              const Sizing& sz) {
  const kvcache::ModelConfig& m = q.model;
  const int layers_shown = static_cast<int>(std::min<std::int64_t>(m.layers, 8));
  constexpr int kTokensShown = 16;
  const int tokens = 1 + static_cast<int>(ctx.step_time_s / kAnimationTickS) % kTokensShown;
  const float s = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float label_w = ImGui::CalcTextSize("layer 000").x + 8 * s;
  const float cell = std::clamp(std::min((avail.x - label_w) / (kTokensShown + 1), avail.y * 0.5f / (layers_shown + 2)),
                                14 * s, 44 * s);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const CellParts parts = cell_parts(m);
  for (int l = 0; l < layers_shown; ++l) {
    const float y = o.y + l * cell;
    const std::int64_t layer = l == layers_shown - 1 ? m.layers : l + 1;  // the last row stands for the last layer
    draw->AddText({o.x, y + cell * 0.25f}, muted_text_color(), fmt::format("layer {}", layer).c_str());
    for (int t = 0; t < tokens; ++t) {
      const ImVec2 a{o.x + label_w + t * cell, y}, b{a.x + cell - 3 * s, a.y + cell - 3 * s};
      const float split = a.x + (b.x - a.x) * parts.first_share;
      const float alpha = t == tokens - 1 ? 1.0f : 0.7f;
      draw->AddRectFilled(a, {split, b.y}, with_alpha(parts.first_color, alpha), 2 * s);
      draw->AddRectFilled({split, a.y}, b, with_alpha(parts.second_color, alpha), 2 * s);
      if (t == tokens - 1) draw->AddRect(a, b, highlight_color(), 2 * s, 0, 2 * s);
    }
  }
  float below = layers_shown * cell;
  if (m.layers > layers_shown) {
    draw->AddText({o.x, o.y + below + 2 * s}, muted_text_color(),
                  fmt::format("(rows show layers 1 to {} and {}; all {} layers hold the same)", layers_shown - 1,
                              m.layers, m.layers)
                      .c_str());
    below += ImGui::GetTextLineHeightWithSpacing();
  }
  ImGui::Dummy({label_w + kTokensShown * cell, below + 4 * s});
  draw_color_key({{parts.first_color, parts.first},
                  {parts.second_color, parts.second},
                  {with_alpha(parts.first_color, 0.7f), "newest token, just appended", highlight_color()}});
  ImGui::TextWrapped(
      "One column per token, one row per layer. Older columns are only read; nothing stored is ever "
      "recomputed.");
  const std::int64_t per_cell = sz.bytes_per_token / m.layers;
  const std::string cell_formula =
      m.attention == kvcache::AttentionKind::Latent
          ? fmt::format("one cell: ({} latent + {} rotary key) x {} bits", m.latent.kv_lora_rank,
                        m.latent.qk_rope_head_dim, q.kv_type.bits)
          : fmt::format("one cell: 2 x {} KV heads x {} x {} bits", m.kv_heads, m.head_dim, q.kv_type.bits);
  draw_value_table("cell",
                   {
                       {cell_formula, exact_bytes(per_cell)},
                       {fmt::format("one token, all {} layers", m.layers), exact_bytes(sz.bytes_per_token)},
                       {fmt::format("{} tokens shown, one sequence", tokens), exact_bytes(sz.bytes_per_token * tokens)},
                   });
}

void draw_notes(const kvcache::KvCacheSteps& steps, bool about_weights) {
  for (const kvcache::ModelNote& note : steps.notes)
    if (note.about_weights == about_weights) (note.leaves_out ? highlighted_wrapped : muted_wrapped)(note.text);
}

void draw_formula_lines(const kvcache::KvCacheSteps& steps, const SizingQuery& q, const Sizing& sz) {
  const kvcache::ModelConfig& m = q.model;
  const bool latent = m.attention == kvcache::AttentionKind::Latent;
  if (latent) {
    heading(fmt::format("{}, {}: {} layers, latent attention", m.name, q.kv_type.name, m.layers));
    mono_line(fmt::format("per token = ({} latent + {} rotary key) x {} layers x {} bits / 8", m.latent.kv_lora_rank,
                          m.latent.qk_rope_head_dim, m.layers, q.kv_type.bits));
  } else {
    heading(
        fmt::format("{}, {}: {} layers, {} KV heads x {}", m.name, q.kv_type.name, m.layers, m.kv_heads, m.head_dim));
    mono_line(fmt::format("per token = 2 x {} layers x {} KV heads x {} x {} bits / 8", m.layers, m.kv_heads,
                          m.head_dim, q.kv_type.bits));
  }
  mono_line("          = " + exact_bytes(sz.bytes_per_token));
  mono_line(fmt::format("cache     = {} B x {} tokens x batch {}", format_count(double(sz.bytes_per_token)),
                        format_count(double(sz.cached_tokens)), format_count(double(q.batch))));
  mono_line("          = " + exact_bytes(sz.kv_bytes));
  if (m.sliding_window > 0 && q.seq > m.sliding_window)
    muted_wrapped(fmt::format("the {}-token sliding window keeps {} of the {} tokens", m.sliding_window,
                              sz.cached_tokens, q.seq));
  if (sz.per_head_kv_bytes > 0)
    muted_wrapped(fmt::format(
        "{}: a key and a value for each of the {} query heads would take {}, {:.3g} times as "
        "much",
        latent            ? "latent attention"
        : m.kv_heads == 1 ? "multi-query attention"
                          : "grouped-query attention",
        m.heads, format_bytes_both(double(sz.per_head_kv_bytes)), double(sz.per_head_kv_bytes) / double(sz.kv_bytes)));
  draw_notes(steps, false);
}

void draw_formula_step(const ViewContext&, const kvcache::KvCacheSteps& steps, const SizingQuery& q, const Sizing& sz) {
  const kvcache::ModelConfig& m = q.model;
  // Cache bytes against sequence length at this batch, one line per element type.
  PlotSpec spec{fmt::format("KV cache of {}, batch {}", m.name, q.batch),
                {"sequence length", "tokens", true},
                {"KV cache", "bytes", true},
                {},
                {}};
  int color = 0;
  for (const kvcache::CacheCurve& curve : steps.cache_curves)
    spec.lines.push_back({curve.type_name, curve.chosen ? highlight_color() : series_color(color++), SeriesStyle::Line,
                          false, false, curve.bytes});
  spec.guides.push_back({true, double(q.seq), fmt::format("seq {}", q.seq), theory_color()});
  spec.guides.push_back({false, double(sz.kv_bytes), format_bytes_both(double(sz.kv_bytes)), theory_color()});
  // Under the formula's lines the plot takes the rest of the view; in a short window those would leave it a strip,
  // so it comes first at the main figure's height.
  draw_context_and_figure([&] { draw_formula_lines(steps, q, sz); },
                          [&] {
                            spec.size = {0, figure_height_after_context(10 * ImGui::GetFontSize())};
                            draw_plot("kv_vs_seq", spec);
                          });
}

// The stack's parts: weights (when known), KV cache, workspace.
struct FitPart {
  std::string name;
  double bytes;
  ImU32 color;
};

std::vector<FitPart> fit_parts(const Sizing& sz) {
  std::vector<FitPart> parts;
  if (sz.weights_known) parts.push_back({"weights", double(sz.weights_bytes), series_color(0)});
  parts.push_back({"KV cache", double(sz.kv_bytes), series_color(1)});
  parts.push_back({"workspace", double(sz.workspace_bytes), series_color(2)});
  return parts;
}

// The parts stacked end to end against the memory line, with the usual card sizes marked (as sold: GB = 1e9 bytes).
void draw_fit_stack(const kvcache::KvCacheSteps& steps, const Sizing& sz, const std::vector<FitPart>& parts) {
  const float s = ui_scale();
  double stacked = 0;
  for (const FitPart& part : parts) stacked += part.bytes;
  const double gpu = double(sz.gpu_bytes);
  const double full = std::max({stacked, gpu, 1.0}) * 1.08;
  const std::string title =
      sz.weights_known ? fmt::format("{} of {} ({}): {}", format_bytes_both(stacked), format_bytes_both(gpu),
                                     steps.memory_label, sz.total_bytes <= sz.gpu_bytes ? "fits" : "does NOT fit")
                       : fmt::format("KV cache and workspace, {} of {} ({}); the weights are not known",
                                     format_bytes_both(stacked), format_bytes_both(gpu), steps.memory_label);
  ImGui::TextWrapped("%s", title.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float width = avail.x - 20 * s, stack_h = std::clamp(avail.y * 0.12f, 28 * s, 64 * s);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  const float top = o.y + 10 * s;
  auto px = [&](double bytes) { return o.x + float(bytes / full) * width; };
  double at = 0;
  for (const FitPart& part : parts) {
    const float x0 = px(at), x1 = px(at + part.bytes);
    draw->AddRectFilled({x0, top}, {x1, top + stack_h}, part.color);
    if (x1 - x0 > ImGui::CalcTextSize(part.name.c_str()).x + 6 * s)
      draw->AddText({x0 + 4 * s, top + stack_h / 2 - ImGui::GetTextLineHeight() / 2}, IM_COL32(0, 0, 0, 255),
                    part.name.c_str());
    at += part.bytes;
  }
  float label_right = o.x - 1;  // card labels that would overlap the previous one are left out
  for (double card_gb : {24.0, 40.0, 48.0, 80.0, 141.0}) {
    const double bytes = card_gb * kBytesPerGB;
    if (bytes > full) continue;
    const std::string label = fmt::format("{:.0f} GB", card_gb);
    draw->AddLine({px(bytes), top - 4 * s}, {px(bytes), top + stack_h + 4 * s}, with_alpha(muted_text_color(), 0.6f),
                  1 * s);
    if (px(bytes) + 2 * s <= label_right) continue;
    draw->AddText({px(bytes) + 2 * s, top + stack_h + 4 * s}, muted_text_color(), label.c_str());
    label_right = px(bytes) + 2 * s + ImGui::CalcTextSize(label.c_str()).x + 6 * s;
  }
  const bool fits = !sz.weights_known || sz.total_bytes <= sz.gpu_bytes;
  draw->AddLine({px(gpu), top - 10 * s}, {px(gpu), top + stack_h + 10 * s}, fits ? theory_color() : warning_color(),
                3 * s);
  ImGui::Dummy({width, top - o.y + stack_h + 1.4f * line_h});
  std::vector<ColorKeyEntry> key;
  for (const FitPart& part : parts) key.push_back({part.color, part.name});
  key.push_back({fits ? theory_color() : warning_color(), "memory to fit into (thick line)"});
  key.push_back({with_alpha(muted_text_color(), 0.6f), "cards as sold, GB = 1e9 bytes"});
  draw_color_key(key);
}

void draw_fit_step(const ViewContext&, const kvcache::KvCacheSteps& steps, const SizingQuery& q, const Sizing& sz) {
  draw_fit_stack(steps, sz, fit_parts(sz));
  ImGui::Spacing();
  std::vector<std::pair<std::string, std::string>> rows;
  if (sz.weights_known) {
    const kvcache::ParameterCount& p = sz.parameters;
    rows.push_back({fmt::format("weights: {} parameters x {} bits", format_count(double(p.total)), q.weights_type.bits),
                    exact_bytes(sz.weights_bytes)});
    if (q.model.experts.any())
      rows.push_back({"active per token (lookups and unused experts aside)",
                      p.active_known ? format_count(double(p.active)) + " parameters" : std::string("not computed")});
  } else {
    rows.push_back({"weights", "not computed"});
  }
  rows.push_back({"KV cache", exact_bytes(sz.kv_bytes)});
  rows.push_back({"workspace allowance", exact_bytes(sz.workspace_bytes)});
  rows.push_back({"total", sz.weights_known ? exact_bytes(sz.total_bytes) : std::string("not computed")});
  rows.push_back({"memory to fit into", exact_bytes(sz.gpu_bytes)});
  if (sz.weights_known) {
    rows.push_back({fmt::format("largest batch at {} tokens", format_count(double(q.seq))),
                    format_count(double(sz.max_batch_fit))});
    const std::string usable =
        sz.max_seq_usable < 0 ? std::string("any length") : format_count(double(sz.max_seq_usable)) + " tokens";
    rows.push_back({fmt::format("longest context at batch {}", q.batch),
                    sz.max_seq_usable == 0 ? std::string("none: no room is left beside the weights")
                                           : fmt::format("{} (limit: {})", usable, sz.max_seq_limited_by)});
    rows.push_back({fmt::format("memory alone allows at batch {}", q.batch),
                    sz.max_seq_fit < 0 ? std::string("any length: the window caps the cache")
                                       : format_count(double(sz.max_seq_fit)) + " tokens"});
    if (q.model.max_positions > 0)
      rows.push_back({"positions its config allows", format_count(double(q.model.max_positions))});
  }
  draw_value_table("fit", rows);
  draw_notes(steps, true);
}

// Where the paged step draws: tokens map to pixels so that the up-front reservation spans the width.
struct PagedCanvas {
  ImDrawList* draw;
  ImVec2 origin;
  float width, row_h;
  double tokens_per_px;
  float x_of(double tokens) const { return origin.x + float(tokens / tokens_per_px); }
};

// Grey is memory held but empty, whether in a paged block's tail or in an up-front reservation.
ImU32 used_color() { return series_color(1); }
ImU32 empty_color() { return with_alpha(muted_text_color(), 0.35f); }

// One sequence both ways: its paged blocks (one by one when wide enough), then its reservation. Returns the next y.
float draw_sequence_rows(const PagedCanvas& c, int index, const SizingQuery& q, const Sizing& sz, float y) {
  const float s = ui_scale();
  c.draw->AddText({c.origin.x, y}, text_color(),
                  fmt::format("sequence {}: paged, {} blocks of {} tokens", index + 1,
                              format_count(double(sz.paged_blocks_per_seq)), q.block_tokens)
                      .c_str());
  y += ImGui::GetTextLineHeightWithSpacing();
  if (double(q.block_tokens) / c.tokens_per_px >= 4 * s) {
    for (std::int64_t b = 0; b < sz.paged_blocks_per_seq; ++b) {
      const double start = double(b * q.block_tokens), end = double((b + 1) * q.block_tokens);
      const double filled = std::min<double>(end, double(sz.cached_tokens));
      c.draw->AddRectFilled({c.x_of(start), y}, {c.x_of(filled) - 1 * s, y + c.row_h}, used_color(), 2 * s);
      if (filled < end)
        c.draw->AddRectFilled({c.x_of(filled), y}, {c.x_of(end) - 1 * s, y + c.row_h}, empty_color(), 2 * s);
    }
  } else {
    c.draw->AddRectFilled({c.x_of(0), y}, {c.x_of(double(sz.cached_tokens)), y + c.row_h}, used_color(), 2 * s);
    const double blocks_end = double(sz.paged_blocks_per_seq * q.block_tokens);
    c.draw->AddRectFilled({c.x_of(double(sz.cached_tokens)), y},
                          {std::max(c.x_of(blocks_end), c.x_of(double(sz.cached_tokens)) + 2 * s), y + c.row_h},
                          empty_color());
  }
  y += c.row_h + 4 * s;
  c.draw->AddText(
      {c.origin.x, y}, text_color(),
      fmt::format("sequence {}: reserved up front for {} tokens", index + 1, format_count(double(sz.reserve_tokens)))
          .c_str());
  y += ImGui::GetTextLineHeightWithSpacing();
  c.draw->AddRectFilled({c.x_of(0), y}, {c.x_of(double(sz.cached_tokens)), y + c.row_h}, used_color(), 2 * s);
  c.draw->AddRectFilled({c.x_of(double(sz.cached_tokens)), y}, {c.x_of(double(sz.reserve_tokens)), y + c.row_h},
                        empty_color(), 2 * s);
  return y + c.row_h + ImGui::GetTextLineHeight();
}

// The last blocks of one sequence, enlarged: each slot is one token; the empty slots are the paged cache's waste.
float draw_last_blocks(const PagedCanvas& c, const SizingQuery& q, const Sizing& sz, float y) {
  const float s = ui_scale();
  const std::int64_t zoom_blocks = std::min<std::int64_t>(sz.paged_blocks_per_seq, 4);
  const int slots = static_cast<int>(std::min<std::int64_t>(q.block_tokens, 64));
  const float slot_w = std::min(14 * s, (c.width - zoom_blocks * 10 * s) / float(zoom_blocks * slots));
  c.draw->AddText({c.origin.x, y}, text_color(),
                  fmt::format("the last {} blocks of a sequence, one slot per token{}", zoom_blocks,
                              q.block_tokens > slots ? " (64 of each block's slots drawn)" : "")
                      .c_str());
  y += ImGui::GetTextLineHeightWithSpacing();
  for (std::int64_t b = 0; b < zoom_blocks; ++b) {
    const std::int64_t block = sz.paged_blocks_per_seq - zoom_blocks + b;
    const std::int64_t in_block = std::min(q.block_tokens, sz.cached_tokens - block * q.block_tokens);
    const float x0 = c.origin.x + b * (slots * slot_w + 10 * s);
    for (int t = 0; t < slots; ++t) {
      const std::int64_t token = q.block_tokens > slots ? std::int64_t(t) * q.block_tokens / slots : t;
      c.draw->AddRectFilled({x0 + t * slot_w, y}, {x0 + (t + 1) * slot_w - 1 * s, y + c.row_h},
                            token < in_block ? used_color() : empty_color(), 1 * s);
    }
    c.draw->AddRect({x0 - 1 * s, y - 1 * s}, {x0 + slots * slot_w, y + c.row_h + 1 * s}, text_color(), 2 * s);
  }
  return y + c.row_h + ImGui::GetTextLineHeight();
}

void draw_paged_step(const ViewContext&, const kvcache::KvCacheSteps&, const SizingQuery& q, const Sizing& sz) {
  const float s = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float width = avail.x - 20 * s;
  const PagedCanvas canvas{ImGui::GetWindowDrawList(), ImGui::GetCursorScreenPos(), width,
                           std::clamp(avail.y * 0.07f, 18 * s, 40 * s), double(sz.reserve_tokens) / width};
  const ImVec2 o = canvas.origin;
  // Two sequences show that each one wastes alike; where the view is short (large text), one keeps the table in view.
  const bool room_for_two = avail.y > 30 * ImGui::GetTextLineHeightWithSpacing();
  const int sequences_shown = static_cast<int>(std::min<std::int64_t>(q.batch, room_for_two ? 2 : 1));
  float y = o.y;
  for (int seqi = 0; seqi < sequences_shown; ++seqi) y = draw_sequence_rows(canvas, seqi, q, sz, y);
  y = draw_last_blocks(canvas, q, sz, y);
  if (q.batch > sequences_shown)
    canvas.draw->AddText(
        {o.x, y}, muted_text_color(),
        fmt::format("... and {} more {} like {}", format_count(double(q.batch - sequences_shown)),
                    q.batch - sequences_shown == 1 ? "sequence" : "sequences", sequences_shown == 1 ? "this" : "these")
            .c_str());
  ImGui::Dummy({width, y - o.y + ImGui::GetTextLineHeightWithSpacing()});
  draw_color_key(
      {{used_color(), q.model.attention == kvcache::AttentionKind::Latent ? "holds a token's latent and rotary key"
                                                                          : "holds a token's K and V"},
       {empty_color(), "held but empty: wasted"}});
  const double paged_share = sz.paged_bytes > 0 ? 100.0 * double(sz.paged_waste_bytes) / double(sz.paged_bytes) : 0.0;
  const double reserve_share =
      sz.reserved_bytes > 0 ? 100.0 * double(sz.reserve_waste_bytes) / double(sz.reserved_bytes) : 0.0;
  draw_value_table(
      "paged",
      {
          {fmt::format("blocks: ceil({} / {}) x batch {}", sz.cached_tokens, q.block_tokens, q.batch),
           format_count(double(sz.paged_blocks))},
          {fmt::format("paged: empty slots ({:.2g}% of blocks)", paged_share), exact_bytes(sz.paged_waste_bytes)},
          {fmt::format("reserved up front: unused ({:.2g}%)", reserve_share), exact_bytes(sz.reserve_waste_bytes)},
      });
  if (sz.paged_waste_bytes == 0 && sz.reserve_waste_bytes == 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(highlight_color()));
    ImGui::TextWrapped(
        "Here every sequence fills its reservation and its last block exactly, so nothing is wasted either way. Set "
        "the sequence length to, say, 1000 tokens to see both kinds of waste.");
    ImGui::PopStyleColor();
  }
}

void draw_live_step(const ViewContext& ctx) {
  const auto* m = ctx.result ? ctx.result->measured_as<kvcache::KvCacheMeasured>() : nullptr;
  const auto* t = ctx.result ? ctx.result->theory_as<kvcache::KvCacheTheory>() : nullptr;
  if (!m || !t) return draw_needs_run(ctx, "the decoder's time per token with and without its KV cache");
  PlotSpec spec{"Time per generated token", {"position", "tokens", false}, {"time per token", "us", true}, {}, {}};
  // Each way in its own colour: measured as markers, its FLOP count's shape as a dashed line of the same colour.
  int color = 0;
  for (const char* way : {"cached", "recompute"}) {
    if (const Series* measured = ctx.result->find_series(fmt::format("{}_time", way)))
      spec.lines.push_back(line_from_series(*measured, series_color(color)));
    if (const Series* shape = ctx.result->find_series(fmt::format("{}_flops_theory", way))) {
      PlotLine line = line_from_series(*shape, with_alpha(series_color(color), 0.7f));
      line.dashed = true;
      spec.lines.push_back(std::move(line));
    }
    ++color;
  }
  spec.size = {0, plot_height_leaving(m->meets_bar ? 4 : 6)};
  draw_plot("live", spec);
  draw_value_table(
      "live", {
                  {fmt::format("last token (position {}): cached / recomputing", m->last_position),
                   fmt::format("{} / {}: {:.1f}x faster with the cache", format_duration_us(m->decode_us_cached),
                               format_duration_us(m->decode_us_uncached), m->speedup)},
                  {"KV cache allocated (ledger) / formula",
                   fmt::format("{} / {} B: {}", format_count(double(m->kv_allocated_bytes)),
                               format_count(double(t->live_kv_bytes)), m->kv_matches_formula ? "equal" : "DIFFERENT")},
                  {"same tokens with and without the cache",
                   fmt::format("{} (logits within {:.1e})", m->tokens_match ? "yes" : "NO", m->max_abs_logit_diff)},
                  {"FLOPs of the last step, recomputing / cached", fmt::format("{:.1f}x", t->live_flops_ratio_last)},
              });
  if (!m->meets_bar)
    highlighted_wrapped(
        "The cache won by less than this lesson expects from the FLOP ratio, so something else weighs on the run: "
        "another busy process, or steps so small that fixed costs dominate (try more tokens).");
}

}  // namespace

namespace {

using SizingStep = void (*)(const ViewContext&, const kvcache::KvCacheSteps&, const SizingQuery&, const Sizing&);

// The sizing steps draw from the model's sizing, or say why there is none.
template <SizingStep draw>
void with_sizing(const ViewContext& ctx) {
  const kvcache::KvCacheSteps* steps = step_data_as<kvcache::KvCacheSteps>(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  draw(ctx, *steps, steps->query, steps->sizing);
}

}  // namespace

const StepViews& kvcache_step_views() {
  static const StepViews views{{"prefill_decode", with_sizing<draw_prefill_decode_step>},
                               {"cache_contents", with_sizing<draw_cache_contents_step>},
                               {"formula", with_sizing<draw_formula_step>},
                               {"fit", with_sizing<draw_fit_step>},
                               {"paged", with_sizing<draw_paged_step>},
                               {"live", draw_live_step}};
  return views;
}

}  // namespace dlsys::gui
