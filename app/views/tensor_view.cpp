// Views of the tensor lesson: the course's 4x4 example split by columns and by rows (drawn from the real split's
// record), the Megatron MLP and attention as per-rank flows with the layer's own list of collectives, time against t
// and h, and activation memory against t with and without sequence parallelism.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/tensor/tensor_steps.h"
#include "lessons/tensor/tensor_values.h"

namespace dlsys::gui {

namespace {

using tensor::LinearSplitRecord;
using tensor::RankLinearRecord;
using tensor::TensorSteps;

const TensorSteps* steps_of(const ViewContext& ctx) { return step_data_as<TensorSteps>(ctx); }

// A rank's colour: the fill of the cells it owns, its heading, its line in a plot.
ImU32 rank_color(int rank) { return series_color(rank); }

std::string number_text(double v) { return fmt::format("{:g}", v); }

// The size of one number cell: room for "-00" with a margin, never smaller than a comfortable square.
float cell_size() { return std::max(ImGui::CalcTextSize("-00").x, ImGui::GetTextLineHeight()) + 14 * ui_scale(); }

// A rows x cols block of numbers at the cursor, each cell filled with fill(r, c) (0: none) and outlined when
// strong(r, c); `title` above it. Advances the cursor past it.
void draw_numbers(const std::string& title, const std::vector<float>& values, int rows, int cols,
                  const std::function<ImU32(int, int)>& fill, const std::function<bool(int, int)>& strong = {}) {
  const float s = ui_scale(), cell = cell_size();
  ImGui::BeginGroup();
  ImGui::TextUnformatted(title.c_str());
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const ImVec2 a{o.x + c * cell, o.y + r * cell}, b{a.x + cell - 3 * s, a.y + cell - 3 * s};
      const ImU32 color = fill(r, c);
      draw->AddRectFilled(a, b, color ? with_alpha(color, 0.38f) : with_alpha(muted_text_color(), 0.15f), 3 * s);
      if (color) draw->AddRect(a, b, color, 3 * s, 0, 1.5f * s);
      if (strong && strong(r, c)) draw->AddRect(a, b, text_color(), 3 * s, 0, 2.5f * s);
      const std::string text = number_text(values[static_cast<std::size_t>(r * cols + c)]);
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      draw->AddText({(a.x + b.x - size.x) / 2, (a.y + b.y - size.y) / 2}, text_color(), text.c_str());
    }
  ImGui::Dummy({cols * cell, rows * cell});
  ImGui::EndGroup();
}

// "rank r" in the rank's colour, in the heading font.
void rank_heading(int rank, const std::string& what) {
  ImGui::PushFont(heading_font());
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(rank_color(rank)), "rank %d", rank);
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextDisabled("%s", what.c_str());
}

std::string shard_text(const RankLinearRecord& r, bool column) {
  return column ? fmt::format("columns {}-{} of W", r.first_col, r.first_col + r.w_cols - 1)
                : fmt::format("rows {}-{} of W, x[{}:{}]", r.first_row, r.first_row + r.w_rows - 1, r.first_row,
                              r.first_row + r.w_rows);
}

// Which rank owns element (r, c) of the whole W in this split.
int owner_of(const LinearSplitRecord& split, int row, int col) {
  for (std::size_t k = 0; k < split.ranks.size(); ++k) {
    const RankLinearRecord& r = split.ranks[k];
    if (row >= r.first_row && row < r.first_row + r.w_rows && col >= r.first_col && col < r.first_col + r.w_cols)
      return static_cast<int>(k);
  }
  return -1;
}

