// Views of the allreduce lesson: every rank's buffer before the exchange, what each way to sum costs in bytes and
// steps, the ring's reduce-scatter and all-gather step by step (drawn from the real ring's own step record), the cost
// model of the chosen op and algorithm against measured times, and measured bus bandwidth against the copy ceiling at
// each size with nccl-tests' table, and the five all-reduce algorithms side by side (table, busbw per algorithm, the
// ring/recursive-doubling crossover predicted and measured). Every label and number comes from the step data or the
// run's typed values.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <map>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/allreduce_processes_panel.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/allreduce/allreduce_lesson.h"
#include "lessons/allreduce/allreduce_steps.h"
#include "lessons/allreduce/allreduce_values.h"

namespace dlsys::gui {

namespace {

using collectives::CollectiveRecord;

constexpr double kSecondsPerStep = 1.8;  // auto-play speed of the ring

const allreduce::AllreduceSteps* steps_of(const ViewContext& ctx) {
  return step_data_as<allreduce::AllreduceSteps>(ctx);
}

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
  g.cell_height = std::clamp(max_height / (n * 1.6f + 0.6f), ImGui::GetTextLineHeight() * 1.05f, 56 * s);
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
    for (float v : rank.values) widest = std::max(widest, ImGui::CalcTextSize(short_number_text(v).c_str()).x);
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
      for (std::int64_t i = begin; i < end; ++i) text += (i > begin ? " " : "") + short_number_text(rs.values[i]);
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
  if (!ctx.figure) {
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

void draw_ring_phase(const ViewContext& ctx, bool reduce_scatter) {
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const int n = steps->n_ranks_shown;
  const CollectiveRecord& record = steps->ring_record;
  const std::size_t first = reduce_scatter ? 0 : static_cast<std::size_t>(n - 1);
  const std::size_t last = reduce_scatter ? static_cast<std::size_t>(n - 1) : record.steps.size() - 1;
  const std::size_t row = ring_row(ctx, first, last);
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(steps->ring_captions.at(row).c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(muted_text_color()));
  if (n != steps->n_ranks)
    ImGui::TextWrapped("(drawn for N = %d; the step-through shows 2 to %d ranks)", n, allreduce::kMaxRanksShown);
  ImGui::TextWrapped(
      "Steps are counted from 1. Numbers and colours come from the ring's own step record (the same code the run "
      "times); rank r starts with (i + 1) x 10^r in element i, so each digit of a sum names one rank.");
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
  // What is left under the captions, or with large text the main figure's share (the view scrolls to it).
  const float height =
      std::max(ImGui::GetContentRegionAvail().y, main_figure_height()) - ImGui::GetTextLineHeightWithSpacing();
  begin_figure();
  ImGui::BeginGroup();
  draw_ring_row(record, row, height);
  ImGui::EndGroup();
  ImGui::SameLine(0, 70 * ui_scale());  // clear of the "from rank N-1" label
  ImGui::BeginGroup();
  draw_rank_key(n);
  ImGui::EndGroup();
  end_figure(fmt::format("{}, ring step {}", reduce_scatter ? "reduce-scatter" : "all-gather", row));
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
  const char* title = "every rank's gradient, and the sum each needs";
  begin_fitted_figure(title);
  ImGui::BeginGroup();
  draw_ring_row(record, 0, height);
  ImGui::Separator();
  ImGui::Text("every rank needs:");
  ImGui::PushFont(mono_font());
  std::string sum;
  for (float v : record.steps.back().ranks[0].values) sum += short_number_text(v) + "   ";
  ImGui::TextUnformatted(sum.c_str());
  ImGui::PopFont();
  ImGui::EndGroup();
  ImGui::SameLine(0, 70 * ui_scale());  // clear of the "from rank N-1" label
  ImGui::BeginGroup();
  draw_rank_key(n);
  ImGui::EndGroup();
  end_figure(title);
}

// The height a table of `rows` rows takes below a plot: each row one line of text and its cell padding.
float table_height(std::size_t rows) {
  const ImGuiStyle& style = ImGui::GetStyle();
  return rows * (ImGui::GetTextLineHeight() + 2 * style.CellPadding.y) + 2 * style.ItemSpacing.y;
}

void draw_obvious_ways_step(const ViewContext& ctx) {
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  // The table (with its header row) under the plots scrolls where the plots need the room.
  const float plot_h = plot_height_leaving(float(steps->ways_rows.size()) + 1);
  PlotSpec bytes{"Bytes sent by the busiest rank", {"ranks N", "", false}, {"bytes / S", "", false}, {}, {}};
  PlotSpec count{"Steps in a row", {"ranks N", "", false}, {"steps (each costs alpha)", "", false}, {}, {}};
  // Some ways coincide: in bytes, full exchange with through rank 0 and direct with the ring; in steps, the ring with
  // through rank 0. The later line of each pair is dashed and drawn on top, so both stay visible.
  enum Way { kThroughRoot, kFullExchange, kDirect, kRing };
  const struct {
    Way way;
    int color;
    bool dashed_in_bytes, dashed_in_steps;
  } order[] = {{kThroughRoot, 0, false, false},
               {kRing, 2, false, true},
               {kFullExchange, 1, true, false},
               {kDirect, 3, true, false}};
  for (const auto& o : order) {
    if (static_cast<std::size_t>(o.way) >= steps->ways.size()) continue;
    const allreduce::WayLine& way = steps->ways[o.way];
    const ImU32 color = series_color(o.color);
    const SeriesStyle style = o.way == kRing ? SeriesStyle::LineAndMarkers : SeriesStyle::Line;
    bytes.lines.push_back({way.bytes_name, color, style, o.dashed_in_bytes, false, way.bytes_over_s});
    count.lines.push_back({way.steps_name, color, style, o.dashed_in_steps, false, way.steps});
  }
  for (PlotSpec* spec : {&bytes, &count}) spec->guides.push_back({true, double(steps->n_ranks), "", highlight_color()});
  draw_plot_pair("ways_bytes", std::move(bytes), "ways_steps", std::move(count), plot_h);
  draw_columns_table("ways_table", steps->ways_headers, steps->ways_rows);
}

void draw_cost_step(const ViewContext& ctx) {
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  std::vector<std::pair<std::string, std::string>> rows;
  for (const allreduce::LabelRow& row : steps->cost_rows) rows.push_back({row.label, row.value});
  if (!ctx.result) {
    draw_value_table("cost_theory", rows);
    return draw_needs_run(ctx, "time against message size and fit the latency alpha and the bandwidth beta");
  }
  const auto* m = ctx.result->measured_as<allreduce::AllreduceMeasured>();
  const auto* t = ctx.result->theory_as<allreduce::AllreduceTheory>();
  if (m && m->fit && t) {
    const std::string at = run_params<AllreduceLesson>(ctx).bytes_text;
    rows.push_back(
        {"fitted latency alpha, per step", fmt::format("{:.2f} us, so {} alpha = {} at {}", m->fit->alpha_us, t->steps,
                                                       format_duration_us(m->fit->alpha_term_us), at)});
    rows.push_back({"fitted bandwidth beta, per link",
                    fmt::format("{:.3f} GB/s, so {} / beta = {}", m->fit->beta_gbps,
                                format_bytes_decimal(t->model_bytes), format_duration_us(m->fit->beta_term_us))});
  } else if (m) {
    rows.push_back({"fitted alpha and beta", "none: the times do not grow with the bytes sent"});
  }
  PlotSpec spec{fmt::format("Time per {} ({}) against message size", steps->op_title, steps->algo),
                {"message size", "bytes", true},
                {"time", "us", true},
                {},
                {}};
  for (const char* name : {"time_measured", "time_fit"})
    if (const Series* series = ctx.result->find_series(name)) {
      PlotLine line = line_from_series(*series, series->role == "theory" ? theory_color() : series_color(0));
      line.dashed = series->role == "theory";
      spec.lines.push_back(std::move(line));
    }
  spec.size = {0, plot_height_leaving(float(rows.size()))};
  draw_plot("cost", spec);
  draw_value_table("cost_table", rows);
}

// The caveats of a run, in a band the reader cannot miss: what disturbed it, what qualifies a point.
void draw_caveats(const std::vector<std::string>& caveats) {
  if (caveats.empty()) return;
  std::string text;
  for (const std::string& caveat : caveats) text += (text.empty() ? "" : "\n") + caveat;
  draw_warning_band(text);
}

struct SweepTable {
  std::vector<std::string> headers{"size", "count", "time", "algbw", "busbw", "ceiling", "#wrong"};
  std::vector<std::vector<std::string>> rows;
  // The width the table needs, so the plot beside it can take the rest.
  float width() const {
    // Each column's widest cell and its padding, with a few pixels of slack so the last column is never clipped.
    const float pad = 2 * ImGui::GetStyle().CellPadding.x + 4 * ui_scale();
    float total = 0;
    for (std::size_t c = 0; c < headers.size(); ++c) {
      float widest = ImGui::CalcTextSize(headers[c].c_str()).x;
      if (c > 0) ImGui::PushFont(mono_font());
      for (const auto& row : rows) widest = std::max(widest, ImGui::CalcTextSize(row[c].c_str()).x);
      if (c > 0) ImGui::PopFont();
      total += widest + pad;
    }
    return total + ImGui::GetStyle().ScrollbarSize;
  }
};

// The width draw_value_table needs for `rows` (labels, then values in the mono font).
float value_table_width(const std::vector<std::pair<std::string, std::string>>& rows) {
  float label = 0, value = 0;
  for (const auto& [l, v] : rows) label = std::max(label, ImGui::CalcTextSize(l.c_str()).x);
  ImGui::PushFont(mono_font());
  for (const auto& [l, v] : rows) value = std::max(value, ImGui::CalcTextSize(v.c_str()).x);
  ImGui::PopFont();
  return label + value + 4 * ImGui::GetStyle().CellPadding.x + 2 * ImGui::GetStyle().ItemSpacing.x;
}

// nccl-tests' table, one row per swept size, from the run's typed rows; a busbw above its ceiling is starred (the
// caveat above the plot says why).
// GB/s in the table: three significant digits, but whole numbers from 1000 on (1369, not 1.37e+03).
std::string gbps_cell(double gbps) { return gbps >= 1000 ? fmt::format("{:.0f}", gbps) : format_number(gbps, 3); }

SweepTable sweep_table(const allreduce::AllreduceMeasured& m) {
  SweepTable table;
  for (const allreduce::SweepRow& row : m.sweep)
    table.rows.push_back({format_bytes_binary(row.bytes), fmt::format("{:.0f}", row.count),
                          format_duration_us(row.time_us), gbps_cell(row.algbw_gbps),
                          gbps_cell(row.busbw_gbps) + (row.above_ceiling ? "*" : ""), gbps_cell(row.ceiling_gbps),
                          fmt::format("{}", row.wrong)});
  return table;
}

void draw_measured_step(const ViewContext& ctx) {
  if (const auto* processes = ctx.result ? ctx.result->measured_as<allreduce::AllreduceProcessesMeasured>() : nullptr)
    return draw_allreduce_processes_measured(ctx, *processes);
  const auto* m = ctx.result ? ctx.result->measured_as<allreduce::AllreduceMeasured>() : nullptr;
  if (!m) return draw_needs_run(ctx, "bus bandwidth against message size, beside the copy ceiling at each size");
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  draw_caveats(m->caveats);
  PlotSpec spec{fmt::format("Bus bandwidth ({})", steps ? steps->op_title : std::string("collective")),
                {"message size", "bytes", true},
                {"busbw", "GB/s", false},
                {},
                {}};
  // A ceiling far above every measured point would squash the curve against the axis: a log axis then shows both.
  double busbw_max = 0, ceiling_max = 0;
  for (const allreduce::SweepRow& row : m->sweep) {
    busbw_max = std::max(busbw_max, row.busbw_gbps);
    ceiling_max = std::max(ceiling_max, row.ceiling_gbps);
  }
  spec.y.log = busbw_max > 0 && ceiling_max > 5 * busbw_max;
  const std::pair<const char*, ImU32> lines[] = {{"busbw_measured", series_color(0)},
                                                 {"busbw_above_ceiling", warning_color()},
                                                 {"copy_ceiling", series_color(5)},
                                                 {"busbw_fit", theory_color()}};
  for (const auto& [id, color] : lines)
    if (const Series* series = ctx.result->find_series(id)) {
      PlotLine line = line_from_series(*series, color);
      line.dashed = series->role == "theory";
      if (std::string(id) == "copy_ceiling") {  // a bound, drawn as a line without whiskers
        line.style = SeriesStyle::Line;
        line.whiskers = false;
        line.dashed = true;
      }
      if (std::string(id) == "busbw_above_ceiling") line.style = SeriesStyle::Markers;
      spec.lines.push_back(std::move(line));
    }
  const std::string at = run_params<AllreduceLesson>(ctx).bytes_text;
  const std::vector<std::pair<std::string, std::string>> summary = {
      {fmt::format("busbw at {}", at), fmt::format("{:.3f} GB/s, {:.0f}% of its ceiling {:.1f} GB/s", m->busbw_gbps,
                                                   100 * m->busbw_fraction_of_ceiling, m->ceiling_gbps)},
      {"algbw = S / time", fmt::format("{:.3f} GB/s in {}", m->algbw_gbps, format_duration_us(m->time_us))},
      {"#wrong elements", fmt::format("{} at {}, {} in the sweep", m->wrong, at, m->sweep_wrong)},
  };
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float start_x = ImGui::GetCursorPosX();
  const float avail_w = ImGui::GetContentRegionAvail().x, avail_h = ImGui::GetContentRegionAvail().y;
  const SweepTable table = sweep_table(*m);
  const float table_w = std::max(table.width(), value_table_width(summary) + ImGui::GetStyle().ScrollbarSize);
  const auto draw_tables = [&] {
    draw_value_table("busbw_summary", summary);
    ImGui::Spacing();
    ImGui::TextDisabled("per size; algbw, busbw and ceiling in GB/s");
    draw_columns_table("sweep_table", table.headers, table.rows);
  };
  if (table_w > avail_w * 0.6f) {
    // Too narrow for both side by side (large text): the plot, then the tables under it, and the view scrolls.
    spec.size = {0, std::max(avail_h, 16 * ImGui::GetTextLineHeight())};
    draw_plot("busbw", spec);
    return draw_tables();
  }
  // The plot takes the full height; the chosen size's summary and the per-size table share the column beside it.
  spec.size = {avail_w - table_w - gap, avail_h};
  draw_plot("busbw", spec);
  ImGui::SameLine(start_x + avail_w - table_w);
  ImGui::BeginChild("sweep", {table_w, avail_h}, false, ImGuiWindowFlags_HorizontalScrollbar);
  draw_tables();
  ImGui::EndChild();
}

// What a busy machine does to the comparison, in one sentence (the shell's band above already says how busy).
constexpr const char* kBusyComparisonSentence =
    "Other processes kept the cores busy during this run, so the rank threads waited for cores as well as for data and "
    "the measured crossover may have moved from where an idle machine puts it.";

// The algorithms' table: closed forms and logged steps from the step data, then what the run counted and fitted.
std::vector<std::vector<std::string>> algorithm_table_rows(const allreduce::AllreduceSteps& steps,
                                                           const allreduce::AlgorithmComparison* comparison) {
  std::vector<std::vector<std::string>> rows = steps.algorithms_rows;
  if (comparison == nullptr) return rows;
  for (auto& row : rows) {
    const allreduce::AlgorithmRun* run = nullptr;
    for (const allreduce::AlgorithmRun& a : comparison->algorithms)
      if (!row.empty() && a.algo == row[0]) run = &a;
    if (run == nullptr) continue;
    row.push_back(run->bytes_sent_counted >= 0 ? format_bytes_decimal(run->bytes_sent_counted) : "-");
    row.push_back(run->alpha_us ? fmt::format("{:.1f} us", *run->alpha_us) : "no fit");
    row.push_back(run->beta_gbps ? fmt::format("{:.2f} GB/s", *run->beta_gbps) : "no fit");
    row.push_back(fmt::format("{}", run->wrong));
  }
  return rows;
}

void draw_algorithms_step(const ViewContext& ctx) {
  const allreduce::AllreduceSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const auto* m = ctx.result ? ctx.result->measured_as<allreduce::AllreduceMeasured>() : nullptr;
  const allreduce::AlgorithmComparison* comparison = m && m->comparison ? &*m->comparison : nullptr;
  const bool busy = ctx.result && ctx.result->backend.conditions.disturbed();
  if (comparison && !comparison->crossover_sentence.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(comparison->crossover_sentence.c_str());
    ImGui::PopTextWrapPos();
  } else if (m && !m->comparison_skipped.empty()) {
    draw_note(m->comparison_skipped);
  }
  if (busy) draw_caveats({kBusyComparisonSentence});
  const std::string fold =
      steps->power_of_two != steps->n_ranks
          ? fmt::format(
                " N = {} is not a power of two: recursive doubling and rabenseifner fold {} ranks in first "
                "(p = {}).",
                steps->n_ranks, steps->n_ranks - steps->power_of_two, steps->power_of_two)
          : "";
  const double largest = comparison && !comparison->algorithms.front().sweep.empty()
                             ? comparison->algorithms.front().sweep.back().bytes
                             : 0.0;
  // What the table's columns mean, drawn above the table, under the plot where there is one.
  const auto draw_table_note = [&] {
    draw_note(fmt::format(
        "Closed forms at N = {}, S = {} (Thakur, Rabenseifner and Gropp 2005; a rank sends one message at a time). "
        "logged: steps a small real run counted{}. Ranks are threads (emulated).{}",
        steps->n_ranks, format_bytes_binary(steps->message_bytes),
        comparison ? fmt::format("; counted: bytes the links carried at {}; alpha, beta: each one's own fit",
                                 format_bytes_binary(largest))
                   : "",
        fold));
  };
  std::vector<std::string> headers = steps->algorithms_headers;
  if (comparison)
    for (const char* h : {"counted", "alpha", "beta", "#wrong"}) headers.push_back(h);
  const auto rows = algorithm_table_rows(*steps, comparison);
  const float table_h = table_height(rows.size() + 1) + ImGui::GetStyle().ScrollbarSize;
  const auto draw_table = [&] {
    ImGui::BeginChild("algorithms_table", {0, table_h}, false, ImGuiWindowFlags_HorizontalScrollbar);
    draw_columns_table("algorithms", headers, rows);
    ImGui::EndChild();
  };
  if (!comparison) {
    draw_table_note();
    draw_table();
    if (!m) draw_needs_run(ctx, "every algorithm's time at each swept size, its busbw and its own alpha and beta");
    return;
  }
  PlotSpec spec{
      "Bus bandwidth per all-reduce algorithm", {"message size", "bytes", true}, {"busbw", "GB/s", false}, {}, {}};
  int color = 0;
  for (const allreduce::AlgorithmRun& a : comparison->algorithms) {
    if (const Series* series = ctx.result->find_series("busbw_algo_" + a.algo)) {
      PlotLine line = line_from_series(*series, series_color(color));
      line.style = SeriesStyle::LineAndMarkers;
      spec.lines.push_back(std::move(line));
    }
    // The model of the ring and of recursive doubling, dashed in the same colour.
    if (const Series* model = ctx.result->find_series("busbw_model_" + a.algo)) {
      PlotLine line = line_from_series(*model, series_color(color));
      line.name = a.algo + " model";
      line.dashed = true;
      spec.lines.push_back(std::move(line));
    }
    ++color;
  }
  if (comparison->crossover_predicted_bytes)
    spec.guides.push_back({true, *comparison->crossover_predicted_bytes, "predicted", theory_color()});
  if (comparison->crossover_measured_bytes)
    spec.guides.push_back({true, *comparison->crossover_measured_bytes, "measured", highlight_color()});
  // The plot first, as tall as the note and the table leave room for (they scroll into view where it leaves too
  // little).
  spec.size = {0, plot_height_leaving(float(rows.size()) + 4)};
  draw_plot("algorithms_busbw", spec);
  draw_table_note();
  draw_table();
}

}  // namespace

const StepViews& allreduce_step_views() {
  static const StepViews views{{"why", draw_why_step, StepShows::TheoryOnly},
                               {"obvious_ways", draw_obvious_ways_step, StepShows::TheoryOnly},
                               {"reduce_scatter", [](const ViewContext& ctx) { draw_ring_phase(ctx, true); }},
                               {"all_gather", [](const ViewContext& ctx) { draw_ring_phase(ctx, false); }},
                               {"cost", draw_cost_step},
                               {"measured", draw_measured_step},
                               {"algorithms", draw_algorithms_step}};
  return views;
}

}  // namespace dlsys::gui
