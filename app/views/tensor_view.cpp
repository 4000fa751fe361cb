// Views of the tensor lesson: the course's 4x4 example split by columns and by rows (drawn from the real split's
// record), the Megatron MLP and attention as per-rank flows with the layer's own list of collectives, time against t
// and h, and activation memory against t with and without sequence parallelism.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "app/gui/figure_size.h"
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

// A muted sentence that wraps at the view's edge.
// The size of one number cell: room for "-00" with a margin, never smaller than a comfortable square.
float cell_size() { return std::max(ImGui::CalcTextSize("-00").x, ImGui::GetTextLineHeight()) + 14 * ui_scale(); }

// A rows x cols block of numbers at the cursor, each cell filled with fill(r, c) (0: none) and outlined when
// strong(r, c); `title` above it, and each row's label (if given) to its right. Advances the cursor past it.
void draw_numbers(const std::string& title, const std::vector<float>& values, int rows, int cols,
                  const std::function<ImU32(int, int)>& fill, const std::function<bool(int, int)>& strong = {},
                  const std::vector<std::string>& row_labels = {}) {
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
      const std::string text = short_number_text(values[static_cast<std::size_t>(r * cols + c)]);
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      draw->AddText({(a.x + b.x - size.x) / 2, (a.y + b.y - size.y) / 2}, text_color(), text.c_str());
    }
  float label_width = 0;
  for (int r = 0; r < rows && r < int(row_labels.size()); ++r) {
    const char* label = row_labels[static_cast<std::size_t>(r)].c_str();
    label_width = std::max(label_width, ImGui::CalcTextSize(label).x + 10 * s);
    draw->AddText({o.x + cols * cell + 8 * s, o.y + r * cell + (cell - ImGui::GetTextLineHeight()) / 2},
                  muted_text_color(), label);
  }
  ImGui::Dummy({cols * cell + label_width, rows * cell});
  ImGui::EndGroup();
}

// "rank r" in the rank's colour, in the heading font.
void rank_heading(int rank) {
  ImGui::PushFont(heading_font());
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(rank_color(rank)), "rank %d", rank);
  ImGui::PopFont();
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

// Which rank gets what, one line per rank.
void draw_shard_legend(const LinearSplitRecord& split) {
  for (std::size_t k = 0; k < split.ranks.size(); ++k) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(rank_color(int(k))), "rank %d", int(k));
    ImGui::SameLine();
    ImGui::TextUnformatted(shard_text(split.ranks[k], split.column).c_str());
  }
}

// x and W as a whole, coloured by the rank that receives each part, with which rank gets what underneath, or beside
// W where the window is short of room (the diagram is then two lines shorter and keeps its text larger).
void draw_whole(const LinearSplitRecord& split, bool legend_beside) {
  const int n = static_cast<int>(tensor::kCourseDim);
  const std::vector<float> x = tensor::course_x(), w = tensor::course_w();
  const std::string title = fmt::format("{}-split linear layer: x and W, coloured by the rank that gets each part",
                                        split.column ? "column" : "row");
  begin_fitted_figure(title);
  draw_numbers(split.column ? "x (1 x 4), copied to both ranks" : "x (1 x 4), cut to match", x, 1, n, [&](int, int c) {
    if (split.column) return ImU32(0);  // copied whole to every rank
    return rank_color(owner_of(split, c, 0));
  });
  draw_numbers("W (4 x 4); y = x W", w, n, n, [&](int r, int c) { return rank_color(owner_of(split, r, c)); });
  if (legend_beside) {
    ImGui::SameLine(0, 0.6f * cell_size());
    ImGui::BeginGroup();
    ImGui::NewLine();  // level with W's first row, under its title
  }
  draw_shard_legend(split);
  if (legend_beside) ImGui::EndGroup();
  end_figure(title);
}

constexpr const char* kSliceTitle = "its slice of y";
constexpr const char* kShardTitle = "its shard of W";

