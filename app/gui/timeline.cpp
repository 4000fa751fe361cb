#include "app/gui/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <iterator>
#include <utility>

#include "app/export/span_colors.h"
#include "app/export/timeline_gaps.h"
#include "app/gui/figure_size.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"

namespace dlsys::gui {

namespace {

constexpr float kFoldPixels = 3.0f;
// Idle gaps narrower than this are not hatched: on a measured timeline the copies between ops leave slivers.
constexpr float kMinBubblePixels = 2.0f;

ImU32 to_imgui(Rgb c, float alpha = 1.0f) { return IM_COL32(c.r, c.g, c.b, static_cast<int>(alpha * 255)); }

ImU32 bubble_line_color() { return with_alpha(muted_text_color(), 0.45f); }

// A micro-batch that passes a device more than once (interleaved, DualPipeV) shows its later chunks with a light band
// along their top, so F3a and F3b differ even where no label fits. DualPipe's chunk is its direction, which has its
// own band at the foot.
bool is_later_chunk(const TimelineSpan& span) { return span.chunk > 0 && span.chunk != span.direction; }
ImU32 chunk_band_color(int chunk) { return IM_COL32(255, 255, 255, std::min(200, 90 + 40 * (chunk - 1))); }

// Diagonal hatching over a rectangle: the idle time, told apart from every filled op block.
void draw_hatch(ImDrawList* draw, ImVec2 a, ImVec2 c, float spacing) {
  draw->AddRectFilled(a, c, with_alpha(muted_text_color(), 0.08f));
  draw->PushClipRect(a, c, true);
  const float h = c.y - a.y;
  for (float x = a.x - h; x < c.x; x += spacing) draw->AddLine({x, c.y}, {x + h, a.y}, bubble_line_color(), 1.0f);
  draw->PopClipRect();
}

void draw_arrow(ImDrawList* draw, ImVec2 from, ImVec2 to, ImU32 color, float s) {
  draw->AddLine(from, to, color, 1.5f * s);
  const float dx = to.x - from.x, dy = to.y - from.y, len = std::max(1e-3f, std::sqrt(dx * dx + dy * dy));
  const float ux = dx / len, uy = dy / len, head = 6 * s;
  draw->AddTriangleFilled(to, {to.x - ux * head - uy * head * 0.5f, to.y - uy * head + ux * head * 0.5f},
                          {to.x - ux * head + uy * head * 0.5f, to.y - uy * head - ux * head * 0.5f}, color);
}

// What the legend lists: only what the timelines drawn contain.
enum class Swatch { Fill, ReverseBand, ChunkBand, Hatch, Arrow, Band, Outline };
struct LegendEntry {
  Swatch swatch;
  ImU32 color;
  std::string text;
};

std::vector<LegendEntry> legend_entries(const std::vector<const Timeline*>& timelines, bool overlay, bool any_gap,
                                        const std::vector<const TimelineMarks*>& marks) {
  bool f = false, b = false, w = false, reverse = false, later_chunk = false;
  // Collectives and optimizer steps (the data-parallel lessons' timelines), in the order they are listed.
  static const std::pair<const char*, const char*> kOtherKinds[] = {{"all_reduce", "AR all-reduce"},
                                                                    {"reduce_scatter", "RS reduce-scatter"},
                                                                    {"all_gather", "AG all-gather"},
                                                                    {"optimizer", "optimizer step"},
                                                                    {"comm", "copies to and from rank 0"}};
  bool other[std::size(kOtherKinds)] = {};
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    if (overlay && i > 0) continue;  // outlines: listed as one entry below
    for (const TimelineSpan& span : timelines[i]->spans) {
      for (std::size_t k = 0; k < std::size(kOtherKinds); ++k) other[k] = other[k] || span.kind == kOtherKinds[k].first;
      f = f || span.kind == "F";
      b = b || span.kind == "B";
      w = w || span.kind == "W";
      reverse = reverse || span.direction == 1;
      later_chunk = later_chunk || is_later_chunk(span);
    }
  }
  std::vector<LegendEntry> out;
  if (f) out.push_back({Swatch::Fill, to_imgui(span_color("F", 0)), "F forward"});
  if (b)
    out.push_back({Swatch::Fill, to_imgui(span_color("B", 0)),
                   w ? "B backward (input gradient where a W follows)" : "B backward"});
  if (w) out.push_back({Swatch::Fill, to_imgui(span_color("W", 0)), "W weight gradient"});
  for (std::size_t k = 0; k < std::size(kOtherKinds); ++k)
    if (other[k]) out.push_back({Swatch::Fill, to_imgui(span_color(kOtherKinds[k].first, 0)), kOtherKinds[k].second});
  if (reverse) out.push_back({Swatch::ReverseBand, to_imgui(span_color("F", 0)), "dark foot: reverse direction"});
  if (later_chunk)
    out.push_back({Swatch::ChunkBand, to_imgui(span_color("F", 0)), "light top: the micro-batch's later chunk (b)"});
  if (any_gap) out.push_back({Swatch::Hatch, 0, "bubble (idle)"});
  if (overlay && timelines.size() > 1) out.push_back({Swatch::Outline, theory_color(), timelines[1]->name});
  for (const TimelineMarks* m : marks) {
    if (m == nullptr) continue;
    if (!m->arrows.empty()) out.push_back({Swatch::Arrow, text_color(), m->arrows_label});
    if (!m->bands.empty()) out.push_back({Swatch::Band, highlight_color(), m->bands_label});
  }
  return out;
}

float legend_entry_width(const LegendEntry& e, float s) {
  return 1.6f * ImGui::GetTextLineHeight() + 6 * s + ImGui::CalcTextSize(e.text.c_str()).x + 18 * s;
}

int legend_rows(const std::vector<LegendEntry>& entries, float width, float s) {
  int rows = entries.empty() ? 0 : 1;
  float x = 0;
  for (const LegendEntry& e : entries) {
    const float w = legend_entry_width(e, s);
    if (x > 0 && x + w > width) {
      ++rows;
      x = 0;
    }
    x += w;
  }
  return rows;
}

void draw_legend(ImDrawList* draw, const std::vector<LegendEntry>& entries, ImVec2 origin, float width, float s) {
  const float line_h = ImGui::GetTextLineHeight(), sw = 1.6f * line_h, sh = 0.8f * line_h;
  float x = 0, y = origin.y;
  for (const LegendEntry& e : entries) {
    const float w = legend_entry_width(e, s);
    if (x > 0 && x + w > width) {
      x = 0;
      y += line_h + 6 * s;
    }
    const ImVec2 a{origin.x + x, y + (line_h - sh) / 2}, c{a.x + sw, a.y + sh};
    switch (e.swatch) {
      case Swatch::Fill:
        draw->AddRectFilled(a, c, e.color);
        break;
      case Swatch::ReverseBand:
        draw->AddRectFilled(a, c, e.color);
        draw->AddRectFilled({a.x, c.y - sh * 0.3f}, c, IM_COL32(0, 0, 0, 110));
        break;
      case Swatch::ChunkBand:
        draw->AddRectFilled(a, c, e.color);
        draw->AddRectFilled(a, {c.x, a.y + sh * 0.3f}, chunk_band_color(1));
        break;
      case Swatch::Hatch:
        draw_hatch(draw, a, c, 6 * s);
        break;
      case Swatch::Arrow:
        draw_arrow(draw, {a.x, a.y + sh / 2}, {c.x, a.y + sh / 2}, e.color, s);
        break;
      case Swatch::Band:
        draw->AddRect(a, c, e.color, 0, 0, 2 * s);
        break;
      case Swatch::Outline:
        draw->AddRect(a, c, e.color, 0, 0, 1.5f * s);
        break;
    }
    draw->AddText({c.x + 6 * s, y}, text_color(), e.text.c_str());
    x += w;
  }
}

}  // namespace

