#include "app/gui/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "app/export/span_colors.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"

namespace dlsys::gui {

namespace {

constexpr float kFoldPixels = 3.0f;

ImU32 to_imgui(Rgb c, float alpha = 1.0f) { return IM_COL32(c.r, c.g, c.b, static_cast<int>(alpha * 255)); }

// Span indices per lane, ordered by start time (the generators emit them in order per device, but a measured
// timeline from several threads need not be).
std::vector<std::vector<int>> order_by_lane(const Timeline& t) {
  std::vector<std::vector<int>> lanes(t.lanes.size());
  for (int i = 0; i < static_cast<int>(t.spans.size()); ++i) {
    const int lane = t.spans[i].lane;
    if (lane >= 0 && lane < static_cast<int>(lanes.size())) lanes[lane].push_back(i);
  }
  for (auto& lane : lanes)
    std::sort(lane.begin(), lane.end(), [&](int a, int b) { return t.spans[a].start < t.spans[b].start; });
  return lanes;
}

double makespan(const Timeline& t) {
  double end = 0;
  for (const auto& s : t.spans) end = std::max(end, s.end);
  return end;
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

TimelineHover draw_timelines(const char* id, const std::vector<const Timeline*>& timelines, bool overlay,
                             TimelineViewState& view, ImVec2 size) {
  TimelineHover hover;
  if (timelines.empty()) return hover;
  ImGui::PushID(id);
  const float s = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (size.x <= 0) size.x = avail.x;
  if (size.y <= 0) size.y = avail.y;
  const float line_h = ImGui::GetTextLineHeight();
  const float axis_h = line_h + 8 * s;
  const int blocks = overlay ? 1 : static_cast<int>(timelines.size());
  int total_lanes = 0;
  for (int b = 0; b < blocks; ++b) total_lanes += static_cast<int>(timelines[b]->lanes.size());
  const float header_h = line_h + 6 * s;
  const float lane_gap = 3 * s;
  // Every lane keeps room for its label: with many lanes or large text the view scrolls rather than overprint.
  size.y = std::max(size.y, axis_h + blocks * header_h + total_lanes * (line_h + lane_gap) + 8 * s);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("timeline", size);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  ImDrawList* draw = ImGui::GetWindowDrawList();

  double data_end = 0;
  for (const Timeline* t : timelines) data_end = std::max(data_end, makespan(*t));
  if (data_end <= 0) data_end = 1;
  if (!view.fitted || view.data_end != data_end) {
    view.view_start = 0;
    view.view_end = data_end * 1.02;
    view.fitted = true;
    view.data_end = data_end;
  }

  // Geometry: a label column, then the time area; an axis row at the bottom.
  float label_w = 0;
  for (const Timeline* t : timelines)
    for (const auto& lane : t->lanes) label_w = std::max(label_w, ImGui::CalcTextSize(lane.c_str()).x);
  const float x0 = origin.x + label_w + 14 * s, x1 = origin.x + size.x - 8 * s;
  const float lane_h =
      std::clamp((size.y - axis_h - blocks * header_h) / std::max(1, total_lanes) - lane_gap, line_h, 60 * s);

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

  draw->AddRectFilled(origin, {origin.x + size.x, origin.y + size.y}, panel_color(), 4 * s);
  // The colour of the widest block drawn: what a screenshot of this timeline must show (tests look for it).
  ImU32 widest_color = 0;
  float widest_px = 0;
  std::vector<std::vector<std::vector<int>>> lane_orders;
  for (const Timeline* t : timelines) lane_orders.push_back(order_by_lane(*t));
  float y = origin.y + 4 * s;
  for (int b = 0; b < blocks; ++b) {
    const Timeline& first = *timelines[b];
    const std::string header = overlay ? fmt::format("{} (filled) and {} (outlined)", first.name,
                                                     timelines.size() > 1 ? timelines[1]->name : std::string("-"))
                                       : fmt::format("{}  [{}]", first.name, first.mode);
    draw->AddText({origin.x + 6 * s, y}, text_color(), header.c_str());
    y += header_h;
    const int layers = overlay ? static_cast<int>(timelines.size()) : 1;
    for (int lane = 0; lane < static_cast<int>(first.lanes.size()); ++lane) {
      const float ly = y + lane * (lane_h + lane_gap);
      draw->AddText({origin.x + 6 * s, ly + (lane_h - line_h) / 2}, muted_text_color(), first.lanes[lane].c_str());
      draw->AddRectFilled({x0, ly}, {x1, ly + lane_h}, with_alpha(muted_text_color(), 0.10f));
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
          if (!outline && block.x1 - block.x0 > widest_px && span.direction == 0) {
            widest_px = block.x1 - block.x0;
            widest_color = color;
          }
          if (!outline && span.direction == 1)  // the reverse direction carries a dark band along its foot
            draw->AddRectFilled({a.x, c.y - (c.y - a.y) * 0.22f}, c, IM_COL32(0, 0, 0, 110));
          if (!outline && block.x1 - block.x0 > 3) draw->AddLine({c.x, a.y}, {c.x, c.y}, panel_color(), 1.0f);
          const ImVec2 label_size = ImGui::CalcTextSize(span.label.c_str());
          if (!outline && block.x1 - block.x0 > label_size.x + 4 * s && lane_h > label_size.y)
            draw->AddText({(a.x + c.x - label_size.x) / 2, ly + (lane_h - label_size.y) / 2}, IM_COL32_WHITE,
                          span.label.c_str());
          if (hovered && io.MousePos.y >= ly && io.MousePos.y < ly + lane_h && io.MousePos.x >= block.x0 &&
              io.MousePos.x < std::max(block.x1, block.x0 + 2)) {
            hover = {index, block.span};
            draw->AddRect(a, c, highlight_color(), 0, 0, 2 * s);
          }
        }
        draw->PopClipRect();
      }
    }
    y += first.lanes.size() * (lane_h + lane_gap);
  }

  // Time axis with round ticks in the timelines' unit.
  const double raw = (view.view_end - view.view_start) / std::max(2.0, (x1 - x0) / (90.0 * s));
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  const std::string& unit = timelines.front()->time_unit;
  for (double t = std::ceil(view.view_start / step) * step; t <= view.view_end; t += step) {
    const float x = x0 + static_cast<float>((t - view.view_start) / (view.view_end - view.view_start) * (x1 - x0));
    draw->AddLine({x, origin.y + header_h}, {x, y}, grid_color());
    const std::string label = fmt::format("{:g}", t);
    const float half = ImGui::CalcTextSize(label.c_str()).x / 2;
    if (x + half < x1 - ImGui::CalcTextSize(unit.c_str()).x - 6 * s)  // keep clear of the unit at the end
      draw->AddText({x - half, y + 2 * s}, muted_text_color(), label.c_str());
  }
  draw->AddText({x1 - ImGui::CalcTextSize(unit.c_str()).x, y + 2 * s}, muted_text_color(), unit.c_str());
  note_plot_area(timelines.front()->name, {x0, origin.y}, {x1, origin.y + size.y},
                 widest_px >= 4 * s ? std::vector<ImU32>{widest_color} : std::vector<ImU32>{});
  ImGui::PopID();
  return hover;
}

}  // namespace dlsys::gui