// x and W as a whole, coloured by the rank that receives each part.
void draw_whole(const LinearSplitRecord& split) {
  const int n = static_cast<int>(tensor::kCourseDim);
  const std::vector<float> x = tensor::course_x(), w = tensor::course_w();
  const float gap = 2.5f * cell_size();
  draw_numbers("x (1 x 4)", x, 1, n, [&](int, int c) {
    if (split.column) return ImU32(0);  // copied whole to every rank
    return rank_color(owner_of(split, c, 0));
  });
  ImGui::SameLine(0, gap);
  draw_numbers("W (4 x 4)", w, n, n, [&](int r, int c) { return rank_color(owner_of(split, r, c)); });
  ImGui::SameLine(0, gap);
  ImGui::BeginGroup();
  ImGui::TextDisabled("y = x W, the course's layout");
  ImGui::TextDisabled(split.column ? "x is copied to both ranks" : "x is cut to match W's rows");
  for (std::size_t k = 0; k < split.ranks.size(); ++k) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(rank_color(int(k))), "rank %d", int(k));
    ImGui::SameLine();
    ImGui::TextUnformatted(shard_text(split.ranks[k], split.column).c_str());
  }
  ImGui::EndGroup();
}

// One rank's part: the x it holds, its shard of W, and what it computed alone.
void draw_rank_part(const LinearSplitRecord& split, int k) {
  const RankLinearRecord& r = split.ranks[static_cast<std::size_t>(k)];
  const ImU32 mine = rank_color(k);
  ImGui::BeginGroup();
  rank_heading(k, split.column ? "computes its slice of y" : "computes a partial y");
  draw_numbers("x", r.x, 1, int(r.x.size()), [&](int, int) { return split.column ? ImU32(0) : mine; });
  ImGui::SameLine(0, cell_size() * 0.6f);
  draw_numbers("its shard of W", r.w, int(r.w_rows), int(r.w_cols), [&](int, int) { return mine; });
  draw_numbers(split.column ? "x W_shard: its slice of y" : "x_shard W_shard: a partial sum of all of y", r.local, 1,
               int(r.local.size()), [&](int, int) { return mine; });
  ImGui::EndGroup();
}

void draw_column_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const LinearSplitRecord& split = steps->column;
  draw_whole(split);
  ImGui::Spacing();
  ImGui::Separator();
  for (int k = 0; k < int(split.ranks.size()); ++k) {
    if (k > 0) ImGui::SameLine(0, 3 * cell_size());
    draw_rank_part(split, k);
  }
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("all-gather: each slice goes to every rank");
  ImGui::PopFont();
  const auto& halves = split.ranks;
  for (int k = 0; k < int(halves.size()); ++k) {
    if (k > 0) ImGui::SameLine(0, 3 * cell_size());
    const std::vector<float>& y = halves[static_cast<std::size_t>(k)].result;
    const std::int64_t width = halves.front().w_cols;
    draw_numbers(fmt::format("rank {} holds y", k), y, 1, int(y.size()),
                 [&](int, int c) { return rank_color(int(c / width)); });
  }
  ImGui::TextDisabled("Each cell keeps the colour of the rank that computed it; the values are the split's record.");
}

void draw_row_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const LinearSplitRecord& split = steps->row;
  draw_whole(split);
  ImGui::Spacing();
  ImGui::Separator();
  for (int k = 0; k < int(split.ranks.size()); ++k) {
    if (k > 0) ImGui::SameLine(0, 3 * cell_size());
    draw_rank_part(split, k);
  }
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("all-reduce: the partials are added, element by element");
  ImGui::PopFont();
  // The partials stacked above their sum, as the all-reduce leaves it on every rank.
  std::vector<float> stacked;
  for (const RankLinearRecord& r : split.ranks) stacked.insert(stacked.end(), r.local.begin(), r.local.end());
  const std::vector<float>& y = split.ranks.front().result;
  stacked.insert(stacked.end(), y.begin(), y.end());
  const int parts = int(split.ranks.size()), cols = int(y.size());
  draw_numbers(
      "partial of rank 0, of rank 1, and their sum", stacked, parts + 1, cols,
      [&](int r, int) { return r < parts ? rank_color(r) : ImU32(0); }, [&](int r, int) { return r == parts; });
  bool agree = true;
  for (const RankLinearRecord& r : split.ranks) agree &= r.result == y;
  ImGui::TextDisabled(agree ? "Every rank ends with this y (the ring's record, rank by rank)."
                            : "The ranks' results differ: the all-reduce is broken.");
}

