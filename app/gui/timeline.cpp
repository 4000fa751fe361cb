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
#include "app/gui/timeline_folds.h"
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
void draw_idle_area(ImDrawList* draw, ImVec2 a, ImVec2 c, float spacing) {
  draw->AddRectFilled(a, c, with_alpha(muted_text_color(), 0.08f));
  draw_hatching(draw, a, c, bubble_line_color(), spacing);
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
                                                                    {"tp_all_reduce", "tp all-reduce"},
                                                                    {"dp_all_reduce", "dp all-reduce (a bucket)"},
                                                                    {"reduce_scatter", "RS reduce-scatter"},
                                                                    {"all_gather", "AG all-gather"},
                                                                    {"optimizer", "optimizer step"},
                                                                    {"comm", "copies to and from rank 0"},
                                                                    {"compute", "compute"},
                                                                    {"all_to_all", "all-to-all"}};
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
        draw_idle_area(draw, a, c, 6 * s);
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

namespace {

// Where everything of one draw_timelines call goes: computed first, then used by the interaction and the drawing.
struct TimelineLayout {
  ImVec2 origin, size;
  float s = 1, line_h = 0, axis_h = 0, header_h = 0, lane_gap = 0, lane_h = 0;
  float x0 = 0, x1 = 0;  // the time axis's pixel range
  int blocks = 0;        // stacked blocks of lanes (1 when overlaid)
  bool legend_inside = true;
  float full_legend_h = 0;
  std::vector<LegendEntry> legend;
  std::vector<std::vector<std::vector<int>>> lane_orders;  // per timeline, per lane: span indices by start
  std::vector<std::vector<IdleGap>> gaps;                  // per block
};

// The time range to fit: the whole run on the folded axis.
void fit_view(TimelineViewState& view, double data_end) {
  if (view.fitted && view.data_end == data_end) return;
  view.view_start = 0;
  view.view_end = data_end * 1.02;
  view.fitted = true;
  view.data_end = data_end;
}

// Lanes keep room for their labels: with many lanes or large text the view scrolls rather than overprint. Lanes stop
// growing at 80 points (a two-device pipeline then still reads at a glance); the widget then takes only the height
// it draws. Nor is it ever taller than the view, so it can be seen whole: lanes too many for that get thinner than a
// line of text, and their labels shrink or go (the tooltip still names every span). Where even that leaves no room
// for lanes of 3/4 of a line (large text in a small window), the legend moves under the widget.
void fit_lanes(TimelineLayout& l, int total_lanes) {
  const float lanes = static_cast<float>(std::max(1, total_lanes));
  const float bare_h = l.axis_h + l.blocks * l.header_h + 8 * l.s;
  l.legend_inside = bare_h + l.full_legend_h + lanes * (0.75f * l.line_h + l.lane_gap) <= view_height();
  const float fixed_h = bare_h + (l.legend_inside ? l.full_legend_h : 0);
  const float thinnest = std::clamp((view_height() - fixed_h) / lanes - l.lane_gap, 2 * l.s, l.line_h);
  l.lane_h = std::clamp((l.size.y - fixed_h) / lanes - l.lane_gap, thinnest, std::max(l.line_h, 80 * l.s));
  l.size.y = fixed_h + total_lanes * (l.lane_h + l.lane_gap);
}

TimelineLayout layout_timelines(const std::vector<const Timeline*>& timelines, bool overlay, ImVec2 size,
                                const TimelineViewState& view, const std::vector<const TimelineMarks*>& marks) {
  TimelineLayout l;
  l.s = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  l.size = {size.x > 0 ? size.x : avail.x, within_view_height(size.y > 0 ? size.y : avail.y)};
  l.origin = ImGui::GetCursorScreenPos();
  l.line_h = ImGui::GetTextLineHeight();
  l.axis_h = l.line_h + 8 * l.s;
  l.header_h = l.line_h + 6 * l.s;
  l.lane_gap = 3 * l.s;
  l.blocks = overlay ? 1 : static_cast<int>(timelines.size());
  float label_w = 0;
  for (const Timeline* t : timelines)
    for (const auto& lane : t->lanes) label_w = std::max(label_w, ImGui::CalcTextSize(lane.c_str()).x);
  l.x0 = l.origin.x + label_w + 14 * l.s;
  l.x1 = l.origin.x + l.size.x - 8 * l.s;
  // The idle gaps of the filled timelines, per block and lane: hatched, listed in the legend when any shows.
  const double min_gap = kMinBubblePixels * (view.view_end - view.view_start) / std::max(1.0f, l.x1 - l.x0);
  for (const Timeline* t : timelines) l.lane_orders.push_back(spans_by_lane(*t));
  l.gaps.resize(l.blocks);
  bool any_gap = false;
  int total_lanes = 0;
  for (int b = 0; b < l.blocks; ++b) {
    const Timeline& t = *timelines[b];
    total_lanes += static_cast<int>(t.lanes.size());
    const double end = timeline_end(t);
    for (int lane = 0; lane < static_cast<int>(t.lanes.size()); ++lane)
      for (const IdleGap& g : lane_idle_gaps(t.spans, l.lane_orders[b][lane], lane, end, min_gap))
        l.gaps[b].push_back(g);
    any_gap = any_gap || !l.gaps[b].empty();
  }
  l.legend = legend_entries(timelines, overlay, any_gap, marks);
  l.full_legend_h = legend_rows(l.legend, l.size.x - 12 * l.s, l.s) * (l.line_h + 6 * l.s);
  fit_lanes(l, total_lanes);
  return l;
}

// Ctrl + wheel zooms around the mouse (the wheel alone scrolls the view, so reading down a page never zooms a
// timeline by accident), dragging pans, double-click fits. Until the first zoom, hovering says so.
void handle_zoom_and_pan(TimelineViewState& view, const TimelineLayout& l, bool hovered, bool active) {
  static bool zoomed_once = false;
  const ImGuiIO& io = ImGui::GetIO();
  const double span_t = view.view_end - view.view_start;
  if (hovered && io.KeyCtrl && io.MouseWheel != 0) {
    const double at = view.view_start + (io.MousePos.x - l.x0) / (l.x1 - l.x0) * span_t;
    const double factor = std::pow(0.8, io.MouseWheel);
    const double new_span = std::clamp(span_t * factor, view.data_end * 1e-5, view.data_end * 4);
    view.view_start = at - (at - view.view_start) * new_span / span_t;
    view.view_end = view.view_start + new_span;
    zoomed_once = true;
  }
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    const double shift = -io.MouseDelta.x / (l.x1 - l.x0) * span_t;
    view.view_start += shift;
    view.view_end += shift;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) view.fitted = false;
  if (hovered && !zoomed_once) {
    const char* hint = "Ctrl + wheel zooms, drag pans, double-click fits";
    const ImVec2 ts = ImGui::CalcTextSize(hint);
    const ImVec2 at{l.origin.x + l.size.x - ts.x - 10 * l.s, l.origin.y + 4 * l.s};
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddRectFilled({at.x - 4 * l.s, at.y}, {at.x + ts.x + 4 * l.s, at.y + ts.y}, panel_color(), 3 * l.s);
    draw->AddText(at, highlight_color(), hint);
  }
}