// Width of one rank's part as draw_rank_part lays it out.
float rank_part_width(const LinearSplitRecord& split, const RankLinearRecord& r) {
  const float cell = cell_size();
  if (split.column)  // the shard, and its slice of y beside it
    return float(r.w_cols) * cell + 0.6f * cell +
           std::max(ImGui::CalcTextSize(kSliceTitle).x, float(r.local.size()) * cell);
  return std::max(ImGui::CalcTextSize(kShardTitle).x, float(r.w_cols) * cell);  // x part, shard, partial y stacked
}

// One rank's part: its shard of W and what it computed alone; for the row split, the part of x it holds on top.
void draw_rank_part(const LinearSplitRecord& split, int k) {
  const RankLinearRecord& r = split.ranks[static_cast<std::size_t>(k)];
  const ImU32 mine = rank_color(k);
  auto own = [&](int, int) { return mine; };
  const std::string title = fmt::format("rank {}'s part", k);
  begin_fitted_figure(title);
  rank_heading(k);
  if (split.column) {
    draw_numbers(kShardTitle, r.w, int(r.w_rows), int(r.w_cols), own);
    ImGui::SameLine(0, cell_size() * 0.6f);
    draw_numbers(kSliceTitle, r.local, 1, int(r.local.size()), own);
  } else {
    draw_numbers("its part of x", r.x, 1, int(r.x.size()), own);
    draw_numbers(kShardTitle, r.w, int(r.w_rows), int(r.w_cols), own);
    draw_numbers("its partial y", r.local, 1, int(r.local.size()), own);
  }
  end_figure(title);
}

// The whole x and W, then each rank's part: beside them where the width allows, else underneath.
void draw_split(const LinearSplitRecord& split) {
  const float gap = 1.5f * cell_size(), legend_w = ImGui::CalcTextSize("rank 0  rows 0-1 of W, x[0:2]").x;
  const bool legend_beside = window_is_short();
  float needed = legend_beside ? 4.6f * cell_size() + legend_w : std::max(4 * cell_size(), legend_w);
  for (const RankLinearRecord& r : split.ranks) needed += gap + rank_part_width(split, r);
  const bool beside = needed <= ImGui::GetContentRegionAvail().x;
  draw_whole(split, legend_beside);
  for (int k = 0; k < int(split.ranks.size()); ++k) {
    if (beside || k > 0) ImGui::SameLine(0, gap);
    draw_rank_part(split, k);
  }
}

// The collective's result: on the same line as the ranks' parts when `width` still fits there, else under a rule.
void place_result(float width) {
  const float gap = 1.5f * cell_size();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + gap + width <= right) {
    ImGui::SameLine(0, gap);
    return;
  }
  ImGui::Spacing();
  ImGui::Separator();
}

void draw_column_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const LinearSplitRecord& split = steps->column;
  draw_split(split);
  const char* title = "all-gather: every slice to every rank";
  place_result(std::max(ImGui::CalcTextSize(title).x * 1.3f, 4 * cell_size()));
  begin_fitted_figure(title);
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted(title);
  ImGui::PopFont();
  const std::int64_t width = split.ranks.front().w_cols;
  for (int k = 0; k < int(split.ranks.size()); ++k) {
    const std::vector<float>& y = split.ranks[static_cast<std::size_t>(k)].result;
    draw_numbers(fmt::format("rank {} holds y", k), y, 1, int(y.size()),
                 [&](int, int c) { return rank_color(int(c / width)); });
  }
  end_figure(title);
  draw_note(
      "Each cell keeps the colour of the rank that computed it; the values are each rank's record after the lab's "
      "ring all-gather.");
}