// A box in a flow diagram: a title and a size line.
struct FlowBox {
  std::string title, detail;
  ImU32 color = 0;          // 0: a plain (replicated or whole) tensor
  bool collective = false;  // drawn as the exchange between ranks
};

// Boxes left to right with arrows between them, wrapping to the next line where the width runs out.
void draw_flow(const std::vector<FlowBox>& boxes) {
  const float s = ui_scale(), pad = 8 * s, arrow = 26 * s, line = ImGui::GetTextLineHeight();
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  ImVec2 at = ImGui::GetCursorScreenPos();
  const float left = at.x, height = 2 * line + 3 * pad;
  float bottom = at.y + height;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const FlowBox& b = boxes[i];
    const float w = std::max(ImGui::CalcTextSize(b.title.c_str()).x, ImGui::CalcTextSize(b.detail.c_str()).x) + 2 * pad;
    if (i > 0 && at.x + arrow + w > right) {  // wrap: the arrow continues at the start of the next line
      at = {left, at.y + height + pad};
      bottom = at.y + height;
    } else if (i > 0) {
      const float y = at.y + height / 2;
      draw->AddLine({at.x + 3 * s, y}, {at.x + arrow - 6 * s, y}, muted_text_color(), 2 * s);
      draw->AddTriangleFilled({at.x + arrow - 10 * s, y - 5 * s}, {at.x + arrow - 10 * s, y + 5 * s},
                              {at.x + arrow - 2 * s, y}, muted_text_color());
      at.x += arrow;
    }
    const ImVec2 a = at, z{at.x + w, at.y + height};
    if (b.collective) {
      draw->AddRectFilled(a, z, with_alpha(highlight_color(), 0.30f), 12 * s);
      draw->AddRect(a, z, highlight_color(), 12 * s, 0, 2.5f * s);
    } else {
      draw->AddRectFilled(a, z, b.color ? with_alpha(b.color, 0.30f) : with_alpha(muted_text_color(), 0.15f), 4 * s);
      draw->AddRect(a, z, b.color ? b.color : muted_text_color(), 4 * s, 0, 1.5f * s);
    }
    draw->AddText({a.x + pad, a.y + pad}, text_color(), b.title.c_str());
    draw->AddText({a.x + pad, a.y + 2 * pad + line}, muted_text_color(), b.detail.c_str());
    at.x += w;
  }
  ImGui::Dummy({std::max(0.0f, right - left), bottom - ImGui::GetCursorScreenPos().y});
}

std::string dims(std::int64_t rows, std::int64_t cols) {
  return fmt::format("{} x {}", format_count(double(rows)), format_count(double(cols)));
}

void draw_mlp_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const tensor::LayerShape& s = steps->shape;
  const std::int64_t n = s.tokens(), h = s.hidden, f = s.ffn_per_rank();
  const ImU32 mine = rank_color(0);
  ImGui::PushFont(heading_font());
  ImGui::Text("Rank r of t = %d, forward (every rank the same, with its own columns)", s.ranks);
  ImGui::PopFont();
  draw_flow({
      {"x, every rank", "(s b) x h = " + dims(n, h)},
      {"W1 shard: columns", dims(h, f) + " = h x 4h/t", mine},
      {"Z = x W1", dims(n, f), mine},
      {"GeLU, alone", "whole pre-activations", mine},
      {"W2 shard: rows", dims(f, h) + " = 4h/t x h", mine},
      {"partial Y", dims(n, h) + ", a part of the sum", mine},
      {"all-reduce (g)", fmt::format("b s h = {}", format_count(double(n * h))), 0, true},
      {"Y, every rank", dims(n, h)},
  });
  ImGui::TextDisabled(
      "Backward: the mirror image. dW1 and dW2 shards are complete where they are; the input gradient is a partial "
      "sum on each rank, and one all-reduce (f) adds it up.");
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("Why GeLU must follow the column split, on the course's numbers");
  ImGui::PopFont();
  std::vector<std::vector<std::string>> rows;
  const auto& p0 = steps->row.ranks[0].local;
  const auto& p1 = steps->row.ranks[1].local;
  for (std::size_t i = 0; i < steps->gelu_of_y.size(); ++i)
    rows.push_back({fmt::format("y[{}] = {:g} + ({:g})", i, p0[i], p1[i]), fmt::format("{:.4f}", steps->gelu_of_y[i]),
                    fmt::format("{:.4f}", steps->sum_of_gelu_partials[i]),
                    fmt::format("{:+.4f}", steps->sum_of_gelu_partials[i] - steps->gelu_of_y[i])});
  draw_columns_table("gelu_table",
                     {"element: row-split partials", "GeLU(y): column split, exact",
                      "GeLU(p0) + GeLU(p1): after a row split", "error"},
                     rows);
  ImGui::TextDisabled(
      "After a column split each rank holds whole elements of Z, so GeLU needs no exchange. After a row split it "
      "holds partial sums, and GeLU of a partial is not a partial of GeLU: it would need an all-reduce first.");
}