struct TimeMap {
  double view_start, view_end;
  float x0, x1;
  float x(double t) const { return x0 + static_cast<float>((t - view_start) / (view_end - view_start) * (x1 - x0)); }
};

// One span's block: its fill, the bands of direction and chunk, its label where it fits, the hover outline.
struct SpanDraw {
  ImDrawList* draw;
  const TimelineLayout& l;
  bool outline;
};
void draw_span_block(const SpanDraw& d, const DrawnBlock& block, const TimelineSpan& span, float ly, ImVec2 a,
                     ImVec2 c) {
  const float s = d.l.s;
  if (d.outline) {
    d.draw->AddRect(a, c, theory_color(), 0, 0, 1.5f * s);
    return;
  }
  d.draw->AddRectFilled(a, c, to_imgui(span_color(span.kind, span.micro_batch)));
  if (span.direction == 1)  // the reverse direction carries a dark band along its foot
    d.draw->AddRectFilled({a.x, c.y - (c.y - a.y) * 0.22f}, c, IM_COL32(0, 0, 0, 110));
  if (is_later_chunk(span)) d.draw->AddRectFilled(a, {c.x, a.y + (c.y - a.y) * 0.22f}, chunk_band_color(span.chunk));
  if (block.x1 - block.x0 > 3) d.draw->AddLine({c.x, a.y}, {c.x, c.y}, panel_color(), 1.0f);
  // The label at full size where it fits, at 3/4 size where only that fits, else left out.
  for (const float font_scale : {1.0f, 0.75f}) {
    const float font_px = ImGui::GetFontSize() * font_scale;
    const ImVec2 size = ImGui::GetFont()->CalcTextSizeA(font_px, FLT_MAX, 0.0f, span.label.c_str(), nullptr, nullptr);
    if (block.x1 - block.x0 > size.x + 4 * s && d.l.lane_h >= size.y) {
      d.draw->AddText(ImGui::GetFont(), font_px, {(a.x + c.x - size.x) / 2, ly + (d.l.lane_h - size.y) / 2},
                      IM_COL32_WHITE, span.label.c_str());
      return;
    }
  }
}