std::vector<DrawnBlock> layout_lane(const std::vector<TimelineSpan>& spans, const std::vector<int>& lane_order,
                                    double view_start, double view_end, float x0, float x1, float fold_px) {
  std::vector<DrawnBlock> blocks;
  const double px_per_unit = (x1 - x0) / (view_end - view_start);
  // Skip everything that ends before the view: spans in one lane do not overlap, so ends are ordered like starts.
  auto first = std::lower_bound(lane_order.begin(), lane_order.end(), view_start,
                                [&](int i, double t) { return spans[i].end <= t; });
  for (auto it = first; it != lane_order.end(); ++it) {
    const TimelineSpan& s = spans[*it];
    if (s.start >= view_end) break;
    const float a = x0 + static_cast<float>((std::max(s.start, view_start) - view_start) * px_per_unit);
    const float b = x0 + static_cast<float>((std::min(s.end, view_end) - view_start) * px_per_unit);
    if (b - a < fold_px) {
      DrawnBlock* last = blocks.empty() ? nullptr : &blocks.back();
      if (last != nullptr && last->folded > 0 && a - last->x1 < 1.0f) {
        last->x1 = std::max(last->x1, b);
        last->span = -1;  // now stands for several spans
        ++last->folded;
        continue;
      }
      blocks.push_back({a, std::max(b, a + 1.0f), *it, 1});  // a lone narrow span keeps its identity
    } else {
      blocks.push_back({a, b, *it, 0});
    }
  }
  return blocks;
}