std::string op_words(const std::string& op) {
  return op == "allreduce" ? "all-reduce" : op == "reduce_scatter" ? "reduce-scatter" : "all-gather";
}

// The layer's collectives, from its own record; with a matching run, the bytes its links counted beside the formula.
void draw_collectives_table(const ViewContext& ctx, const TensorSteps& steps) {
  const auto* m = ctx.result ? ctx.result->measured_as<tensor::TensorMeasured>() : nullptr;
  const bool measured = m && !ctx.result_stale && m->collectives.size() == steps.collectives.size();
  std::vector<std::string> headers{"pass", "collective", "where", "elements", "bytes sent per rank"};
  if (measured) headers.push_back("counted in the run");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < steps.collectives.size(); ++i) {
    const tensor::LayerCollective& c = steps.collectives[i];
    std::vector<std::string> row{c.backward ? "backward" : "forward", op_words(c.op), c.site,
                                 format_count(double(c.elements)), format_bytes_binary(c.bytes_per_rank)};
    if (measured) row.push_back(format_bytes_binary(double(m->collectives[i].bytes_sent)));
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    ImGui::TextDisabled("t = 1: one rank holds everything, so the layer makes no collective call.");
  else
    draw_columns_table("collectives", headers, rows);
}

void draw_attention_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const tensor::LayerShape& s = steps->shape;
  const std::int64_t n = s.tokens(), h = s.hidden, hl = s.hidden_per_rank();
  const ImU32 mine = rank_color(0);
  draw_flow({
      {"u = LN(x), every rank", dims(n, h)},
      {"W_qkv shard: columns", fmt::format("{} = {} heads", dims(h, 3 * hl), s.heads_per_rank()), mine},
      {"softmax(QK^T / sqrt(d)) V", "per head, alone", mine},
      {"W_o shard: rows", dims(hl, h), mine},
      {"partial", dims(n, h), mine},
      {"all-reduce (g)", fmt::format("b s h = {}", format_count(double(n * h))), 0, true},
  });
  const tensor::TensorTheory& t = steps->theory;
  ImGui::PushFont(heading_font());
  if (s.sequence_parallel)
    ImGui::Text("Per layer: %d reduce-scatters + %d all-gathers forward, %d + %d backward",
                t.reduce_scatters_per_layer_fwd, t.all_gathers_per_layer_fwd, t.reduce_scatters_per_layer_bwd,
                t.all_gathers_per_layer_bwd);
  else
    ImGui::Text("Per layer: %d all-reduces forward + %d backward, each of b s h = %s elements",
                t.allreduces_per_layer_fwd, t.allreduces_per_layer_bwd,
                format_count(double(t.comm_elements_per_allreduce)).c_str());
  ImGui::PopFont();
  ImGui::TextDisabled("\"2 per block\" is right for one block; a layer has two (attention, MLP), so 2 + 2.");
  draw_collectives_table(ctx, *steps);
}