// What one block of lanes drew that the caller needs: the hovered span and the colour a test should find.
struct BlockResult {
  TimelineHover hover;
  ImU32 widest_color = 0;
  float widest_px = 0;
};

void draw_lane_spans(const SpanDraw& d, const Timeline& t, int index, const std::vector<int>& order, int lane, float ly,
                     const TimeMap& map, bool hovered, const TimelineMarks* marks, bool track_widest,
                     BlockResult& out) {
  const ImGuiIO& io = ImGui::GetIO();
  const float s = d.l.s, inset = d.outline ? 1.5f * s : 0;
  d.draw->PushClipRect({d.l.x0, ly}, {d.l.x1, ly + d.l.lane_h}, true);
  for (const DrawnBlock& block :
       layout_lane(t.spans, order, map.view_start, map.view_end, d.l.x0, d.l.x1, kFoldPixels)) {
    const ImVec2 a{block.x0, ly + inset}, c{block.x1, ly + d.l.lane_h - inset};
    if (block.folded > 1) {
      d.draw->AddRectFilled(a, c, with_alpha(muted_text_color(), d.outline ? 0.3f : 0.55f));
      continue;
    }
    const TimelineSpan& span = t.spans[block.span];
    draw_span_block(d, block, span, ly, a, c);
    if (track_widest && block.x1 - block.x0 > out.widest_px && span.direction == 0 && !dimmed(marks, lane, span)) {
      out.widest_px = block.x1 - block.x0;
      out.widest_color = to_imgui(span_color(span.kind, span.micro_batch));
    }
    if (hovered && io.MousePos.y >= ly && io.MousePos.y < ly + d.l.lane_h && io.MousePos.x >= block.x0 &&
        io.MousePos.x < std::max(block.x1, block.x0 + 2)) {
      out.hover = {index, block.span};
      d.draw->AddRect(a, c, highlight_color(), 0, 0, 2 * s);
    }
  }
  d.draw->PopClipRect();
}

// The marks of one block's timeline: the phase bands (the rest dimmed), then the messages on top.
void draw_marks(ImDrawList* draw, const TimelineLayout& l, const TimelineMarks& m, int lanes, float top,
                const TimeMap& map) {
  const float s = l.s;
  auto lane_y = [&](int lane) { return top + lane * (l.lane_h + l.lane_gap); };
  draw->PushClipRect({l.x0, top}, {l.x1, lane_y(lanes)}, true);
  const ImU32 dim = with_alpha(panel_color(), 0.72f);
  for (const TimelineBand& band : m.bands) {
    if (band.lane < 0 || band.lane >= lanes) continue;
    const float ly = lane_y(band.lane);
    if (band.end <= band.start) {
      draw->AddRectFilled({l.x0, ly}, {l.x1, ly + l.lane_h}, dim);
      continue;
    }
    const float a = map.x(band.start), c = map.x(band.end);
    draw->AddRectFilled({l.x0, ly}, {a, ly + l.lane_h}, dim);
    draw->AddRectFilled({c, ly}, {l.x1, ly + l.lane_h}, dim);
    draw->AddRect({a, ly - 1 * s}, {c, ly + l.lane_h + 1 * s}, highlight_color(), 0, 0, 2.5f * s);
  }
  for (const TimelineArrow& arrow : m.arrows) {
    const float a = map.x(arrow.sent), c = map.x(arrow.arrives);
    if (std::max(a, c) < l.x0 || std::min(a, c) > l.x1) continue;
    const bool down = arrow.to_lane > arrow.from_lane;
    const float from_y = lane_y(arrow.from_lane) + l.lane_h * 0.5f;
    const float to_y = down ? lane_y(arrow.to_lane) + 2 * s : lane_y(arrow.to_lane) + l.lane_h - 2 * s;
    draw_arrow(draw, {a, from_y}, {c, to_y}, text_color(), s);
  }
  draw->PopClipRect();
}

