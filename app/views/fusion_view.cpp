// Views of the fusion lesson: one element's memory operations unfused and fused (animated), the measured times of
// y = ReLU(x + b) beside its byte ratios, x.cos().cos() and GELU against ReLU, chains of pointwise operations against
// the bytes they move, and the same kernels on arrays that fit in cache. Every number comes from the step data or the
// run's typed values; the views only lay them out.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "app/gui/figure_size.h"
#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/view.h"
#include "app/views/wide_tables.h"
#include "engine/units.h"
#include "lessons/fusion/fusion_steps.h"
#include "lessons/fusion/fusion_values.h"

namespace dlsys::gui {

namespace {

using fusion::ElementOp;
using fusion::FusionMeasured;
using fusion::FusionTheory;
using fusion::OpKind;
using fusion::OpSequence;
using fusion::Timing;

constexpr double kSecondsPerOp = kAnimationTickS;  // the traffic animation's pace

const fusion::FusionSteps* steps_of(const ViewContext& ctx) { return step_data_as<fusion::FusionSteps>(ctx); }
const FusionMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->measured_as<FusionMeasured>() : nullptr;
}
const FusionTheory* theory_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->theory_as<FusionTheory>() : nullptr;
}

ImU32 op_color(OpKind kind) {
  switch (kind) {
    case OpKind::Read:
      return series_color(0);
    case OpKind::Write:
      return series_color(1);
    case OpKind::Cached:
      return series_color(2);
    case OpKind::Register:
      return series_color(3);
    case OpKind::Compute:
      return muted_text_color();
  }
  return muted_text_color();
}

bool reaches_memory(OpKind kind) { return kind == OpKind::Read || kind == OpKind::Write; }

// The width of a sequence's boxes in one row: a gap after each box, two more between launches.
float one_row_width(const OpSequence& seq, float box_width, float gap) {
  return float(seq.ops.size()) * (box_width + gap) + 2 * gap * float(seq.launch_names.size() - 1) - gap;
}

// One way of computing an element as a row of boxes, one per operation, grouped under their kernel launch; the
// first `shown` operations are drawn strong, the last of them outlined (the one being done) unless every operation
// is shown, the rest faint. Where `wrap_rows`, a launch that does not fit the width left continues on a row below.
void draw_sequence(const OpSequence& seq, int shown, float box_width, bool wrap_rows) {
  const float s = ui_scale(), line = ImGui::GetTextLineHeight();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  int memory_done = 0, launches_done = 0;
  for (int i = 0; i < shown && i < int(seq.ops.size()); ++i) {
    memory_done += reaches_memory(seq.ops[std::size_t(i)].kind);
    launches_done = std::max(launches_done, seq.ops[std::size_t(i)].launch + 1);
  }
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted(seq.name.c_str());
  ImGui::PopFont();
  const float gap = 8 * s, bracket = line + 6 * s, wrap = box_width - 10 * s;
  // In one row, the line under the name wraps at the row's width: the whole sequence grows with its text.
  ImGui::PushTextWrapPos(wrap_rows ? 0 : ImGui::GetCursorPosX() + one_row_width(seq, box_width, gap));
  ImGui::TextWrapped("memory operations %d of %d, launches %d of %d, %g B per element", memory_done, seq.memory_ops,
                     launches_done, int(seq.launch_names.size()), seq.bytes_per_element);
  ImGui::PopTextWrapPos();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  // As tall as the longest words need at this width and text size.
  float height = 2.2f * line;
  for (const ElementOp& op : seq.ops)
    height = std::max(height, ImGui::CalcTextSize(op.what.c_str(), nullptr, false, wrap).y + 1.2f * line);
  // A launch that does not fit in what is left of the row starts a new row (at large text sizes).
  const float right = wrap_rows ? origin.x + ImGui::GetContentRegionAvail().x : FLT_MAX;
  const float row_height = bracket + height + 10 * s;
  float x = origin.x, top = origin.y, widest = 0;
  int launch = -1;
  float launch_start = x;
  auto close_launch = [&](float end) {
    if (launch < 0) return;
    const float y = top + line / 2;
    draw->AddLine({launch_start, y}, {end - gap, y}, text_color(), 1.5f * s);
    draw->AddLine({launch_start, y}, {launch_start, y + 6 * s}, text_color(), 1.5f * s);
    draw->AddLine({end - gap, y}, {end - gap, y + 6 * s}, text_color(), 1.5f * s);
    const std::string label = fmt::format("launch {}: {}", launch + 1, seq.launch_names[std::size_t(launch)]);
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    const float lx = std::max(launch_start, (launch_start + end - gap - size.x) / 2);
    draw->AddRectFilled({lx - 4 * s, top}, {lx + size.x + 4 * s, top + line}, panel_color());
    draw->AddText({lx, top}, text_color(), label.c_str());
    widest = std::max(widest, end - origin.x);
  };
  for (int i = 0; i < int(seq.ops.size()); ++i) {
    const ElementOp& op = seq.ops[std::size_t(i)];
    if (op.launch != launch) {
      close_launch(x);
      int ops_in_launch = 0;
      for (const ElementOp& other : seq.ops) ops_in_launch += other.launch == op.launch;
      if (launch >= 0) x += 2 * gap;  // a wider gap between launches
      if (launch >= 0 && x + ops_in_launch * (box_width + gap) > right) x = origin.x, top += row_height;
      launch = op.launch;
      launch_start = x;
    } else if (x + box_width > right) {  // a launch wider than the view: carry on below
      close_launch(x);
      x = launch_start = origin.x;
      top += row_height;
    }
    const ImVec2 a{x, top + bracket}, b{x + box_width, top + bracket + height};
    const bool done = i < shown, current = i == shown - 1 && shown < int(seq.ops.size());
    const ImU32 color = op_color(op.kind);
    draw->AddRectFilled(a, b, with_alpha(color, done ? 0.85f : 0.18f), 5 * s);
    if (current) draw->AddRect({a.x - 3 * s, a.y - 3 * s}, {b.x + 3 * s, b.y + 3 * s}, text_color(), 6 * s, 0, 3 * s);
    // The words, wrapped inside the box.
    const ImVec2 size = ImGui::CalcTextSize(op.what.c_str(), nullptr, false, wrap);
    draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), {a.x + 5 * s, (a.y + b.y - size.y) / 2},
                  done ? (op.kind == OpKind::Compute ? panel_color() : IM_COL32(10, 10, 10, 255)) : text_color(),
                  op.what.c_str(), nullptr, wrap);
    x += box_width + gap;
  }
  close_launch(x);
  ImGui::Dummy({widest, top - origin.y + row_height});
}