void draw_row_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const LinearSplitRecord& split = steps->row;
  draw_split(split);
  const char* title = "all-reduce: partials added";
  place_result(std::max(ImGui::CalcTextSize(title).x * 1.3f,
                        4 * cell_size() + ImGui::CalcTextSize("= y, on every rank").x + 10 * ui_scale()));
  begin_fitted_figure(title);
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted(title);
  ImGui::PopFont();
  // The partials stacked above their sum, as the all-reduce leaves it on every rank.
  std::vector<float> stacked;
  for (const RankLinearRecord& r : split.ranks) stacked.insert(stacked.end(), r.local.begin(), r.local.end());
  const std::vector<float>& y = split.ranks.front().result;
  stacked.insert(stacked.end(), y.begin(), y.end());
  const int parts = int(split.ranks.size()), cols = int(y.size());
  std::vector<std::string> labels;
  for (int k = 0; k < parts; ++k) labels.push_back(fmt::format("{}rank {}'s partial", k == 0 ? "  " : "+ ", k));
  labels.push_back("= y, on every rank");
  draw_numbers(
      "element by element", stacked, parts + 1, cols, [&](int r, int) { return r < parts ? rank_color(r) : ImU32(0); },
      [&](int r, int) { return r == parts; }, labels);
  end_figure(title);
  bool agree = true;
  for (const RankLinearRecord& r : split.ranks) agree &= r.result == y;
  draw_note(agree ? "Every rank ends with this y: the values are each rank's record after the lab's ring all-reduce."
                  : "The ranks' results differ: the all-reduce is broken.");
}

// A box in a flow diagram: a title and a size line.
struct FlowBox {
  std::string title, detail;
  ImU32 color = 0;          // 0: a plain (replicated or whole) tensor
  bool collective = false;  // drawn as the exchange between ranks
};

// How many lines of boxes a flow takes at this width: a box that does not fit where the line has reached starts a new
// line, its arrow with it.
float flow_box_width(const FlowBox& b, float pad) {
  return std::max(ImGui::CalcTextSize(b.title.c_str()).x, ImGui::CalcTextSize(b.detail.c_str()).x) + 2 * pad;
}
int flow_lines(const std::vector<FlowBox>& boxes, float left, float right, float pad, float arrow) {
  int lines = 1;
  float x = left;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const float w = flow_box_width(boxes[i], pad);
    if (i > 0 && x + arrow + w > right) x = left, ++lines;
    x += (i > 0 ? arrow : 0) + w;
  }
  return lines;
}

void draw_flow_box(ImDrawList* draw, const FlowBox& b, ImU32 color, ImVec2 a, ImVec2 z, float pad) {
  const float s = ui_scale(), line = ImGui::GetTextLineHeight();
  if (b.collective) {
    draw->AddRectFilled(a, z, with_alpha(highlight_color(), 0.30f), 12 * s);
    draw->AddRect(a, z, highlight_color(), 12 * s, 0, 2.5f * s);
  } else {
    draw->AddRectFilled(a, z, color ? with_alpha(color, 0.30f) : with_alpha(muted_text_color(), 0.15f), 4 * s);
    draw->AddRect(a, z, color ? color : muted_text_color(), 4 * s, 0, 1.5f * s);
  }
  const float top = (a.y + z.y) / 2 - line - pad / 2;  // the two lines centred in the box
  draw->AddText({a.x + pad, top}, text_color(), b.title.c_str());
  draw->AddText({a.x + pad, top + pad + line}, muted_text_color(), b.detail.c_str());
}

// One rank's flow: boxes left to right with arrows between them, wrapping to the next line where the width runs out;
// the boxes that hold this rank's shard in its colour. Returns the bottom of what it drew.
float draw_rank_flow(const std::vector<FlowBox>& boxes, ImU32 color, ImVec2 at, float right, float box_h) {
  const float s = ui_scale(), pad = 8 * s, arrow = 26 * s, left = at.x;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const FlowBox& b = boxes[i];
    const float w = flow_box_width(b, pad);
    if (i > 0 && at.x + arrow + w > right) at = {left, at.y + box_h + pad};  // the arrow continues on the next line
    if (i > 0) {
      const float y = at.y + box_h / 2;
      draw->AddLine({at.x + 3 * s, y}, {at.x + arrow - 6 * s, y}, muted_text_color(), 2 * s);
      draw->AddTriangleFilled({at.x + arrow - 10 * s, y - 5 * s}, {at.x + arrow - 10 * s, y + 5 * s},
                              {at.x + arrow - 2 * s, y}, muted_text_color());
      at.x += arrow;
    }
    draw_flow_box(draw, b, b.color ? color : 0, at, {at.x + w, at.y + box_h}, pad);
    at.x += w;
  }
  return at.y + box_h;
}