// A block's lane labels, lane backgrounds and hatched idle gaps.
void draw_lanes_and_gaps(ImDrawList* draw, const TimelineLayout& l, const Timeline& first,
                         const std::vector<IdleGap>& gaps, float top, const TimeMap& map) {
  const float s = l.s, lane_step = l.lane_h + l.lane_gap;
  for (int lane = 0; lane < static_cast<int>(first.lanes.size()); ++lane) {
    const float ly = top + lane * lane_step;
    const float label_px = l.lane_h >= l.line_h ? ImGui::GetFontSize() : 0.75f * ImGui::GetFontSize();
    if (l.lane_h >= 0.75f * l.line_h)
      draw->AddText(ImGui::GetFont(), label_px,
                    {l.origin.x + 6 * s, ly + (l.lane_h - l.line_h * label_px / ImGui::GetFontSize()) / 2},
                    muted_text_color(), first.lanes[lane].c_str());
    draw->AddRectFilled({l.x0, ly}, {l.x1, ly + l.lane_h}, with_alpha(muted_text_color(), 0.10f));
  }
  const ImVec2 bubble_text = ImGui::CalcTextSize("bubble");
  draw->PushClipRect({l.x0, top}, {l.x1, top + first.lanes.size() * lane_step}, true);
  for (const IdleGap& g : gaps) {
    const float ly = top + g.lane * lane_step, a = map.x(g.start), c = map.x(g.end);
    if (c < l.x0 || a > l.x1) continue;
    draw_idle_area(draw, {a, ly}, {c, ly + l.lane_h}, 7 * s);
    if (c - a > bubble_text.x + 8 * s && l.lane_h >= bubble_text.y)
      draw->AddText({(a + c - bubble_text.x) / 2, ly + (l.lane_h - bubble_text.y) / 2}, muted_text_color(), "bubble");
  }
  draw->PopClipRect();
}

// A fold's length in words: microseconds grow into milliseconds and seconds (3 significant digits).
std::string fold_length_text(double length, const std::string& unit) {
  if (unit != "us") return fmt::format("{:.3g} {}", length, unit);
  if (length < 1e3) return fmt::format("{:.3g} us", length);
  return length < 1e6 ? fmt::format("{:.3g} ms", length / 1e3) : fmt::format("{:.3g} s", length / 1e6);
}

// What the folds hold, said once at the right of the first header: "+24.3 ms, +13 ms folded out".
std::string folds_text(const std::vector<TimeFold>& folds, const std::string& unit) {
  std::string lengths;
  for (const TimeFold& f : folds) lengths += (lengths.empty() ? "+" : ", +") + fold_length_text(f.length(), unit);
  return lengths.empty() ? lengths : lengths + " folded out";
}

// Each fold of the time axis: a zigzag across the lanes where the time was taken out.
void draw_folds(ImDrawList* draw, const TimelineLayout& l, const std::vector<TimeFold>& folds, float top, float bottom,
                const TimeMap& map) {
  const float s = l.s;
  for (const TimeFold& f : folds) {
    const float x = map.x(folded_time(folds, f.start));
    if (x < l.x0 || x > l.x1) continue;
    for (float y = top; y < bottom; y += 8 * s)
      draw->AddLine({x - 3 * s, y}, {x + 3 * s, std::min(y + 8 * s, bottom)}, text_color(), 1.5f * s);
  }
}

// Time axis with round ticks in the timelines' unit; on a folded axis a tick says the time of the run it stands for.
void draw_time_axis(ImDrawList* draw, const TimelineLayout& l, float bottom, const TimeMap& map,
                    const std::string& unit, const std::vector<TimeFold>& folds) {
  const float s = l.s;
  const double raw = (map.view_end - map.view_start) / std::max(2.0, (l.x1 - l.x0) / (90.0 * s));
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  const std::string unit_text = unit == "units" ? "time (cost units)" : "time (" + unit + ")";
  const float unit_w = ImGui::CalcTextSize(unit_text.c_str()).x;
  for (double t = std::ceil(map.view_start / step) * step; t <= map.view_end; t += step) {
    const float x = map.x(t);
    draw->AddLine({x, l.origin.y + l.header_h}, {x, bottom}, grid_color());
    double run_time = t;  // the folded axis's t back to the run's time
    for (const TimeFold& f : folds)
      if (run_time > f.start) run_time += f.length();
    const std::string label = step >= 1 ? fmt::format("{:.0f}", run_time) : fmt::format("{:g}", run_time);
    const float half = ImGui::CalcTextSize(label.c_str()).x / 2;
    if (x + half < l.x1 - unit_w - 6 * s)  // keep clear of the unit at the end
      draw->AddText({x - half, bottom + 2 * s}, muted_text_color(), label.c_str());
  }
  draw->AddText({l.x1 - unit_w, bottom + 2 * s}, muted_text_color(), unit_text.c_str());
}

std::string block_header(const std::vector<const Timeline*>& timelines, int b, bool overlay, float width) {
  const Timeline& first = *timelines[b];
  const std::string header = overlay ? fmt::format("{} (filled) and {} (outlined)", first.name,
                                                   timelines.size() > 1 ? timelines[1]->name : std::string("-"))
                                     : fmt::format("{}  [{}]", first.name, first.mode);
  return fit_header(header, overlay ? first.name + " (filled; the outline is named in the legend)" : header, width);
}

}  // namespace