// The unfused and the fused sequence, one above the other, or side by side (`beside`) where the window is short of
// room: the diagram is then half as tall and keeps its text large (its fitted text shrinks it to the width instead).
// Returns the right edge (screen x) the key under them wraps at.
float draw_sequences(const OpSequence& unfused, const OpSequence& fused, int shown, bool beside) {
  const float s = ui_scale(), avail = ImGui::GetContentRegionAvail().x;
  // Never narrower than the longest word; stacked, seven boxes and the gaps between them across the width, and side
  // by side as narrow as the words allow, so the diagram's size follows its text alone.
  float widest_word = 0;
  for (const char* word : {"register", "(from", "cache)", "max(t,", "write", "x1[i]"})
    widest_word = std::max(widest_word, ImGui::CalcTextSize(word).x);
  const float least_box = widest_word + 14 * s;
  if (!beside) {
    const float box = std::clamp((avail - 10 * 8 * s) / float(unfused.ops.size()), least_box, 190 * s);
    draw_sequence(unfused, shown, box, true);
    ImGui::Spacing();
    draw_sequence(fused, shown, box, true);
    return ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  }
  ImGui::BeginGroup();
  draw_sequence(unfused, shown, least_box, false);
  ImGui::EndGroup();
  ImGui::SameLine(0, 24 * s);
  ImGui::BeginGroup();
  draw_sequence(fused, shown, least_box, false);
  ImGui::EndGroup();
  return ImGui::GetItemRectMax().x;
}

// The colours' meanings, side by side, on as many lines as the width to `right` (screen x) needs. Its own key, not
// draw_color_key: that one wraps a long meaning beside its swatch, which inside this fitted diagram at 2x text made
// the fit shrink the diagram's text to 0.75 of 1x.
void draw_key(float right) {
  const float s = ui_scale(), h = ImGui::GetTextLineHeight();
  const std::pair<OpKind, const char*> entries[] = {{OpKind::Read, "read from main memory"},
                                                    {OpKind::Write, "written to main memory"},
                                                    {OpKind::Cached, "read from cache"},
                                                    {OpKind::Register, "kept in a register"},
                                                    {OpKind::Compute, "arithmetic"}};
  for (const auto& [kind, meaning] : entries) {
    if (kind != OpKind::Read) {
      ImGui::SameLine(0, 18 * s);
      if (ImGui::GetCursorScreenPos().x + h + 6 * s + ImGui::CalcTextSize(meaning).x > right) ImGui::NewLine();
    }
    const ImVec2 o = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled({o.x, o.y + 1 * s}, {o.x + h, o.y + h - 1 * s}, op_color(kind), 3 * s);
    ImGui::Dummy({h + 6 * s, h});
    ImGui::SameLine(0, 0);
    ImGui::TextUnformatted(meaning);
  }
}