// The block's flow on each of the first `ranks` ranks, one under the other: every rank runs the same boxes on its
// own shard (its colour) and meets the others in the collectives. The boxes grow to fill `height` where that is more
// than their text needs (the step's figure, read from the back of a room), up to a few lines each.
void draw_flow(const std::vector<FlowBox>& boxes, int ranks, float height) {
  const float s = ui_scale(), pad = 8 * s, line = ImGui::GetTextLineHeight();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float right = origin.x + ImGui::GetContentRegionAvail().x;
  const int lines_per_rank = flow_lines(boxes, origin.x, right, pad, 26 * s);
  const float label_h = ImGui::GetTextLineHeightWithSpacing();
  const float natural = 2 * line + 3 * pad;
  // Two ranks show the pattern; fewer where two do not fit the height at the boxes' least size (large text).
  const float rank_h = label_h + pad + lines_per_rank * (natural + pad);
  ranks = std::clamp(int(height / rank_h), 1, std::min(ranks, 2));
  const int lines = lines_per_rank * ranks;
  const float box_h =
      std::clamp((height - ranks * (label_h + pad) - (lines - ranks) * pad) / float(lines), natural, 5 * line);
  float y = origin.y;
  for (int k = 0; k < ranks; ++k) {
    ImGui::GetWindowDrawList()->AddText({origin.x, y}, rank_color(k), fmt::format("rank {}", k).c_str());
    y = draw_rank_flow(boxes, rank_color(k), {origin.x, y + label_h}, right, box_h) + pad;
  }
  ImGui::Dummy({std::max(0.0f, right - origin.x), y - origin.y});
}

std::string dims(std::int64_t rows, std::int64_t cols) {
  return fmt::format("{} x {}", format_count(double(rows)), format_count(double(cols)));
}

// A block's flow between its input and its output: `inner` runs on this rank's columns; around it, the input and
// output are whole on every rank with an all-reduce at the end, or, with sequence parallelism, this rank's block of
// positions, all-gathered before and reduce-scattered after.
std::vector<FlowBox> block_flow(const tensor::LayerShape& s, const std::string& input, std::vector<FlowBox> inner,
                                const std::string& output) {
  const std::int64_t n = s.tokens(), h = s.hidden, elements = n * h;
  const std::string count = fmt::format("b s h = {}", format_count(double(elements)));
  std::vector<FlowBox> flow;
  if (s.sequence_parallel) {
    flow.push_back({input + ", s/t positions", dims(s.local_tokens(), h)});
    flow.push_back({"all-gather (g)", count, 0, true});
  } else {
    flow.push_back({input + ", every rank", dims(n, h)});
  }
  flow.insert(flow.end(), inner.begin(), inner.end());
  flow.push_back({s.sequence_parallel ? "reduce-scatter (g-bar)" : "all-reduce (g)", count, 0, true});
  flow.push_back(s.sequence_parallel ? FlowBox{output + ", s/t positions", dims(s.local_tokens(), h)}
                                     : FlowBox{output + ", every rank", dims(n, h)});
  return flow;
}