TimelineHover draw_timelines(const char* id, const std::vector<const Timeline*>& given, bool overlay,
                             TimelineViewState& view, ImVec2 size, const std::vector<const TimelineMarks*>& marks) {
  if (given.empty()) return {};
  // A measured op far longer than its kind's others is drawn short, the rest of its time folded out of the axis.
  const std::vector<TimeFold> folds = outlier_folds(given);
  std::vector<Timeline> folded;
  for (const Timeline* t : given) folded.push_back(folds.empty() ? Timeline{} : folded_timeline(*t, folds));
  std::vector<const Timeline*> timelines = given;
  if (!folds.empty())
    for (std::size_t i = 0; i < given.size(); ++i) timelines[i] = &folded[i];
  ImGui::PushID(id);
  double data_end = 0;
  for (const Timeline* t : timelines) data_end = std::max(data_end, timeline_end(*t));
  fit_view(view, data_end > 0 ? data_end : 1);
  const TimelineLayout l = layout_timelines(timelines, overlay, size, view, marks);
  ImGui::InvisibleButton("timeline", l.size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(l.origin, {l.origin.x + l.size.x, l.origin.y + l.size.y}, panel_color(), 4 * l.s);
  handle_zoom_and_pan(view, l, hovered, ImGui::IsItemActive());
  const TimeMap map{view.view_start, view.view_end, l.x0, l.x1};
  // The widest block of the top lane gives the colour a screenshot must show (tests look for it).
  BlockResult result;
  float y = l.origin.y + 4 * l.s;
  const float lanes_top = y + l.header_h;
  const std::string folds_said = folds_text(folds, timelines.front()->time_unit);
  const float folded_w = folds_said.empty() ? 0 : ImGui::CalcTextSize(folds_said.c_str()).x + 12 * l.s;
  for (int b = 0; b < l.blocks; ++b) {
    const Timeline& first = *timelines[b];
    const float header_w = l.size.x - 12 * l.s - (b == 0 ? folded_w : 0);
    const std::string header = block_header(timelines, b, overlay, header_w);
    draw->AddText({l.origin.x + 6 * l.s, y}, text_color(), header.c_str());
    if (b == 0 && !folds_said.empty())
      draw->AddText({l.origin.x + l.size.x - 6 * l.s - (folded_w - 12 * l.s), y}, text_color(), folds_said.c_str());
    y += l.header_h;
    draw_lanes_and_gaps(draw, l, first, l.gaps[b], y, map);
    const TimelineMarks* m = b < static_cast<int>(marks.size()) ? marks[b] : nullptr;
    const int layers = overlay ? static_cast<int>(timelines.size()) : 1;
    for (int lane = 0; lane < static_cast<int>(first.lanes.size()); ++lane)
      for (int layer = 0; layer < layers; ++layer) {
        const int index = overlay ? layer : b;
        if (lane >= static_cast<int>(timelines[index]->lanes.size())) continue;
        const SpanDraw d{draw, l, overlay && layer > 0};
        draw_lane_spans(d, *timelines[index], index, l.lane_orders[index][lane], lane,
                        y + lane * (l.lane_h + l.lane_gap), map, hovered, m, !d.outline && b == 0 && lane == 0, result);
      }
    if (m != nullptr) draw_marks(draw, l, *m, static_cast<int>(first.lanes.size()), y, map);
    y += first.lanes.size() * (l.lane_h + l.lane_gap);
  }
  draw_folds(draw, l, folds, lanes_top, y, map);
  draw_time_axis(draw, l, y, map, timelines.front()->time_unit, folds);
  note_plot_area(timelines.front()->name, {l.x0, l.origin.y}, {l.x1, l.origin.y + l.size.y},
                 result.widest_px >= 4 * l.s ? std::vector<ImU32>{result.widest_color} : std::vector<ImU32>{}, l.origin,
                 {l.origin.x + l.size.x, l.origin.y + l.size.y});
  if (l.legend_inside) {
    draw_legend(draw, l.legend, {l.origin.x + 6 * l.s, y + l.axis_h}, l.size.x - 12 * l.s, l.s);
  } else {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    draw_legend(draw, l.legend, {at.x + 6 * l.s, at.y}, l.size.x - 12 * l.s, l.s);
    ImGui::Dummy({l.size.x, l.full_legend_h});
  }
  ImGui::PopID();
  return result.hover;
}

}  // namespace dlsys::gui