void draw_traffic_step(const ViewContext& ctx) {
  const fusion::FusionSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const OpSequence &unfused = steps->add_relu_unfused, &fused = steps->add_relu_fused;
  const int longest = int(std::max(unfused.ops.size(), fused.ops.size()));
  // Both rows advance together, one operation every kSecondsPerOp, then hold the full picture for two beats. A figure
  // (and the first frame of a screenshot) shows everything done.
  const int tick = static_cast<int>(ctx.step_time_s / kSecondsPerOp) % (longest + 3);
  const int shown = ctx.figure || ctx.step_time_s == 0 ? longest : std::min(tick, longest);
  const std::string title =
      fmt::format("y = ReLU(x + b), x of shape B x C, {} bias: the operations one element goes through.",
                  steps->bias == "full" ? "a full-size (B x C)" : "a broadcast (C)");
  const bool beside = window_is_short();
  begin_fitted_figure(title);
  ImGui::TextWrapped("%s", title.c_str());
  ImGui::Spacing();
  const float key_right = draw_sequences(unfused, fused, shown, beside);
  ImGui::Spacing();
  draw_key(key_right);
  end_figure(title);
  ImGui::Spacing();
  const FusionTheory& t = steps->theory;
  draw_wide_value_table("traffic_rows", {
                                            {"the course's count (full-size b): 5 against 3 memory operations",
                                             fmt::format("20 B / 12 B = {:.4g}", t.byte_ratio_full)},
                                            {"its code's broadcast b (stays in cache): 4 against 2",
                                             fmt::format("16 B / 8 B = {:.4g}", t.byte_ratio_broadcast)},
                                            {fmt::format("whole arrays, {} x {}, {} bias", t.rows, t.cols, t.bias),
                                             fmt::format("{} / {} = {:.4g}", format_bytes_binary(t.bytes_unfused),
                                                         format_bytes_binary(t.bytes_fused), t.byte_ratio)},
                                        });
}

std::string time_text(const Timing& t) {
  if (t.min_us == t.max_us) return format_duration_us(t.us);  // one timed call
  return fmt::format("{} (fastest {}, slowest {})", format_duration_us(t.us), format_duration_us(t.min_us),
                     format_duration_us(t.max_us));
}

void draw_measured_step(const ViewContext& ctx) {
  const FusionMeasured* m = measured_of(ctx);
  const FusionTheory* t = theory_of(ctx);
  if (m == nullptr || t == nullptr) return draw_needs_run(ctx, "y = ReLU(x + b) unfused and fused");
  draw_bars(
      {
          {"broadcast bias, unfused", m->unfused_broadcast.us, series_color(1), time_text(m->unfused_broadcast)},
          {"broadcast bias, fused", m->fused_broadcast.us, series_color(0), time_text(m->fused_broadcast)},
          {"full bias, unfused", m->unfused_full.us, with_alpha(series_color(1), 0.6f), time_text(m->unfused_full)},
          {"full bias, fused", m->fused_full.us, with_alpha(series_color(0), 0.6f), time_text(m->fused_full)},
      },
      {.title = fmt::format("y = ReLU(x + b) on {} x {} fp32, median call", t->rows, t->cols),
       .height = main_figure_height()});
  ImGui::Spacing();
  draw_wide_columns_table(
      "ratios", {"bias", "byte ratio", "measured speedup"},
      {
          {"broadcast (shape C, as the course's code)", fmt::format("16 B / 8 B = {:.3g}", t->byte_ratio_broadcast),
           fmt::format("{:.2f}", m->speedup_broadcast)},
          {"full (shape B x C)", fmt::format("20 B / 12 B = {:.3g}", t->byte_ratio_full),
           fmt::format("{:.2f}", m->speedup_full)},
      });
  ImGui::Spacing();
  draw_wide_value_table(
      "bandwidth",
      {
          {fmt::format("fused kernel ({} bias): {} / median call", t->bias, format_bytes_binary(t->bytes_fused)),
           fmt::format("{:.2f} GB/s", m->effective_gbps)},
          {"STREAM copy on the same arrays (fastest call)", fmt::format("{:.2f} GB/s", m->stream_copy_gbps)},
          {"share of STREAM copy", percent_text(m->effective_fraction_of_stream, 0)},
      });
}