namespace {
// Whether the phase bands of `marks` dim this span (it lies outside every band of its lane): dimmed blocks do not
// show their own colour.
bool dimmed(const TimelineMarks* marks, int lane, const TimelineSpan& span) {
  if (marks == nullptr || marks->bands.empty()) return false;
  for (const TimelineBand& band : marks->bands)
    if (band.lane == lane && band.end > band.start && span.start >= band.start && span.end <= band.end) return false;
  return true;
}
// A block's header that fits the widget's width: the full text, else a shorter form (the overlay's outline is in
// the legend anyway), else the shorter form cut with an ellipsis, so it never runs past the frame.
std::string fit_header(const std::string& full, const std::string& shorter, float width) {
  if (ImGui::CalcTextSize(full.c_str()).x <= width) return full;
  std::string text = shorter;
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  while (text.size() > 1 && ImGui::CalcTextSize((text + "...").c_str()).x > width) text.pop_back();
  return text + "...";
}

}  // namespace

TimelineHover draw_timelines(const char* id, const std::vector<const Timeline*>& timelines, bool overlay,
                             TimelineViewState& view, ImVec2 size, const std::vector<const TimelineMarks*>& marks) {
  TimelineHover hover;
  if (timelines.empty()) return hover;
  ImGui::PushID(id);
  const float s = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (size.x <= 0) size.x = avail.x;
  if (size.y <= 0) size.y = avail.y;
  size.y = within_view_height(size.y);
  const float line_h = ImGui::GetTextLineHeight();
  const float axis_h = line_h + 8 * s;
  const int blocks = overlay ? 1 : static_cast<int>(timelines.size());
  int total_lanes = 0;
  for (int b = 0; b < blocks; ++b) total_lanes += static_cast<int>(timelines[b]->lanes.size());
  const float header_h = line_h + 6 * s;
  const float lane_gap = 3 * s;

  double data_end = 0;
  for (const Timeline* t : timelines) data_end = std::max(data_end, timeline_end(*t));
  if (data_end <= 0) data_end = 1;
  if (!view.fitted || view.data_end != data_end) {
    view.view_start = 0;
    view.view_end = data_end * 1.02;
    view.fitted = true;
    view.data_end = data_end;
  }

  // The idle gaps of the filled timelines, per block and lane: hatched below, listed in the legend when any shows.
  float label_w = 0;
  for (const Timeline* t : timelines)
    for (const auto& lane : t->lanes) label_w = std::max(label_w, ImGui::CalcTextSize(lane.c_str()).x);
  const float x0 = ImGui::GetCursorScreenPos().x + label_w + 14 * s,
              x1 = ImGui::GetCursorScreenPos().x + size.x - 8 * s;
  const double min_gap = kMinBubblePixels * (view.view_end - view.view_start) / std::max(1.0f, x1 - x0);
  std::vector<std::vector<std::vector<int>>> lane_orders;
  for (const Timeline* t : timelines) lane_orders.push_back(spans_by_lane(*t));
  std::vector<std::vector<IdleGap>> gaps(blocks);
  bool any_gap = false;
  for (int b = 0; b < blocks; ++b) {
    const Timeline& t = *timelines[b];
    const double end = timeline_end(t);
    for (int lane = 0; lane < static_cast<int>(t.lanes.size()); ++lane)
      for (const IdleGap& g : lane_idle_gaps(t.spans, lane_orders[b][lane], lane, end, min_gap)) gaps[b].push_back(g);
    any_gap = any_gap || !gaps[b].empty();
  }
  const std::vector<LegendEntry> legend = legend_entries(timelines, overlay, any_gap, marks);
  const float full_legend_h = legend_rows(legend, size.x - 12 * s, s) * (line_h + 6 * s);

  // Every lane keeps room for its label: with many lanes or large text the view scrolls rather than overprint. Lanes
  // stop growing at 80 points (a two-device pipeline then still reads at a glance); the widget then takes only the
  // height it draws, leaving the rest to what follows.
  // Nor is it ever taller than the view, so it can be seen whole: lanes too many for that get thinner than a line
  // of text, and their labels shrink or go (the tooltip still names every span). Where even that leaves no room for
  // lanes of 3/4 of a line (large text in a small window), the legend moves under the widget.
  const float lanes = static_cast<float>(std::max(1, total_lanes));
  const float bare_h = axis_h + blocks * header_h + 8 * s;
  const bool legend_inside = bare_h + full_legend_h + lanes * (0.75f * line_h + lane_gap) <= view_height();
  const float legend_h = legend_inside ? full_legend_h : 0;
  const float fixed_h = bare_h + legend_h;
  const float thinnest = std::clamp((view_height() - fixed_h) / lanes - lane_gap, 2 * s, line_h);
  const float lane_h = std::clamp((size.y - fixed_h) / lanes - lane_gap, thinnest, std::max(line_h, 80 * s));
  size.y = fixed_h + total_lanes * (lane_h + lane_gap);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("timeline", size);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  ImDrawList* draw = ImGui::GetWindowDrawList();

  // Zoom around the mouse with the wheel, pan by dragging, double-click to fit.
  const ImGuiIO& io = ImGui::GetIO();
  const double span_t = view.view_end - view.view_start;
  // Ctrl + wheel zooms; the wheel alone scrolls the view, so reading down a page never zooms a timeline by accident.
  if (hovered && io.KeyCtrl && io.MouseWheel != 0) {
    const double at = view.view_start + (io.MousePos.x - x0) / (x1 - x0) * span_t;
    const double factor = std::pow(0.8, io.MouseWheel);
    const double new_span = std::clamp(span_t * factor, data_end * 1e-5, data_end * 4);
    view.view_start = at - (at - view.view_start) * new_span / span_t;
    view.view_end = view.view_start + new_span;
  }
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    const double shift = -io.MouseDelta.x / (x1 - x0) * span_t;
    view.view_start += shift;
    view.view_end += shift;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) view.fitted = false;
  auto time_x = [&](double t) {
    return x0 + static_cast<float>((t - view.view_start) / (view.view_end - view.view_start) * (x1 - x0));
  };

  draw->AddRectFilled(origin, {origin.x + size.x, origin.y + size.y}, panel_color(), 4 * s);
  // The colour of the widest block drawn in the top lane: what a screenshot of this timeline must show (tests look
  // for it; the top lane is on screen as soon as any of the widget is).
  ImU32 widest_color = 0;
  float widest_px = 0;
  const ImVec2 bubble_text = ImGui::CalcTextSize("bubble");
  float y = origin.y + 4 * s;
  for (int b = 0; b < blocks; ++b) {
    const Timeline& first = *timelines[b];
    std::string header = overlay ? fmt::format("{} (filled) and {} (outlined)", first.name,
                                               timelines.size() > 1 ? timelines[1]->name : std::string("-"))
                                 : fmt::format("{}  [{}]", first.name, first.mode);
    header = fit_header(header, overlay ? first.name + " (filled; the outline is named in the legend)" : header,
                        size.x - 12 * s);
    draw->AddText({origin.x + 6 * s, y}, text_color(), header.c_str());
    y += header_h;
    auto lane_y = [&](int lane) { return y + lane * (lane_h + lane_gap); };
    const int layers = overlay ? static_cast<int>(timelines.size()) : 1;
    for (int lane = 0; lane < static_cast<int>(first.lanes.size()); ++lane) {
      const float ly = lane_y(lane);
      const float label_px = lane_h >= line_h ? ImGui::GetFontSize() : 0.75f * ImGui::GetFontSize();
      if (lane_h >= 0.75f * line_h)
        draw->AddText(ImGui::GetFont(), label_px,
                      {origin.x + 6 * s, ly + (lane_h - line_h * label_px / ImGui::GetFontSize()) / 2},
                      muted_text_color(), first.lanes[lane].c_str());
      draw->AddRectFilled({x0, ly}, {x1, ly + lane_h}, with_alpha(muted_text_color(), 0.10f));
    }
    draw->PushClipRect({x0, y}, {x1, lane_y(static_cast<int>(first.lanes.size()))}, true);
    for (const IdleGap& g : gaps[b]) {
      const float ly = lane_y(g.lane), a = time_x(g.start), c = time_x(g.end);
      if (c < x0 || a > x1) continue;
      draw_hatch(draw, {a, ly}, {c, ly + lane_h}, 7 * s);
      if (c - a > bubble_text.x + 8 * s && lane_h >= bubble_text.y)
        draw->AddText({(a + c - bubble_text.x) / 2, ly + (lane_h - bubble_text.y) / 2}, muted_text_color(), "bubble");
    }
    draw->PopClipRect();
    for (int lane = 0; lane < static_cast<int>(first.lanes.size()); ++lane) {
      const float ly = lane_y(lane);
      for (int layer = 0; layer < layers; ++layer) {
        const int index = overlay ? layer : b;
        const Timeline& t = *timelines[index];
        if (lane >= static_cast<int>(t.lanes.size())) continue;
        const auto& order = lane_orders[index];
        const bool outline = overlay && layer > 0;
        draw->PushClipRect({x0, ly}, {x1, ly + lane_h}, true);
        for (const DrawnBlock& block :
             layout_lane(t.spans, order[lane], view.view_start, view.view_end, x0, x1, kFoldPixels)) {
          const ImVec2 a{block.x0, ly + (outline ? 1.5f * s : 0)}, c{block.x1, ly + lane_h - (outline ? 1.5f * s : 0)};
          if (block.folded > 1) {
            draw->AddRectFilled(a, c, with_alpha(muted_text_color(), outline ? 0.3f : 0.55f));
            continue;
          }
          const TimelineSpan& span = t.spans[block.span];
          const ImU32 color = to_imgui(span_color(span.kind, span.micro_batch));
          if (outline)
            draw->AddRect(a, c, theory_color(), 0, 0, 1.5f * s);
          else
            draw->AddRectFilled(a, c, color);
          if (!outline && b == 0 && lane == 0 && block.x1 - block.x0 > widest_px && span.direction == 0 &&
              !dimmed(b < static_cast<int>(marks.size()) ? marks[b] : nullptr, lane, span)) {
            widest_px = block.x1 - block.x0;
            widest_color = color;
          }
          if (!outline && span.direction == 1)  // the reverse direction carries a dark band along its foot
            draw->AddRectFilled({a.x, c.y - (c.y - a.y) * 0.22f}, c, IM_COL32(0, 0, 0, 110));
          if (!outline && is_later_chunk(span))
            draw->AddRectFilled(a, {c.x, a.y + (c.y - a.y) * 0.22f}, chunk_band_color(span.chunk));
          if (!outline && block.x1 - block.x0 > 3) draw->AddLine({c.x, a.y}, {c.x, c.y}, panel_color(), 1.0f);
          // The label at full size where it fits, at 3/4 size where only that fits, else left out.
          if (!outline) {
            for (const float font_scale : {1.0f, 0.75f}) {
              const float font_px = ImGui::GetFontSize() * font_scale;
              const ImVec2 label_size =
                  ImGui::GetFont()->CalcTextSizeA(font_px, FLT_MAX, 0.0f, span.label.c_str(), nullptr, nullptr);
              if (block.x1 - block.x0 > label_size.x + 4 * s && lane_h >= label_size.y) {
                draw->AddText(ImGui::GetFont(), font_px,
                              {(a.x + c.x - label_size.x) / 2, ly + (lane_h - label_size.y) / 2}, IM_COL32_WHITE,
                              span.label.c_str());
                break;
              }
            }
          }
          if (hovered && io.MousePos.y >= ly && io.MousePos.y < ly + lane_h && io.MousePos.x >= block.x0 &&
              io.MousePos.x < std::max(block.x1, block.x0 + 2)) {
            hover = {index, block.span};
            draw->AddRect(a, c, highlight_color(), 0, 0, 2 * s);
          }
        }
        draw->PopClipRect();
      }
    }
    // The marks of this block's timeline: the phase bands (the rest dimmed), then the messages on top.
    const TimelineMarks* m = b < static_cast<int>(marks.size()) ? marks[b] : nullptr;
    if (m != nullptr) {
      draw->PushClipRect({x0, y}, {x1, lane_y(static_cast<int>(first.lanes.size()))}, true);
      const ImU32 dim = with_alpha(panel_color(), 0.72f);
      for (const TimelineBand& band : m->bands) {
        if (band.lane < 0 || band.lane >= static_cast<int>(first.lanes.size())) continue;
        const float ly = lane_y(band.lane);
        if (band.end <= band.start) {
          draw->AddRectFilled({x0, ly}, {x1, ly + lane_h}, dim);
          continue;
        }
        const float a = time_x(band.start), c = time_x(band.end);
        draw->AddRectFilled({x0, ly}, {a, ly + lane_h}, dim);
        draw->AddRectFilled({c, ly}, {x1, ly + lane_h}, dim);
        draw->AddRect({a, ly - 1 * s}, {c, ly + lane_h + 1 * s}, highlight_color(), 0, 0, 2.5f * s);
      }
      for (const TimelineArrow& arrow : m->arrows) {
        const float a = time_x(arrow.sent), c = time_x(arrow.arrives);
        if (std::max(a, c) < x0 || std::min(a, c) > x1) continue;
        const bool down = arrow.to_lane > arrow.from_lane;
        const float from_y = lane_y(arrow.from_lane) + lane_h * 0.5f;
        const float to_y = down ? lane_y(arrow.to_lane) + 2 * s : lane_y(arrow.to_lane) + lane_h - 2 * s;
        draw_arrow(draw, {a, from_y}, {c, to_y}, text_color(), s);
      }
      draw->PopClipRect();
    }
    y += first.lanes.size() * (lane_h + lane_gap);
  }

  // Time axis with round ticks in the timelines' unit.
  const double raw = (view.view_end - view.view_start) / std::max(2.0, (x1 - x0) / (90.0 * s));
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  const std::string& unit = timelines.front()->time_unit;
  const std::string unit_text = unit == "units" ? "time (cost units)" : "time (" + unit + ")";
  for (double t = std::ceil(view.view_start / step) * step; t <= view.view_end; t += step) {
    const float x = time_x(t);
    draw->AddLine({x, origin.y + header_h}, {x, y}, grid_color());
    const std::string label = fmt::format("{:g}", t);
    const float half = ImGui::CalcTextSize(label.c_str()).x / 2;
    if (x + half < x1 - ImGui::CalcTextSize(unit_text.c_str()).x - 6 * s)  // keep clear of the unit at the end
      draw->AddText({x - half, y + 2 * s}, muted_text_color(), label.c_str());
  }
  draw->AddText({x1 - ImGui::CalcTextSize(unit_text.c_str()).x, y + 2 * s}, muted_text_color(), unit_text.c_str());
  note_plot_area(timelines.front()->name, {x0, origin.y}, {x1, origin.y + size.y},
                 widest_px >= 4 * s ? std::vector<ImU32>{widest_color} : std::vector<ImU32>{}, origin,
                 {origin.x + size.x, origin.y + size.y});
  if (legend_inside) {
    draw_legend(draw, legend, {origin.x + 6 * s, y + axis_h}, size.x - 12 * s, s);
  } else {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    draw_legend(draw, legend, {at.x + 6 * s, at.y}, size.x - 12 * s, s);
    ImGui::Dummy({size.x, full_legend_h});
  }
  ImGui::PopID();
  return hover;
}

}  // namespace dlsys::gui
