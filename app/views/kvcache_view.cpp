// Views of the kvcache lesson: prefill against decode, what the cache holds per layer and token, the formula with the
// current numbers, weights + KV + workspace against GPU memory, a paged cache's blocks against a reservation, and the
// live decoder's time per token with and without its cache.
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

namespace dlsys::gui {

namespace {

using kvcache::Sizing;
using kvcache::SizingQuery;

// H100 SXM memory bandwidth from NVIDIA's datasheet (COURSE.md section 5, [EXT]): a floor for a decode step's time.
constexpr double kH100BandwidthBytesPerS = 3.35e12;

std::string exact_bytes(std::int64_t bytes) {
  return bytes == 0 ? "0 B" : fmt::format("{} B = {}", format_count(double(bytes)), format_bytes_both(double(bytes)));
}

float plot_height_leaving(int table_rows) {
  const float avail = ImGui::GetContentRegionAvail().y;
  return std::max(avail * 0.55f, avail - (table_rows + 0.5f) * ImGui::GetFrameHeightWithSpacing());
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

// A row of token cells; `fill(i)` picks each cell's colour (0 = empty). Returns the height used.
template <typename Fill>
float draw_cells(ImDrawList* draw, ImVec2 origin, int count, float cell, Fill fill) {
  const float s = ui_scale();
  for (int i = 0; i < count; ++i) {
    const ImVec2 a{origin.x + i * cell, origin.y}, b{a.x + cell - 3 * s, a.y + cell - 3 * s};
    const ImU32 color = fill(i);
    draw->AddRectFilled(a, b, color ? color : with_alpha(muted_text_color(), 0.15f), 3 * s);
  }
  return cell;
}

void draw_prefill_decode_step(const ViewContext& ctx, const kvcache::KvCacheSteps&, const SizingQuery& q,
                              const Sizing& sz) {
  constexpr int kPromptCells = 10, kDecodeCells = 14;
  const int generated = static_cast<int>(ctx.step_time_s / 0.6) % (kDecodeCells + 3);
  const float s = ui_scale();
  const float cell =
      std::clamp(ImGui::GetContentRegionAvail().x / (kPromptCells + kDecodeCells + 2.0f), 14 * s, 40 * s);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImU32 prefill = series_color(0), decode = series_color(1);
  draw->AddText({o.x, o.y}, text_color(), "prefill: the whole prompt in one pass (matrix x matrix)");
  const float row_y = o.y + ImGui::GetTextLineHeightWithSpacing();
  draw_cells(draw, {o.x, row_y}, kPromptCells, cell, [&](int) { return prefill; });
  draw_cells(draw, {o.x + (kPromptCells + 1) * cell, row_y}, kDecodeCells, cell, [&](int i) {
    return i < generated ? (i == generated - 1 ? highlight_color() : with_alpha(decode, 0.8f)) : 0u;
  });
  ImGui::Dummy({(kPromptCells + kDecodeCells + 2) * cell, row_y + cell + 4 * s - o.y});
  ImGui::TextWrapped(
      "decode: one token per step (matrix x vector); every step reads all the weights and the whole cache.");
  ImGui::Spacing();

  // One decode step for the whole batch reads every weight once and every sequence's cache once.
  const double step_bytes = double(sz.weights_bytes) + double(sz.kv_bytes);
  const double step_flops = 2.0 * double(sz.parameters) * double(q.batch);
  const double prefill_flops = 2.0 * double(sz.parameters) * double(q.batch) * double(q.seq);
  draw_value_table(
      "decode",
      {
          {"decode step reads: weights + KV cache", format_bytes_both(step_bytes)},
          {"decode step work: about 2 x parameters x batch", fmt::format("{} FLOP", format_count(step_flops))},
          {"decode arithmetic intensity", fmt::format("{:.3g} FLOP/byte (memory-bound)", step_flops / step_bytes)},
          {"prefill of seq tokens, same weights read once",
           fmt::format("{} FLOP/byte", format_number(prefill_flops / double(sz.weights_bytes), 3))},
          {"decode floor at 3.35 TB/s (H100 SXM datasheet)",
           format_duration_us(step_bytes / kH100BandwidthBytesPerS * 1e6) + " per token"},
      });
}

void draw_cache_contents_step(const ViewContext& ctx, const kvcache::KvCacheSteps&, const SizingQuery& q,
                              const Sizing& sz) {
  const kvcache::ModelConfig& m = q.model;
  const int layers_shown = static_cast<int>(std::min<std::int64_t>(m.layers, 8));
  constexpr int kTokensShown = 16;
  const int tokens = 1 + static_cast<int>(ctx.step_time_s / 0.5) % kTokensShown;
  const float s = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float cell =
      std::clamp(std::min(avail.x * 0.8f / (kTokensShown + 4), avail.y * 0.5f / (layers_shown + 2)), 14 * s, 44 * s);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float label_w = ImGui::CalcTextSize("layer 000").x + 8 * s;
  const ImU32 k_color = series_color(0), v_color = series_color(1);
  for (int l = 0; l < layers_shown; ++l) {
    const float y = o.y + l * cell;
    const std::int64_t layer = l == layers_shown - 1 ? m.layers : l + 1;  // the last row stands for the last layer
    draw->AddText({o.x, y + cell * 0.25f}, muted_text_color(), fmt::format("layer {}", layer).c_str());
    for (int t = 0; t < tokens; ++t) {
      const ImVec2 a{o.x + label_w + t * cell, y}, b{a.x + cell - 3 * s, a.y + cell - 3 * s};
      const float mid = (a.x + b.x) / 2;
      const float alpha = t == tokens - 1 ? 1.0f : 0.7f;
      draw->AddRectFilled(a, {mid, b.y}, with_alpha(k_color, alpha), 2 * s);
      draw->AddRectFilled({mid, a.y}, b, with_alpha(v_color, alpha), 2 * s);
      if (t == tokens - 1) draw->AddRect(a, b, highlight_color(), 2 * s, 0, 2 * s);
    }
  }
  if (m.layers > layers_shown)
    draw->AddText({o.x, o.y + layers_shown * cell}, muted_text_color(),
                  fmt::format("(rows show layers 1 to {} and {}; all {} layers hold the same)", layers_shown - 1,
                              m.layers, m.layers)
                      .c_str());
  ImGui::Dummy({label_w + kTokensShown * cell, (layers_shown + 1) * cell});
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(k_color), "K");
  ImGui::SameLine();
  ImGui::TextUnformatted("and");
  ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(v_color), "V");
  ImGui::SameLine();
  ImGui::TextWrapped(
      "of each token in each layer. The newest token (outlined) appends its column; older ones are only read.");
  const std::int64_t per_cell = sz.bytes_per_token / m.layers;
  draw_value_table("cell",
                   {
                       {fmt::format("one cell: 2 x {} KV heads x {} x {} bits", m.kv_heads, m.head_dim, q.kv_type.bits),
                        exact_bytes(per_cell)},
                       {fmt::format("one token, all {} layers", m.layers), exact_bytes(sz.bytes_per_token)},
                       {fmt::format("{} tokens shown, one sequence", tokens), exact_bytes(sz.bytes_per_token * tokens)},
                   });
}

void draw_formula_step(const ViewContext&, const kvcache::KvCacheSteps& steps, const SizingQuery& q, const Sizing& sz) {
  const kvcache::ModelConfig& m = q.model;
  heading(fmt::format("{}, {}: {} layers, {} KV heads x {}", m.name, q.kv_type.name, m.layers, m.kv_heads, m.head_dim));
  mono_line(fmt::format("per token = 2 x {} layers x {} KV heads x {} x {} bits / 8", m.layers, m.kv_heads, m.head_dim,
                        q.kv_type.bits));
  mono_line("          = " + exact_bytes(sz.bytes_per_token));
  mono_line(fmt::format("cache     = {} B x {} tokens x batch {}", format_count(double(sz.bytes_per_token)),
                        format_count(double(sz.cached_tokens)), format_count(double(q.batch))));
  mono_line("          = " + exact_bytes(sz.kv_bytes));
  if (m.sliding_window > 0 && q.seq > m.sliding_window)
    ImGui::TextDisabled("the %lld-token sliding window keeps %lld of the %lld tokens", (long long)m.sliding_window,
                        (long long)sz.cached_tokens, (long long)q.seq);
  if (m.kv_heads < m.heads)
    ImGui::TextDisabled("grouped-query attention: counting all %lld query heads would give %s", (long long)m.heads,
                        format_bytes_both(double(sz.kv_bytes) * double(m.heads) / double(m.kv_heads)).c_str());

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
  spec.size = {0, ImGui::GetContentRegionAvail().y};
  draw_plot("kv_vs_seq", spec);
}

void draw_fit_step(const ViewContext&, const kvcache::KvCacheSteps& steps, const SizingQuery& q, const Sizing& sz) {
  const float s = ui_scale();
  const double total = double(sz.total_bytes), gpu = double(sz.gpu_bytes);
  const double full = std::max({total, gpu, 1.0}) * 1.08;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float width = avail.x - 20 * s, bar_h = std::clamp(avail.y * 0.14f, 28 * s, 70 * s);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float top = o.y + ImGui::GetTextLineHeightWithSpacing();
  auto px = [&](double bytes) { return o.x + float(bytes / full) * width; };
  struct Part {
    const char* name;
    double bytes;
    ImU32 color;
  };
  const Part parts[] = {{"weights", double(sz.weights_bytes), series_color(0)},
                        {"KV cache", double(sz.kv_bytes), series_color(1)},
                        {"workspace", double(sz.workspace_bytes), series_color(2)}};
  double at = 0;
  for (const Part& part : parts) {
    const float x0 = px(at), x1 = px(at + part.bytes);
    draw->AddRectFilled({x0, top}, {x1, top + bar_h}, part.color);
    if (x1 - x0 > ImGui::CalcTextSize(part.name).x + 6 * s)
      draw->AddText({x0 + 4 * s, top + bar_h / 2 - ImGui::GetTextLineHeight() / 2}, IM_COL32(0, 0, 0, 255), part.name);
    at += part.bytes;
  }
  // The memory to fit into, and the usual card sizes for reference.
  for (double card_gb : {24.0, 40.0, 80.0, 141.0}) {
    const double bytes = card_gb * kBytesPerGB;
    if (bytes > full) continue;
    draw->AddLine({px(bytes), top - 4 * s}, {px(bytes), top + bar_h + 4 * s}, with_alpha(muted_text_color(), 0.6f),
                  1 * s);
    draw->AddText({px(bytes) + 2 * s, top + bar_h + 4 * s}, muted_text_color(),
                  fmt::format("{:.0f} GB", card_gb).c_str());
  }
  const ImU32 limit = sz.total_bytes <= sz.gpu_bytes ? theory_color() : warning_color();
  draw->AddLine({px(gpu), top - 10 * s}, {px(gpu), top + bar_h + 10 * s}, limit, 3 * s);
  draw->AddText({o.x, o.y}, text_color(),
                fmt::format("{} of {} ({}): {}", format_bytes_both(total), format_bytes_both(gpu), steps.memory_label,
                            sz.total_bytes <= sz.gpu_bytes ? "fits" : "does NOT fit")
                    .c_str());
  ImGui::Dummy({width, top - o.y + bar_h + 1.8f * ImGui::GetTextLineHeightWithSpacing()});
  for (const Part& part : parts) {  // the legend: colours of the bar's parts
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(part.color), "%s", "#");
    ImGui::SameLine();
    ImGui::TextUnformatted(part.name);
    ImGui::SameLine();
  }
  ImGui::TextDisabled("| line: memory to fit into");