PlotLine series_line(const Series& s, ImU32 color) {
  PlotLine line = line_from_series(s, color);
  line.dashed = s.role == "theory";
  return line;
}

void add_series(PlotSpec& spec, const RunResult& r, const char* id, ImU32 color) {
  if (const Series* s = r.find_series(id)) spec.lines.push_back(series_line(*s, color));
}

// Before a run: the closed forms against t, per rank, as a share of t = 1's FLOP and of 2 b s h x 4 bytes.
void draw_scaling_theory(const TensorSteps& steps) {
  PlotSpec spec{"Per rank, against t (closed forms)", {"ranks t", "", true}, {"share", "", false}, {}, {}};
  PlotLine flop{"FLOP per rank / t = 1's: 1/t", rank_color(0), SeriesStyle::LineAndMarkers, false, false, {}};
  PlotLine bytes{"bytes sent per rank / (2 b s h x 4 B)", rank_color(1), SeriesStyle::LineAndMarkers, false, false, {}};
  const double base_flop = steps.scaling.front().flop_per_rank;
  const double unit = 2.0 * double(steps.shape.tokens() * steps.shape.hidden) * 4 * 4;  // 4 all-reduces' worth
  for (const tensor::ScalingPoint& p : steps.scaling) {
    const double f = p.flop_per_rank / base_flop, b = p.comm_bytes_per_rank / unit;
    flop.points.push_back({double(p.t), f, f, f});
    bytes.points.push_back({double(p.t), b, b, b});
  }
  spec.lines = {flop, bytes};
  spec.guides.push_back({true, double(steps.shape.ranks), fmt::format("t = {}", steps.shape.ranks), highlight_color()});
  spec.size = {0, ImGui::GetContentRegionAvail().y * 0.55f};
  draw_plot("scaling_theory", spec);
}

void draw_crossovers(const TensorSteps& steps) {
  std::vector<std::vector<std::string>> rows;
  for (const tensor::Crossover& c : steps.crossovers)
    rows.push_back({c.hardware, fmt::format("{:g} TFLOP/s", c.tflops), fmt::format("{:g} GB/s", c.link_gbps),
                    c.hidden > 0 ? fmt::format("h < {:.0f}", c.hidden) : "never at this s"});
  draw_columns_table("crossovers",
                     {"[EXT] datasheet hardware", "BF16 dense", "link, one way", "comm outweighs the gain"}, rows);
}

void draw_scaling_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const auto* m = ctx.result ? ctx.result->measured_as<tensor::TensorMeasured>() : nullptr;
  if (m == nullptr || m->example) {
    draw_scaling_theory(*steps);
    draw_crossovers(*steps);
    return draw_needs_run("compute and communication time against t and against h");
  }
  const RunResult& r = *ctx.result;
  const float width = ImGui::GetContentRegionAvail().x, gap = 16 * ui_scale();
  const float height = std::max(ImGui::GetContentRegionAvail().y - 5.5f * ImGui::GetFrameHeightWithSpacing(),
                                ImGui::GetTextLineHeight() * 14);
  PlotSpec by_t{
      "Per rank against t, h = " + r.params.at("hidden"), {"ranks t", "", true}, {"time", "us", true}, {}, {}};
  add_series(by_t, r, "compute_vs_t", rank_color(0));
  add_series(by_t, r, "compute_ideal_vs_t", theory_color());
  add_series(by_t, r, "comm_vs_t", rank_color(1));
  by_t.size = {(width - gap) / 2, height};
  draw_plot("time_vs_t", by_t);
  ImGui::SameLine(0, gap);
  PlotSpec by_h{"Against h at t = " + r.params.at("t"), {"hidden h", "", true}, {"time", "us", true}, {}, {}};
  add_series(by_h, r, "gain_vs_hidden", rank_color(2));
  add_series(by_h, r, "comm_vs_hidden", rank_color(1));
  by_h.size = {(width - gap) / 2, height};
  draw_plot("time_vs_h", by_h);
  const Series *gain = r.find_series("gain_vs_hidden"), *comm = r.find_series("comm_vs_hidden");
  std::string verdict = "Measured here: the split saved more compute than the all-reduces cost at every h swept.";
  if (gain && comm && gain->points.size() == comm->points.size())
    for (std::size_t i = gain->points.size(); i-- > 0;)
      if (comm->points[i].y > gain->points[i].y) {
        verdict = fmt::format(
            "Measured here: at h = {:g} and below, communication took longer than the compute the "
            "split saved.",
            gain->points[i].x);
        break;
      }
  ImGui::TextUnformatted(verdict.c_str());
  draw_crossovers(*steps);
}