void draw_mlp_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const tensor::LayerShape& s = steps->shape;
  const std::int64_t n = s.tokens(), h = s.hidden, f = s.ffn_per_rank();
  const ImU32 mine = rank_color(0);
  const std::string title =
      fmt::format("The MLP block on t = {} ranks, forward (every rank the same, with its own columns)", s.ranks);
  const float figure_h = main_figure_height(), top = ImGui::GetCursorScreenPos().y;
  begin_fitted_figure(title);
  draw_heading(title);
  draw_flow(block_flow(s, "u2 = LN(x2)",
                       {{"W1 shard: columns", dims(h, f) + " = h x 4h/t", mine},
                        {"Z = u2 W1", dims(n, f), mine},
                        {"GeLU, alone", "whole pre-activations", mine},
                        {"W2 shard: rows", dims(f, h) + " = 4h/t x h", mine},
                        {"partial Y", dims(n, h) + ", a part of the sum", mine}},
                       "Y"),
            s.ranks, figure_h - (ImGui::GetCursorScreenPos().y - top));
  end_figure(title);
  draw_note(
      s.sequence_parallel
          ? "Backward: the mirror image. The dW1 and dW2 shards are complete where they are; the input gradient is a "
            "partial sum on each rank, reduce-scattered to the ranks' positions (g's backward), and the output "
            "gradient is all-gathered first (g-bar's backward)."
          : "Backward: the mirror image. The dW1 and dW2 shards are complete where they are; the input gradient is a "
            "partial sum on each rank, and one all-reduce (f) adds it up.");
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("Why GeLU must follow the column split, on the course's numbers");
  ImGui::PopFont();
  std::vector<std::vector<std::string>> rows;
  const auto& p0 = steps->row.ranks[0].local;
  const auto& p1 = steps->row.ranks[1].local;
  for (std::size_t i = 0; i < steps->gelu_of_y.size(); ++i)
    rows.push_back({fmt::format("y[{}] = {:g} + {}", i, p0[i],
                                p1[i] < 0 ? fmt::format("({:g})", p1[i]) : short_number_text(p1[i])),
                    fmt::format("{:.4f}", steps->gelu_of_y[i]), fmt::format("{:.4f}", steps->sum_of_gelu_partials[i]),
                    fmt::format("{:+.4f}", steps->sum_of_gelu_partials[i] - steps->gelu_of_y[i])});
  draw_columns_table("gelu_table",
                     {"element: row-split partials", "GeLU(y): column split, exact",
                      "GeLU(p0) + GeLU(p1): after a row split", "error"},
                     rows);
  draw_note(
      "After a column split each rank holds whole elements of Z, so GeLU needs no exchange. After a row split it "
      "holds partial sums, and GeLU of a partial is not a partial of GeLU: it would need an all-reduce first. "
      "(Far from zero GeLU is nearly the identity, so the error shows most where a partial is small or negative.)");
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
  const std::string title = fmt::format("The attention block on t = {} ranks, forward", s.ranks);
  const float figure_h = main_figure_height(), top = ImGui::GetCursorScreenPos().y;
  begin_fitted_figure(title);
  draw_heading(title);
  draw_flow(
      block_flow(s, "u = LN(x)",
                 {{"W_qkv shard: columns", fmt::format("{} = {} heads", dims(h, 3 * hl), s.heads_per_rank()), mine},
                  {"softmax(QK^T / sqrt(d)) V", "per head, alone", mine},
                  {"W_o shard: rows", dims(hl, h), mine},
                  {"partial", dims(n, h), mine}},
                 "attention out"),
      s.ranks, figure_h - (ImGui::GetCursorScreenPos().y - top));
  end_figure(title);
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
  draw_note(
      "\"2 per block\" is right for one block; a layer has two (attention, MLP), so 2 + 2. The table is rank 0's own "
      "record from the real layer (run at a tiny size with the same t and sp), sized for the parameters.");
  draw_collectives_table(ctx, *steps);
}