void draw_cos_step(const ViewContext& ctx) {
  const FusionMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "cos, x.cos().cos(), ReLU and GELU");
  draw_bars(
      {
          {"cos (one pass)", m->cos.us, series_color(2), time_text(m->cos)},
          {"cos, then cos (two passes)", m->cos_cos_unfused.us, series_color(1), time_text(m->cos_cos_unfused)},
          {"cos.cos fused (one pass)", m->cos_cos_fused.us, series_color(0), time_text(m->cos_cos_fused)},
          {"ReLU (one pass)", m->relu.us, series_color(4), time_text(m->relu)},
          {"GELU, tanh form (one pass)", m->gelu.us, series_color(5), time_text(m->gelu)},
      },
      {.title = "One pass of each pointwise function, median call", .height = main_figure_height()});
  if (const fusion::FusionSteps* steps = steps_of(ctx)) {
    const float s = ui_scale();
    const float box = std::clamp((ImGui::GetContentRegionAvail().x - 80 * s) / 7.0f,
                                 ImGui::CalcTextSize("register").x + 14 * s, 170 * s);
    draw_sequence(steps->cos_unfused, int(steps->cos_unfused.ops.size()), box, true);
    draw_sequence(steps->cos_fused, int(steps->cos_fused.ops.size()), box, true);
  }

  ImGui::Spacing();
  draw_wide_value_table(
      "cos_rows",
      {
          {"unfused / fused: 4 against 2 global accesses", fmt::format("{:.2f}x", m->cos_cos_speedup)},
          {"fused cos.cos / one cos: two cosines in the time of", fmt::format("{:.2f} cos", m->cos_cos_over_cos)},
          {"GELU / ReLU", fmt::format("{:.2f}", m->gelu_over_relu)},
      });
}

void draw_chains_step(const ViewContext& ctx) {
  const FusionMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "chains of pointwise operations");
  PlotSpec spec{"Chains of L multiply-adds", {"L (operations)", "", false}, {"time", "ms", false}, {}, {}};
  int color = 0;
  for (const char* id : {"chain_unfused", "chain_fused"})
    if (const Series* s = ctx.result->find_series(id)) spec.lines.push_back(categorical_line(*s, color++));
  color = 0;
  for (const char* id : {"chain_unfused_theory", "chain_fused_theory"})
    if (const Series* s = ctx.result->find_series(id)) {
      spec.lines.push_back(categorical_line(*s, color++));
      spec.lines.back().dashed = true;
    }
  spec.x.min = 0;
  spec.y.min = 0;
  draw_plot("chains", spec);
}

void draw_small_step(const ViewContext& ctx) {
  const FusionMeasured* m = measured_of(ctx);
  const FusionTheory* t = theory_of(ctx);
  if (m == nullptr || t == nullptr) return draw_needs_run(ctx, "y = ReLU(x + b) on arrays that fit in cache");
  draw_bars(
      {
          {"unfused (two calls)", m->small_unfused.us, series_color(1), time_text(m->small_unfused)},
          {"fused (one call)", m->small_fused.us, series_color(0), time_text(m->small_fused)},
          {m->dispatch_what.c_str(), m->dispatch.us, muted_text_color(), time_text(m->dispatch)},
      },
      {.title = fmt::format("y = ReLU(x + b), {} per array, {} bias: time per call",
                            format_bytes_binary(t->small_bytes), t->bias),
       .height = main_figure_height()});
  ImGui::Spacing();
  draw_wide_value_table("small_rows", {
                                          {"speedup in cache", fmt::format("{:.2f}x", m->small_speedup)},
                                          {fmt::format("speedup on {} x {} (from main memory)", t->rows, t->cols),
                                           fmt::format("{:.2f}x", m->speedup)},
                                          {"byte ratio", fmt::format("{:.3g}", t->byte_ratio)},
                                      });
}

}  // namespace

const StepViews& fusion_step_views() {
  static const StepViews views{{"traffic", draw_traffic_step, StepShows::TheoryOnly},
                               {"measured", draw_measured_step},
                               {"cos", draw_cos_step},
                               {"chains", draw_chains_step},
                               {"small", draw_small_step}};
  return views;
}

}  // namespace dlsys::gui