  const std::string max_seq = sz.max_seq_fit < 0 ? "any length: the sliding window caps the cache"
                                                 : format_count(double(sz.max_seq_fit)) + " tokens";
  draw_value_table(
      "fit",
      {
          {fmt::format("weights: {} parameters x {} bits", format_count(double(sz.parameters)), q.weights_type.bits),
           exact_bytes(sz.weights_bytes)},
          {"KV cache", exact_bytes(sz.kv_bytes)},
          {"workspace allowance", exact_bytes(sz.workspace_bytes)},
          {"total", exact_bytes(sz.total_bytes)},
          {"memory to fit into", exact_bytes(sz.gpu_bytes)},
          {fmt::format("largest batch at {} tokens", format_count(double(q.seq))),
           format_count(double(sz.max_batch_fit))},
          {fmt::format("longest context at batch {}", q.batch), max_seq},
      });
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
  const int sequences_shown = static_cast<int>(std::min<std::int64_t>(q.batch, 2));
  float y = o.y;
  for (int seqi = 0; seqi < sequences_shown; ++seqi) y = draw_sequence_rows(canvas, seqi, q, sz, y);
  y = draw_last_blocks(canvas, q, sz, y);
  if (q.batch > sequences_shown)
    canvas.draw->AddText(
        {o.x, y}, muted_text_color(),
        fmt::format("... and {} more sequences like these", format_count(double(q.batch - sequences_shown))).c_str());
  ImGui::Dummy({width, y - o.y + ImGui::GetTextLineHeightWithSpacing()});
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
  if (!m || !t) return draw_needs_run("the decoder's time per token with and without its KV cache");
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
  spec.size = {0, plot_height_leaving(4)};
  draw_plot("live", spec);
  draw_value_table(
      "live", {
                  {fmt::format("last token (position {}): cached / recomputing", m->last_position),
                   fmt::format("{} / {} = {:.1f}x (expected at least {:.0f}x)", format_duration_us(m->decode_us_cached),
                               format_duration_us(m->decode_us_uncached), m->speedup, m->speedup_bar)},
                  {"KV cache allocated (ledger) / formula",
                   fmt::format("{} / {} B: {}", format_count(double(m->kv_allocated_bytes)),
                               format_count(double(t->live_kv_bytes)), m->kv_matches_formula ? "equal" : "DIFFERENT")},
                  {"same tokens with and without the cache",
                   fmt::format("{} (logits within {:.1e})", m->tokens_match ? "yes" : "NO", m->max_abs_logit_diff)},
                  {"FLOPs of the last step, recomputing / cached", fmt::format("{:.1f}x", t->live_flops_ratio_last)},
              });
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