// Where a step needs the layer's run: the usual prompt, or why the last run did not measure it (the course's example
// alone, or the calculator: a run that measured nothing).
void draw_needs_layer_run(const ViewContext& ctx, const char* what) {
  const auto* m = ctx.result ? ctx.result->measured_as<tensor::TensorMeasured>() : nullptr;
  if (ctx.result && m == nullptr)
    return draw_note(
        fmt::format("The last run was the calculator alone (mode = theory): set mode = run and press Run to "
                    "measure {}.",
                    what));
  if (m && m->example)
    return draw_note(
        fmt::format("The last run was the course's example alone (example = course): set example = none and "
                    "press Run to measure {}.",
                    what));
  draw_needs_run(ctx, what);
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
                     {"[EXT] datasheet hardware", "BF16 dense", "link, one way",
                      fmt::format("comm outweighs the gain at s = {}", steps.shape.seq)},
                     rows);
}

// Where the measured communication outweighed what the split saved, in one sentence. `t` is the run's.
std::string verdict_against_hidden(const RunResult& r, int t) {
  const Series *gain = r.find_series("gain_vs_hidden"), *comm = r.find_series("comm_vs_hidden");
  if (!gain || !comm || gain->points.size() != comm->points.size()) return {};
  std::string lost;
  bool saved_nothing = false;  // a point the log plot cannot draw
  for (std::size_t i = 0; i < gain->points.size(); ++i) {
    if (comm->points[i].y > gain->points[i].y)
      lost += (lost.empty() ? "" : ", ") + short_number_text(gain->points[i].x);
    saved_nothing |= gain->points[i].y <= 0;
  }
  if (lost.empty())
    return "Measured in this run: at every h swept, the split saved more compute time than its collectives took.";
  return fmt::format(
      "Measured in this run: at h = {} the collectives took longer than the compute time the split saved.{}", lost,
      saved_nothing ? fmt::format(" A point missing from the log plot saved nothing: t = {} was no "
                                  "faster than t = 1 there.",
                                  t)
                    : "");
}

void draw_scaling_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const auto* m = ctx.result ? ctx.result->measured_as<tensor::TensorMeasured>() : nullptr;
  const auto* run_theory = ctx.result ? ctx.result->theory_as<tensor::TensorTheory>() : nullptr;
  if (m == nullptr || m->example || run_theory == nullptr) {
    draw_scaling_theory(*steps);
    draw_crossovers(*steps);
    return draw_needs_layer_run(ctx, "compute and communication time against t and against h");
  }
  const RunResult& r = *ctx.result;
  // Side by side where each plot gets room for its legend and a readable plot area, else one under the other.
  const float width = ImGui::GetContentRegionAvail().x, gap = 16 * ui_scale();
  const bool side_by_side = width >= 3.2f * ImGui::CalcTextSize("compute, CPU time (measured)").x;
  const float plot_width = side_by_side ? (width - gap) / 2 : width;
  // Room under the plots for the verdict, the placement, the crossovers and, on a GPU, why compute did not fall.
  const float lines_below = m->gpu_scaling_caveat ? 10.0f : 7.0f;
  const float height = plot_height_leaving(lines_below);
  PlotSpec by_t{fmt::format("Per rank, against t at h = {}", run_theory->activation_hidden),
                {"ranks t", "", true},
                {"time", "us", true},
                {},
                {}};
  add_series(by_t, r, "compute_vs_t", rank_color(0));
  add_series(by_t, r, "compute_cpu_vs_t", series_color(3));
  add_series(by_t, r, "compute_ideal_vs_t", theory_color());
  add_series(by_t, r, "comm_vs_t", rank_color(1));
  by_t.size = {plot_width, height};
  draw_plot("time_vs_t", by_t);
  if (side_by_side) ImGui::SameLine(0, gap);
  PlotSpec by_h{fmt::format("Per rank, against h at t = {}", run_theory->activation_t),
                {"hidden h", "", true},
                {"time", "us", true},
                {},
                {}};
  add_series(by_h, r, "gain_vs_hidden", rank_color(2));
  add_series(by_h, r, "comm_vs_hidden", rank_color(1));
  by_h.size = {plot_width, height};
  draw_plot("time_vs_h", by_h);
  draw_note(verdict_against_hidden(r, run_theory->activation_t));
  if (m->gpu_scaling_caveat) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(warning_color()), "%s.", m->gpu_scaling_caveat->c_str());
    ImGui::PopTextWrapPos();
  }
  if (!m->placement.empty()) draw_note("Ranks: " + m->placement + ".");
  draw_crossovers(*steps);
}