void draw_sequence_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const tensor::LayerShape& s = steps->shape;
  PlotSpec spec{fmt::format("Activation bytes per layer and rank, s = {}, b = {}, h = {}, a = {}", s.seq, s.batch,
                            s.hidden, s.heads),
                {"ranks t", "", true},
                {"bytes", "bytes", true},
                {},
                {}};
  PlotLine none{"no parallelism: s b h (34 + 5as/h)", muted_text_color(), SeriesStyle::Line, true, false, {}};
  PlotLine tp{"tensor: s b h (10 + 24/t + 5as/(ht))", rank_color(0), SeriesStyle::LineAndMarkers, false, false, {}};
  PlotLine sp{
      "tensor + sequence: s b h (34/t + 5as/(ht))", rank_color(2), SeriesStyle::LineAndMarkers, false, false, {}};
  for (const tensor::ActivationPoint& p : steps->activation) {
    const double t = p.t;
    none.points.push_back({t, double(p.none), double(p.none), double(p.none)});
    tp.points.push_back({t, double(p.tensor), double(p.tensor), double(p.tensor)});
    sp.points.push_back({t, double(p.tensor_sequence), double(p.tensor_sequence), double(p.tensor_sequence)});
  }
  spec.lines = {none, tp, sp};
  const auto* m = ctx.result ? ctx.result->measured_as<tensor::TensorMeasured>() : nullptr;
  if (m && !m->example)
    if (const Series* ledger = ctx.result->find_series("activation_vs_t")) {
      PlotLine line = line_from_series(*ledger, rank_color(5));
      line.name = "the lab's fp32 layer, ledger (this run, sp = " + ctx.result->params.at("sp") + ")";
      spec.lines.push_back(line);
    }
  spec.guides.push_back({true, double(s.ranks), fmt::format("t = {}", s.ranks), highlight_color()});
  const tensor::TensorTheory& t = steps->theory;
  std::vector<std::pair<std::string, std::string>> rows = {
      {fmt::format("t = {}, tensor parallel", s.ranks), format_bytes_both(double(t.activation_bytes_tensor))},
      {fmt::format("t = {}, tensor + sequence parallel", s.ranks),
       format_bytes_both(double(t.activation_bytes_tensor_sequence))},
      {"the lab's layer: " + t.lab_activation_formula, format_bytes_both(double(t.lab_activation_bytes_per_rank))},
  };
  if (m && !m->example && !ctx.result_stale)
    rows.push_back(
        {"the ledger counted (rank 0)", fmt::format("{} {}", format_bytes_both(double(m->activation_bytes_measured)),
                                                    m->activation_bytes_match_formula ? "= formula" : "!= formula")});
  spec.size = {0, std::max(ImGui::GetContentRegionAvail().y - (rows.size() + 1.5f) * ImGui::GetFrameHeightWithSpacing(),
                           ImGui::GetTextLineHeight() * 14)};
  draw_plot("activation", spec);
  draw_value_table("activation_table", rows);
}

}  // namespace

const StepViews& tensor_step_views() {
  static const StepViews views{{"column", draw_column_step},   {"row", draw_row_step},
                               {"mlp", draw_mlp_step},         {"attention", draw_attention_step},
                               {"scaling", draw_scaling_step}, {"sequence", draw_sequence_step}};
  return views;
}

}  // namespace dlsys::gui
