// Views of the allreduce lesson: every rank's buffer before the exchange, what the obvious ways cost, the ring's
// reduce-scatter and all-gather step by step (drawn from the real ring's own step record), the cost model against
// measured times, and measured bus bandwidth against the copy ceiling.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <map>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/allreduce/allreduce_steps.h"
#include "lessons/allreduce/allreduce_values.h"

namespace dlsys::gui {

namespace {

using collectives::Algorithm;
using collectives::CollectiveRecord;
using collectives::Op;

constexpr double kSecondsPerStep = 1.8;  // auto-play speed of the ring

const allreduce::AllreduceSteps* steps_of(const ViewContext& ctx) {
  return step_data_as<allreduce::AllreduceSteps>(ctx);
}

std::string value_text(float v) { return fmt::format("{:g}", v); }

// Geometry of the rank-by-chunk grid, sized to the space available.
struct Grid {
  ImVec2 origin;
  float label_width, cell_width, cell_height, row_gap;
  int n;
  ImVec2 cell_min(int rank, int chunk) const {
    return {origin.x + label_width + chunk * cell_width, origin.y + rank * (cell_height + row_gap)};
  }
  ImVec2 cell_max(int rank, int chunk) const {
    const ImVec2 a = cell_min(rank, chunk);
    return {a.x + cell_width - 4 * ui_scale(), a.y + cell_height};
  }
  float height() const { return n * cell_height + (n - 1) * row_gap; }
};

Grid make_grid(int n, float widest_text, float max_height) {
  const float s = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  Grid g;
  g.n = n;
  g.label_width = ImGui::CalcTextSize("rank 0 ").x + 8 * s;
  g.cell_width = std::clamp((avail.x * 0.62f - g.label_width) / n, widest_text + 12 * s, 150 * s);
  // n rows of cells with n - 1 gaps between them, and one gap above and below for the arrows round the ring.
  g.cell_height = std::clamp(max_height / (n * 1.6f + 0.6f), ImGui::GetTextLineHeight() * 1.2f, 56 * s);
  g.row_gap = g.cell_height * 0.6f;
  const ImVec2 cursor = ImGui::GetCursorScreenPos();
  g.origin = {cursor.x, cursor.y + g.row_gap};
  return g;
}

// One chunk: a stripe per rank whose input it already contains (rank q's colour), the value on top, a strong border
// when it holds everyone's contribution.
void draw_chunk(ImDrawList* draw, const Grid& g, int rank, int chunk, const std::string& text, std::uint64_t mask,
                bool highlighted) {
  const float s = ui_scale();
  const ImVec2 a = g.cell_min(rank, chunk), b = g.cell_max(rank, chunk);
  draw->AddRectFilled(a, b, with_alpha(muted_text_color(), 0.15f), 3 * s);
  const float stripe = (b.x - a.x) / g.n;
  for (int q = 0; q < g.n; ++q)
    if (mask >> q & 1u) draw->AddRectFilled({a.x + q * stripe, a.y}, {a.x + (q + 1) * stripe, b.y}, series_color(q));
  const std::uint64_t everyone = (std::uint64_t{1} << g.n) - 1;
  if (mask == everyone) draw->AddRect(a, b, text_color(), 3 * s, 0, 2.5f * s);
  if (highlighted)
    draw->AddRect({a.x - 3 * s, a.y - 3 * s}, {b.x + 3 * s, b.y + 3 * s}, highlight_color(), 4 * s, 0, 3 * s);
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  const ImVec2 at{(a.x + b.x - size.x) / 2, (a.y + b.y - size.y) / 2};
  draw->AddRectFilled({at.x - 3 * s, at.y}, {at.x + size.x + 3 * s, at.y + size.y}, with_alpha(panel_color(), 0.8f),
                      3 * s);
  draw->AddText(at, mask ? text_color() : muted_text_color(), text.c_str());
}

void draw_arrow(ImDrawList* draw, ImVec2 from, ImVec2 to, ImU32 color) {
  const float s = ui_scale();
  draw->AddLine(from, {to.x, to.y - 7 * s}, color, 2.5f * s);
  draw->AddTriangleFilled({to.x - 6 * s, to.y - 9 * s}, {to.x + 6 * s, to.y - 9 * s}, to, color);
}

// One row of the record: every rank's chunks; arrows for the chunk each rank sent at this step.
void draw_ring_row(const CollectiveRecord& record, std::size_t row, float max_height) {
  const int n = record.n_ranks;
  const auto& step = record.steps[row];
  float widest = 0;
  for (const auto& rank : record.steps.back().ranks)
    for (float v : rank.values) widest = std::max(widest, ImGui::CalcTextSize(value_text(v).c_str()).x);
  const Grid g = make_grid(n, widest, max_height);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float s = ui_scale();
  for (int r = 0; r < n; ++r) {
    const auto& rs = step.ranks[r];
    const ImVec2 a = g.cell_min(r, 0);
    draw->AddText({g.origin.x, a.y + (g.cell_height - ImGui::GetTextLineHeight()) / 2}, text_color(),
                  fmt::format("rank {}", r).c_str());
    for (int c = 0; c < n; ++c) {
      const std::int64_t begin = record.chunk_begin[c], end = record.chunk_begin[c + 1];
      std::string text;
      for (std::int64_t i = begin; i < end; ++i) text += (i > begin ? " " : "") + value_text(rs.values[i]);
      draw_chunk(draw, g, r, c, text, rs.contributors[c], c == rs.received_chunk);
    }
  }
  // Arrows: rank r's sent chunk goes down to rank r+1 (same column); the last rank's goes round to rank 0.
  const ImU32 arrow = highlight_color();
  for (int r = 0; r < n; ++r) {
    const int c = step.ranks[r].sent_chunk;
    if (c < 0) continue;
    const ImVec2 a = g.cell_min(r, c), b = g.cell_max(r, c);
    const float x = (a.x + b.x) / 2;
    if (r + 1 < n) {
      draw_arrow(draw, {x, b.y + 2 * s}, {x, g.cell_min(r + 1, c).y - 2 * s}, arrow);
    } else {  // round the ring: out of the bottom row, into the top row
      draw_arrow(draw, {x, b.y + 2 * s}, {x, b.y + g.row_gap * 0.8f}, arrow);
      draw->AddText({x + 6 * s, b.y + 2 * s}, muted_text_color(), "to rank 0");
      const ImVec2 top = g.cell_min(0, c);
      draw_arrow(draw, {x, top.y - g.row_gap * 0.8f}, {x, top.y - 2 * s}, arrow);
      draw->AddText({x + 6 * s, top.y - g.row_gap * 0.8f}, muted_text_color(),
                    fmt::format("from rank {}", n - 1).c_str());
    }
  }
  ImGui::Dummy({g.label_width + n * g.cell_width, g.height() + 2 * g.row_gap});
}

// Colour key: rank q's stripe colour.
void draw_rank_key(int n) {
  ImGui::TextDisabled("stripes: whose input");
  ImGui::TextDisabled("a chunk contains");
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float s = ui_scale(), h = ImGui::GetTextLineHeight();
  for (int q = 0; q < n; ++q) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    draw->AddRectFilled(p, {p.x + h, p.y + h}, series_color(q), 2 * s);
    ImGui::Dummy({h, h});
    ImGui::SameLine();
    ImGui::Text("rank %d", q);
  }
}

// Which row of the record a ring step shows: auto-play through [first, last], or the one the user picked.
std::size_t ring_row(const ViewContext& ctx, std::size_t first, std::size_t last) {
  static std::map<int, int> picked;  // per lesson step; -1 = playing
  int& choice = picked.try_emplace(ctx.step, -1).first->second;
  const int rows = static_cast<int>(last - first + 1);
  // Playing starts on the first exchange (first + 1), so the first frame already shows arrows.
  const int playing = static_cast<int>(1 + static_cast<int>(ctx.step_time_s / kSecondsPerStep)) % rows;
  int index = choice < 0 ? playing : choice;
  if (!figure_mode()) {
    if (ImGui::Button("< prev")) choice = (index + rows - 1) % rows;
    ImGui::SameLine();
    if (ImGui::Button("next >")) choice = (index + 1) % rows;
    ImGui::SameLine();
    bool play = choice < 0;
    if (ImGui::Checkbox("play", &play)) choice = play ? -1 : index;
  }
  index = choice < 0 ? playing : choice;
  return first + static_cast<std::size_t>(index);
}

std::string step_caption(const CollectiveRecord& record, std::size_t row) {
  const auto& step = record.steps[row];
  const int n = record.n_ranks;
  if (step.phase == "start") return "before any exchange: each rank holds only its own input";
  if (step.phase == "reduce_scatter")
    return fmt::format("reduce-scatter step {} of {}: rank r sends chunk (r - {}) mod {} to rank r + 1, which adds it",
                       step.step + 1, n - 1, step.step, n);
  return fmt::format("all-gather step {} of {}: rank r sends chunk (r + 1 - {}) mod {} to rank r + 1, which stores it",
                     step.step + 1, n - 1, step.step, n);
}

void draw_ring_phase(const ViewContext& ctx, bool reduce_scatter) {
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const int n = steps->n_ranks_shown;
  const CollectiveRecord& record = steps->ring_record;
  const std::size_t first = reduce_scatter ? 0 : static_cast<std::size_t>(n - 1);
  const std::size_t last = reduce_scatter ? static_cast<std::size_t>(n - 1) : record.steps.size() - 1;
  const std::size_t row = ring_row(ctx, first, last);
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(step_caption(record, row).c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(muted_text_color()));
  if (n != steps->n_ranks)
    ImGui::TextWrapped("(drawn for N = %d; the step-through shows 2 to %d ranks)", n, allreduce::kMaxRanksShown);
  ImGui::TextWrapped(
      "Numbers and colours come from the ring's own step record (the same code the run times); rank r "
      "starts with (i + 1) x 10^r in element i, so each digit of a sum names one rank.");
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
  const float height = ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing();
  ImGui::BeginGroup();
  draw_ring_row(record, row, height);
  ImGui::EndGroup();
  ImGui::SameLine(0, 70 * ui_scale());  // clear of the "from rank N-1" label
  ImGui::BeginGroup();
  draw_rank_key(n);
  ImGui::EndGroup();
}

void draw_why_step(const ViewContext& ctx) {
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const int n = steps->n_ranks_shown;
  const CollectiveRecord& record = steps->ring_record;
  ImGui::TextWrapped(
      "Each row is one worker's gradient (one number per chunk here). After the all-reduce every row "
      "must hold the element-wise sum, shown under the line.");
  const float height = ImGui::GetContentRegionAvail().y * 0.7f;
  ImGui::BeginGroup();
  draw_ring_row(record, 0, height);
  ImGui::Separator();
  ImGui::Text("every rank needs:");
  ImGui::PushFont(mono_font());
  std::string sum;
  for (float v : record.steps.back().ranks[0].values) sum += value_text(v) + "   ";
  ImGui::TextUnformatted(sum.c_str());
  ImGui::PopFont();
  ImGui::EndGroup();
  ImGui::SameLine(0, 70 * ui_scale());  // clear of the "from rank N-1" label
  ImGui::BeginGroup();
  draw_rank_key(n);
  ImGui::EndGroup();
}

void draw_obvious_ways_step(const ViewContext& ctx) {
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  PlotSpec spec{
      "Bytes through the busiest rank's link, in units of S", {"ranks N", "", false}, {"bytes / S", "", false}, {}, {}};
  PlotLine naive{
      "through rank 0: in (N-1) S, then out (N-1) S", series_color(5), SeriesStyle::LineAndMarkers, false, false, {}};
  PlotLine crossbar{
      "everyone to everyone: (N-1) S each way", series_color(1), SeriesStyle::LineAndMarkers, false, false, {}};
  PlotLine ring{"ring: 2 (N-1) / N x S", series_color(2), SeriesStyle::LineAndMarkers, false, false, {}};
  for (const allreduce::LinkBytesPoint& point : steps->link_bytes) {
    const double n = point.n_ranks;
    naive.points.push_back({n, point.through_root, point.through_root, point.through_root});
    crossbar.points.push_back({n, point.everyone_to_all, point.everyone_to_all, point.everyone_to_all});
    ring.points.push_back({n, point.ring, point.ring, point.ring});
  }
  spec.lines = {naive, crossbar, ring};
  spec.guides.push_back({true, double(steps->n_ranks), fmt::format("N = {}", steps->n_ranks), highlight_color()});
  spec.size = {0, ImGui::GetContentRegionAvail().y - 4.5f * ImGui::GetFrameHeightWithSpacing()};
  draw_plot("obvious", spec);
  draw_value_table(
      "obvious_table",
      {
          {fmt::format("rank 0 in and out, N = {}, S = {}", steps->n_ranks, format_bytes_binary(steps->message_bytes)),
           format_bytes_both(steps->root_bytes)},
          {"each rank, full exchange with everyone", format_bytes_both(steps->everyone_bytes)},
          {"each rank, ring", format_bytes_both(steps->ring_bytes)},
      });
}

std::vector<std::pair<std::string, std::string>> theory_rows(const allreduce::AllreduceSteps& steps) {
  return {
      {fmt::format("steps  2(N-1), N = {}", steps.n_ranks), fmt::format("{}", steps.steps)},
      {fmt::format("bytes sent per rank  2(N-1)/N x S, S = {}", format_bytes_binary(steps.message_bytes)),
       format_bytes_both(steps.bytes_sent_per_rank)},
      {"busbw factor  2(N-1)/N (nccl-tests)", format_number(steps.busbw_factor, 4)},
  };
}

void draw_cost_step(const ViewContext& ctx) {
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  auto rows = theory_rows(*steps);
  if (!ctx.result) {
    draw_value_table("cost_theory", rows);
    return draw_needs_run("time against message size and fit alpha and beta");
  }
  const auto* m = ctx.result->measured_as<allreduce::AllreduceMeasured>();
  if (m && m->fit)
    rows.push_back({"fitted: t = steps x alpha + bytes / beta",
                    fmt::format("alpha {:.2f} us, beta {:.3f} GB/s", m->fit->alpha_us, m->fit->beta_gbps)});
  PlotSpec spec{
      "Time per all-reduce against message size", {"message size", "bytes", true}, {"time", "us", true}, {}, {}};
  for (const char* name : {"time_measured", "time_fit"})
    if (const Series* series = ctx.result->find_series(name)) {
      PlotLine line = line_from_series(*series, series->role == "theory" ? theory_color() : series_color(0));
      line.dashed = series->role == "theory";
      spec.lines.push_back(std::move(line));
    }
  spec.size = {0, ImGui::GetContentRegionAvail().y - (rows.size() + 0.5f) * ImGui::GetFrameHeightWithSpacing()};
  draw_plot("cost", spec);
  draw_value_table("cost_table", rows);
}

void draw_measured_step(const ViewContext& ctx) {
  const auto* m = ctx.result ? ctx.result->measured_as<allreduce::AllreduceMeasured>() : nullptr;
  if (!m) return draw_needs_run("bus bandwidth against message size, beside the copy ceiling");
  PlotSpec spec{
      "Bus bandwidth against message size", {"message size", "bytes", true}, {"busbw", "GB/s", false}, {}, {}};
  for (const char* name : {"busbw_measured", "busbw_fit"})
    if (const Series* series = ctx.result->find_series(name)) {
      PlotLine line = line_from_series(*series, series->role == "theory" ? theory_color() : series_color(0));
      line.dashed = series->role == "theory";
      spec.lines.push_back(std::move(line));
    }
  const double ceiling = m->ceiling_gbps;
  if (ceiling > 0)
    spec.guides.push_back({false, ceiling, fmt::format("copy ceiling {:.2f} GB/s", ceiling), series_color(5)});
  std::vector<std::pair<std::string, std::string>> rows = {
      {fmt::format("busbw at {}", ctx.result->params.count("bytes") ? ctx.result->params.at("bytes") : "S"),
       fmt::format("{:.3f} GB/s = {:.0f}% of the ceiling", m->busbw_gbps, 100 * m->busbw_fraction_of_ceiling)},
      {"algbw = S / time", fmt::format("{:.3f} GB/s in {}", m->algbw_gbps, format_duration_us(m->time_us))},
      {"#wrong elements", fmt::format("{} at S, {} over the sweep", m->wrong, m->sweep_wrong)},
  };
  spec.size = {0, ImGui::GetContentRegionAvail().y - (rows.size() + 0.5f) * ImGui::GetFrameHeightWithSpacing()};
  draw_plot("busbw", spec);
  draw_value_table("busbw_table", rows);
}

}  // namespace

const StepViews& allreduce_step_views() {
  static const StepViews views{{"why", draw_why_step},
                               {"obvious_ways", draw_obvious_ways_step},
                               {"reduce_scatter", [](const ViewContext& ctx) { draw_ring_phase(ctx, true); }},
                               {"all_gather", [](const ViewContext& ctx) { draw_ring_phase(ctx, false); }},
                               {"cost", draw_cost_step},
                               {"measured", draw_measured_step}};
  return views;
}

}  // namespace dlsys::gui