void draw_sequence_step(const ViewContext& ctx) {
  const TensorSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const tensor::LayerShape& s = steps->shape;
  PlotSpec spec{fmt::format("Activations kept per layer and rank, s = {}, b = {}, h = {}, a = {}", s.seq, s.batch,
                            s.hidden, s.heads),
                {"ranks t", "", true},
                {"activations", "bytes", true},
                {},
                {}};
  PlotLine none{"none: s b h (34 + 5as/h)", muted_text_color(), SeriesStyle::Line, true, false, {}};
  PlotLine tp{"tensor: (10 + 24/t + 5as/(ht))", rank_color(0), SeriesStyle::LineAndMarkers, false, false, {}};
  PlotLine sp{"+ sequence: (34/t + 5as/(ht))", rank_color(2), SeriesStyle::LineAndMarkers, false, false, {}};
  for (const tensor::ActivationPoint& p : steps->activation) {
    const double t = p.t;
    none.points.push_back({t, double(p.none), double(p.none), double(p.none)});
    tp.points.push_back({t, double(p.tensor), double(p.tensor), double(p.tensor)});
    sp.points.push_back({t, double(p.tensor_sequence), double(p.tensor_sequence), double(p.tensor_sequence)});
  }
  spec.lines = {none, tp, sp};
  const auto* m = ctx.result ? ctx.result->measured_as<tensor::TensorMeasured>() : nullptr;
  const auto* run_theory = ctx.result ? ctx.result->theory_as<tensor::TensorTheory>() : nullptr;
  if (m && !m->example && run_theory)
    if (const Series* ledger = ctx.result->find_series("activation_vs_t")) {
      PlotLine line = line_from_series(*ledger, series_color(3));
      line.name = fmt::format("lab's fp32 layer, ledger (sp {})", run_theory->activation_sp ? "on" : "off");
      spec.lines.push_back(line);
    }
  spec.guides.push_back({true, double(s.ranks), fmt::format("t = {}", s.ranks), highlight_color()});
  const tensor::TensorTheory& t = steps->theory;
  std::vector<std::pair<std::string, std::string>> rows = {
      {fmt::format("t = {}, tensor parallel (16-bit, the paper)", s.ranks),
       format_bytes_both(double(t.activation_bytes_tensor))},
      {fmt::format("t = {}, tensor + sequence parallel (16-bit)", s.ranks),
       format_bytes_both(double(t.activation_bytes_tensor_sequence))},
      {"the lab's fp32 layer: " + t.lab_activation_formula, format_bytes_both(double(t.lab_activation_bytes_per_rank))},
  };
  if (m && !m->example && !ctx.result_stale)
    rows.push_back(
        {"the ledger counted (rank 0)", fmt::format("{} {}", format_bytes_both(double(m->activation_bytes_measured)),
                                                    m->activation_bytes_match_formula ? "= formula" : "!= formula")});
  spec.size = {0, plot_height_leaving(float(rows.size()) + 1.5f)};
  draw_plot("activation", spec);
  draw_value_table("activation_table", rows);
}

}  // namespace

const StepViews& tensor_step_views() {
  static const StepViews views{{"column", draw_column_step, StepShows::TheoryOnly},
                               {"row", draw_row_step, StepShows::TheoryOnly},
                               {"mlp", draw_mlp_step, StepShows::TheoryOnly},
                               {"attention", draw_attention_step, StepShows::TheoryOnly},
                               {"scaling", draw_scaling_step},
                               {"sequence", draw_sequence_step}};
  return views;
}

}  // namespace dlsys::gui
