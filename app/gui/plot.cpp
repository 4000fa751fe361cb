#include "app/gui/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "app/gui/figure_size.h"
#include "app/gui/fit_text.h"
#include "app/gui/plot_geometry.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "engine/units.h"

namespace dlsys::gui {

namespace {

constexpr float kPlotMinHeightLines = 10;

struct Range {
  double lo = INFINITY;
  double hi = -INFINITY;
  void add(double v, bool log) {
    if (!std::isfinite(v) || (log && v <= 0)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

// Maps data values on one axis to pixels.
struct AxisMap {
  double lo, hi;
  bool log;
  float p0, p1;  // pixel positions of lo and hi
  double t(double v) const {
    return log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
  }
  float px(double v) const { return p0 + static_cast<float>(t(v)) * (p1 - p0); }
};

Range fit_range(const PlotAxis& axis, Range data) {
  if (data.empty()) data = {axis.log ? 1.0 : 0.0, axis.log ? 10.0 : 1.0};
  if (data.lo == data.hi) {
    data.lo = axis.log ? data.lo / 2 : data.lo - 1;
    data.hi = axis.log ? data.hi * 2 : data.hi + 1;
  }
  if (axis.log) {
    const double pad = std::pow(data.hi / data.lo, 0.04);
    data.lo /= pad;
    data.hi *= pad;
  } else {
    const double pad = 0.05 * (data.hi - data.lo);
    data.lo = data.lo >= 0 && data.lo - pad < 0 ? 0 : data.lo - pad;
    data.hi += pad;
  }
  if (std::isfinite(axis.min)) data.lo = axis.min;
  if (std::isfinite(axis.max)) data.hi = axis.max;
  return data;
}

std::string tick_label(double v) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e9) return format_number(v / 1e9, 3) + "G";
  if (a >= 1e6) return format_number(v / 1e6, 3) + "M";
  if (a >= 1e4) return format_number(v / 1e3, 3) + "k";
  if (a >= 0.01) return format_number(v, 3);
  return fmt::format("{:.2g}", v);
}

// Round steps of 1, 2 or 5 times a power of ten, about `max_ticks` of them across [lo, hi].
std::vector<double> linear_ticks(double lo, double hi, int max_ticks) {
  std::vector<double> out;
  const double raw = (hi - lo) / max_ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3 ? 2 * mag : raw / mag < 7 ? 5 * mag : 10 * mag;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return out;
}

std::vector<double> ticks(double lo, double hi, bool log, float pixels) {
  const int max_ticks = std::max(2, static_cast<int>(pixels / (70.0f * ui_scale())));
  auto in_range = [&](const std::vector<double>& values) {
    std::vector<double> inside;
    for (double v : values)
      if (v >= lo * (1 - 1e-12) && v <= hi * (1 + 1e-12)) inside.push_back(v);
    return inside;
  };
  if (!log) return in_range(linear_ticks(lo, hi, max_ticks));
  // Every decade (labels that would touch are skipped when drawn); under about two decades add 2 and 5; within one
  // decade fall back to round steps.
  const int e0 = static_cast<int>(std::floor(std::log10(lo))), e1 = static_cast<int>(std::ceil(std::log10(hi)));
  std::vector<double> decades, dense;
  for (int e = e0; e <= e1; ++e) {
    decades.push_back(std::pow(10.0, e));
    for (double m : {1.0, 2.0, 5.0}) dense.push_back(m * std::pow(10.0, e));
  }
  if (auto inside = in_range(decades); inside.size() >= 3) return inside;
  if (auto inside = in_range(dense); inside.size() >= 2) return inside;
  return in_range(linear_ticks(lo, hi, max_ticks));
}

std::string axis_title(const PlotAxis& axis) {
  return axis.unit.empty() ? axis.label : fmt::format("{} ({})", axis.label, axis.unit);
}

void dashed_line(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float dash) {
  const float dx = b.x - a.x, dy = b.y - a.y, length = std::sqrt(dx * dx + dy * dy);
  if (length < 1e-3f) return;
  for (float s = 0; s < length; s += 2 * dash) {
    const float e = std::min(length, s + dash);
    draw->AddLine({a.x + dx * s / length, a.y + dy * s / length}, {a.x + dx * e / length, a.y + dy * e / length}, color,
                  thickness);
  }
}

}  // namespace

PlotLine line_from_series(const Series& series, ImU32 color) {
  PlotLine line;
  line.name = series.name;
  line.color = color;
  line.points = series.points;
  if (series.role == "theory") {
    line.style = SeriesStyle::Line;
  } else {
    line.style = SeriesStyle::LineAndMarkers;
    line.whiskers = true;
  }
  return line;
}

PlotLine run_series_line(const RunResult& run, const std::string& id, ImU32 color, SeriesStyle style, LineLook look) {
  PlotLine line;
  if (const Series* s = run.find_series(id)) {
    line = line_from_series(*s, color);
    line.style = style;
    line.whiskers = look.whiskers && style != SeriesStyle::Line && line.whiskers;
    line.dashed = look.dashed;
  }
  return line;
}

PlotLine categorical_line(const Series& series, int index) {
  PlotLine line = line_from_series(series, series_color(index));
  const int pass = index / kSeriesColorCount;
  line.marker = static_cast<MarkerShape>(pass % 4);
  line.dashed = pass % 2 == 1;
  return line;
}

PlotLine compared_run_line(PlotLine line) {
  // Half way to white, opaque: where both runs measured the same, B's dashes still show as a paler stripe on A's line.
  const auto paler = [&](int shift) {
    const ImU32 channel = (line.color >> shift) & 0xFF;
    return ((channel + 255) / 2) << shift;
  };
  line.color =
      paler(IM_COL32_R_SHIFT) | paler(IM_COL32_G_SHIFT) | paler(IM_COL32_B_SHIFT) | (line.color & IM_COL32_A_MASK);
  line.dashed = true;
  line.whiskers = false;  // the first run's whiskers stay readable under it
  return line;
}

namespace {

void draw_marker(ImDrawList* draw, ImVec2 c, float r, MarkerShape shape, ImU32 color) {
  switch (shape) {
    case MarkerShape::Circle:
      draw->AddCircleFilled(c, r, color);
      break;
    case MarkerShape::Square:
      draw->AddRectFilled({c.x - 0.9f * r, c.y - 0.9f * r}, {c.x + 0.9f * r, c.y + 0.9f * r}, color);
      break;
    case MarkerShape::Triangle:
      draw->AddTriangleFilled({c.x, c.y - 1.2f * r}, {c.x + 1.1f * r, c.y + 0.8f * r}, {c.x - 1.1f * r, c.y + 0.8f * r},
                              color);
      break;
    case MarkerShape::Diamond:
      draw->AddQuadFilled({c.x, c.y - 1.3f * r}, {c.x + 1.1f * r, c.y}, {c.x, c.y + 1.3f * r}, {c.x - 1.1f * r, c.y},
                          color);
      break;
  }
}

// The factor above a horizontal guide that a log y axis keeps in view, so the guide's label fits above its line.
constexpr double kGuideLabelRoomLog = 3.0;

// The data's extent on both axes (whiskers and guides included), padded and clamped as each axis asks.
std::pair<Range, Range> data_ranges(const PlotSpec& spec) {
  Range xr, yr;
  for (const auto& line : spec.lines)
    for (const auto& p : line.points) {
      if (!std::isfinite(p.y) || (spec.y.log && p.y <= 0)) continue;
      xr.add(p.x, spec.x.log);
      yr.add(p.y, spec.y.log);
      if (line.whiskers) {
        yr.add(p.y_min, spec.y.log);
        yr.add(p.y_max, spec.y.log);
      }
    }
  for (const auto& g : spec.guides) {
    (g.vertical ? xr : yr).add(g.value, g.vertical ? spec.x.log : spec.y.log);
    // On a log axis, room above a horizontal guide for its label: half a decade.
    if (!g.vertical && spec.y.log && g.value > 0) yr.add(g.value * kGuideLabelRoomLog, true);
  }
  return {fit_range(spec.x, xr), fit_range(spec.y, yr)};
}

// Where the data goes on screen: the plot area's corners and the two axis maps.
struct PlotArea {
  ImVec2 p0, p1;
  AxisMap mx, my;
};

// A log axis over a handful of sweep sizes (64, 128, ...) is read best with ticks at those sizes.
std::vector<double> x_ticks_of(const PlotSpec& spec, const PlotArea& area) {
  std::vector<double> out = ticks(area.mx.lo, area.mx.hi, spec.x.log, area.p1.x - area.p0.x);
  if (!spec.x.log) return out;
  std::vector<double> data_x;
  for (const auto& line : spec.lines)
    for (const auto& p : line.points)
      if (p.x > 0 && std::find(data_x.begin(), data_x.end(), p.x) == data_x.end()) data_x.push_back(p.x);
  return data_x.size() >= 2 && data_x.size() <= 12 ? data_x : out;
}

// Grid lines at every tick; a tick's label is skipped when it would touch the last one drawn (large text, many
// decades), so labels never overlap.
void draw_grid_and_axes(ImDrawList* draw, const PlotSpec& spec, const PlotArea& a) {
  const float s = ui_scale(), line_h = ImGui::GetTextLineHeight(), gap = 8 * s;
  float last_right = -INFINITY;
  for (double v : x_ticks_of(spec, a)) {
    const float x = a.mx.px(v);
    draw->AddLine({x, a.p0.y}, {x, a.p1.y}, grid_color());
    const std::string label = tick_label(v);
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    if (x - w / 2 < last_right + gap) continue;
    draw->AddText({x - w / 2, a.p1.y + 4 * s}, muted_text_color(), label.c_str());
    last_right = x + w / 2;
  }
  float last_top = INFINITY;  // y grows downwards: labels are drawn from the bottom up
  for (double v : ticks(a.my.lo, a.my.hi, spec.y.log, a.p1.y - a.p0.y)) {
    const float y = a.my.px(v);
    draw->AddLine({a.p0.x, y}, {a.p1.x, y}, grid_color());
    if (y + line_h / 2 > last_top - gap / 2) continue;
    const std::string label = tick_label(v);
    draw->AddText({a.p0.x - ImGui::CalcTextSize(label.c_str()).x - 6 * s, y - line_h / 2}, muted_text_color(),
                  label.c_str());
    last_top = y - line_h / 2;
  }
  draw->AddRect(a.p0, a.p1, with_alpha(muted_text_color(), 0.6f));
  const std::string x_title = axis_title(spec.x) + (spec.x.log ? "  [log]" : "");
  draw->AddText({(a.p0.x + a.p1.x - ImGui::CalcTextSize(x_title.c_str()).x) / 2, a.p1.y + line_h + 8 * s},
                muted_text_color(), x_title.c_str());
}

// Whether a drawn line of the plot (a series drawn as a line, or a guide) passes through the box.
bool line_crosses_box(const PlotSpec& spec, const PlotArea& a, const ImVec4& box) {
  for (const PlotLine& line : spec.lines) {
    if (line.style == SeriesStyle::Markers) continue;
    for (std::size_t i = 1; i < line.points.size(); ++i) {
      const SeriesPoint &p = line.points[i - 1], &q = line.points[i];
      if (!std::isfinite(p.y) || !std::isfinite(q.y) || (spec.y.log && (p.y <= 0 || q.y <= 0)) ||
          (spec.x.log && (p.x <= 0 || q.x <= 0)))
        continue;
      if (segment_crosses_box({a.mx.px(p.x), a.my.px(p.y)}, {a.mx.px(q.x), a.my.px(q.y)}, box)) return true;
    }
  }
  for (const PlotGuide& g : spec.guides) {
    const float at = g.vertical ? a.mx.px(g.value) : a.my.px(g.value);
    if (g.vertical ? (box.x < at && at < box.z) : (box.y < at && at < box.w)) return true;
  }
  return false;
}

// Bands first, faint, so every line stays readable over them; a band's name sits at its foot where it fits.
void draw_bands(ImDrawList* draw, const PlotSpec& spec, const PlotArea& a) {
  const float s = ui_scale(), line_h = ImGui::GetTextLineHeight();
  for (const PlotBand& band : spec.bands) {
    const double lo = std::max(band.x0, a.mx.lo), hi = std::min(band.x1, a.mx.hi);
    if (!(lo < hi) || (spec.x.log && lo <= 0)) continue;
    const float x0 = a.mx.px(lo), x1 = a.mx.px(hi);
    const ImU32 color = band.color ? band.color : theory_color();
    draw->AddRectFilled({x0, a.p0.y}, {x1, a.p1.y}, with_alpha(color, 0.12f));
    const float w = ImGui::CalcTextSize(band.label.c_str()).x;
    if (w + 8 * s <= x1 - x0) draw->AddText({(x0 + x1 - w) / 2, a.p1.y - line_h - 4 * s}, color, band.label.c_str());
  }
}

// Returns the boxes of the labels it drew, for the point labels to keep off.
std::vector<ImVec4> draw_guides(ImDrawList* draw, const PlotSpec& spec, const PlotArea& a) {
  const float s = ui_scale(), line_h = ImGui::GetTextLineHeight();
  std::vector<ImVec4> labels;  // (x0, y0, x1, y1) of the guides' labels drawn so far
  // Inside the plot, off the labels drawn so far, and off every line the plot draws.
  const auto clear = [&](const ImVec4& r) {
    if (r.x < a.p0.x || r.z > a.p1.x || r.y < a.p0.y || r.w > a.p1.y) return false;
    for (const ImVec4& o : labels)
      if (r.x < o.z && o.x < r.z && r.y < o.w && o.y < r.w) return false;
    return !line_crosses_box(spec, a, r);
  };
  for (const auto& g : spec.guides) {
    const ImU32 color = g.color ? g.color : theory_color();
    const float w = ImGui::CalcTextSize(g.label.c_str()).x;
    ImVec4 box;
    if (g.vertical) {
      const float x = a.mx.px(g.value);
      dashed_line(draw, {x, a.p0.y}, {x, a.p1.y}, color, 1.5f * s, 5 * s);
      // Right of the line at the top, else left of it; a line lower while both are taken. Where no place is free: at
      // the top, right of the line unless that runs past the plot.
      box = {x + 4 * s, a.p0.y + 4 * s, x + 4 * s + w, a.p0.y + 4 * s + line_h};
      if (box.z > a.p1.x) box = {x - 4 * s - w, box.y, x - 4 * s, box.w};
      for (float top = a.p0.y + 4 * s; top + line_h <= a.p1.y; top += line_h + 2 * s) {
        const ImVec4 right{x + 4 * s, top, x + 4 * s + w, top + line_h},
            left{x - 4 * s - w, top, x - 4 * s, top + line_h};
        if (clear(right) || clear(left)) {
          box = clear(right) ? right : left;
          break;
        }
      }
    } else {
      const float y = a.my.px(g.value);
      dashed_line(draw, {a.p0.x, y}, {a.p1.x, y}, color, 1.5f * s, 5 * s);
      // At the right end above the line; below it when that is taken; else left of the labels already drawn.
      const float right = a.p1.x - 6 * s;
      box = {right - w, y - line_h - 2 * s, right, y - 2 * s};
      if (!clear(box)) box = {right - w, y + 2 * s, right, y + 2 * s + line_h};
      if (!clear(box)) {
        float left_of = right;
        for (const ImVec4& o : labels) left_of = std::min(left_of, o.x - 12 * s);
        const float top = y - line_h - 2 * s >= a.p0.y ? y - line_h - 2 * s : y + 2 * s;
        box = {left_of - w, top, left_of, top + line_h};
      }
    }
    labels.push_back(box);
    draw->AddText({box.x, box.y}, color, g.label.c_str());
  }
  return labels;
}

// The point nearest the mouse, for the read-out.
struct NearestPoint {
  const PlotLine* line = nullptr;
  const SeriesPoint* point = nullptr;
};

// Lines, whiskers and markers; returns the point under the mouse when the plot is hovered.
NearestPoint draw_lines(ImDrawList* draw, const PlotSpec& spec, const PlotArea& a, bool hovered) {
  const float s = ui_scale();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  float best_d2 = (14 * s) * (14 * s);
  NearestPoint best;
  auto visible = [&](const SeriesPoint& p) {
    return std::isfinite(p.x) && std::isfinite(p.y) && !(spec.x.log && p.x <= 0) && !(spec.y.log && p.y <= 0);
  };
  // Lines first, then whiskers and markers on top of every line; within each, the last line first, so the first
  // line, the one a plot is about, stays visible where lines coincide.
  for (auto it = spec.lines.rbegin(); it != spec.lines.rend(); ++it) {
    const PlotLine& line = *it;
    if (line.style == SeriesStyle::Markers) continue;
    std::vector<ImVec2> pts;
    for (const auto& p : line.points)
      if (visible(p)) pts.push_back({a.mx.px(p.x), a.my.px(p.y)});
    if (pts.size() < 2) continue;
    const float thick = (line.style == SeriesStyle::Line ? 2.5f : 1.8f) * s;
    if (line.dashed)
      for (std::size_t i = 1; i < pts.size(); ++i) dashed_line(draw, pts[i - 1], pts[i], line.color, thick, 7 * s);
    else
      draw->AddPolyline(pts.data(), static_cast<int>(pts.size()), line.color, 0, thick);
  }
  for (auto it = spec.lines.rbegin(); it != spec.lines.rend(); ++it) {
    const PlotLine& line = *it;
    for (const auto& p : line.points) {
      if (!visible(p)) continue;
      const ImVec2 c{a.mx.px(p.x), a.my.px(p.y)};
      if (line.whiskers && p.y_min > 0 && p.y_max >= p.y_min) {
        const float ya = a.my.px(std::max(p.y_min, a.my.lo)), yb = a.my.px(p.y_max);
        draw->AddLine({c.x, ya}, {c.x, yb}, line.color, 1.5f * s);
        draw->AddLine({c.x - 4 * s, ya}, {c.x + 4 * s, ya}, line.color, 1.5f * s);
        draw->AddLine({c.x - 4 * s, yb}, {c.x + 4 * s, yb}, line.color, 1.5f * s);
      }
      if (line.style != SeriesStyle::Line) draw_marker(draw, c, 4.0f * s, line.marker, line.color);
      const float d2 = (c.x - mouse.x) * (c.x - mouse.x) + (c.y - mouse.y) * (c.y - mouse.y);
      if (hovered && d2 < best_d2) {
        best_d2 = d2;
        best = {&line, &p};
      }
    }
  }
  return best;
}

// One legend entry: its line or marker swatch, then its name.
void draw_legend_entry(ImDrawList* draw, const PlotLine& line, ImVec2 at) {
  const float s = ui_scale(), line_h = ImGui::GetTextLineHeight(), swatch = 22 * s;
  const float y = at.y + line_h / 2;
  if (line.style != SeriesStyle::Markers) {
    if (line.dashed)
      dashed_line(draw, {at.x + 5 * s, y}, {at.x + swatch, y}, line.color, 2.5f * s, 4 * s);
    else
      draw->AddLine({at.x + 5 * s, y}, {at.x + swatch, y}, line.color, 2.5f * s);
  }
  if (line.style != SeriesStyle::Line)
    draw_marker(draw, {at.x + 5 * s + (swatch - 5 * s) / 2, y}, 4 * s, line.marker, line.color);
  draw->AddText({at.x + swatch + 8 * s, at.y}, text_color(), line.name.c_str());
}

float legend_entry_width(const PlotLine& line) {
  return 22 * ui_scale() + 8 * ui_scale() + ImGui::CalcTextSize(line.name.c_str()).x;
}

float legend_row_height() { return ImGui::GetTextLineHeight() + 4 * ui_scale(); }

// The legend: rows of entries side by side across `width`, above the plot area, in at most `max_rows` rows. Entries
// that do not fit are counted at the end of the last row ("+2 more") and named on hover, so a short plot (large text
// in a small window) keeps room for its data.
struct LegendLayout {
  std::vector<ImVec2> offsets;  // of the entries shown, from the strip's origin
  int rows = 0;
  int hidden = 0;
  ImVec2 more_at{0, 0};  // where "+k more" goes when entries are hidden
  std::string more;
};

LegendLayout layout_legend(const PlotSpec& spec, float width, int max_rows) {
  const float s = ui_scale(), gap = 18 * s, row_h = legend_row_height();
  for (std::size_t shown = spec.lines.size();; --shown) {
    LegendLayout out;
    out.hidden = static_cast<int>(spec.lines.size() - shown);
    out.more = out.hidden > 0 ? fmt::format("+{} more", out.hidden) : "";
    float x = 0;
    int row = 0;
    for (std::size_t i = 0; i < shown; ++i) {
      const float w = legend_entry_width(spec.lines[i]);
      if (x > 0 && x + w > width) {
        ++row;
        x = 0;
      }
      out.offsets.push_back({x, row * row_h});
      x += w + gap;
    }
    const float more_w = ImGui::CalcTextSize(out.more.c_str()).x;
    if (out.hidden > 0 && x > 0 && x + more_w > width) {
      ++row;
      x = 0;
    }
    out.more_at = {x, row * row_h};
    out.rows = spec.lines.empty() ? 0 : row + 1;
    if (out.rows <= max_rows || shown == 0) return out;
  }
}

void draw_legend_strip(ImDrawList* draw, const PlotSpec& spec, const LegendLayout& legend, ImVec2 origin,
                       bool hovered) {
  for (std::size_t i = 0; i < legend.offsets.size(); ++i)
    draw_legend_entry(draw, spec.lines[i], {origin.x + legend.offsets[i].x, origin.y + legend.offsets[i].y});
  if (legend.hidden == 0) return;
  const ImVec2 at{origin.x + legend.more_at.x, origin.y + legend.more_at.y};
  draw->AddText(at, muted_text_color(), legend.more.c_str());
  const ImVec2 size = ImGui::CalcTextSize(legend.more.c_str());
  if (hovered && ImGui::IsMouseHoveringRect(at, {at.x + size.x, at.y + size.y})) {
    std::string names;
    for (std::size_t i = legend.offsets.size(); i < spec.lines.size(); ++i)
      names += (names.empty() ? "" : "\n") + spec.lines[i].name;
    ImGui::SetTooltip("%s", names.c_str());
  }
}

// The names of lines that ask for it beside their points: right of the point, else left of, above or below it, or
// off a corner, where no label already drawn (`drawn`: the guides' to begin with) and no line of the plot runs through
// the name; left out where no place is free (the legend still names every series).
void draw_point_labels(ImDrawList* draw, const PlotSpec& spec, const PlotArea& a, std::vector<ImVec4> drawn) {
  const float s = ui_scale(), line_h = ImGui::GetTextLineHeight();
  auto clear = [&](const ImVec4& r) {
    if (r.x < a.p0.x || r.z > a.p1.x || r.y < a.p0.y || r.w > a.p1.y) return false;
    for (const ImVec4& o : drawn)
      if (r.x < o.z && o.x < r.z && r.y < o.w && o.y < r.w) return false;
    return !line_crosses_box(spec, a, r);
  };
  for (const PlotLine& line : spec.lines) {
    if (!line.label_points) continue;
    const float w = ImGui::CalcTextSize(line.name.c_str()).x;
    for (const SeriesPoint& p : line.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y) || (spec.x.log && p.x <= 0) || (spec.y.log && p.y <= 0)) continue;
      const ImVec2 c{a.mx.px(p.x), a.my.px(p.y)};
      const ImVec4 right{c.x + 7 * s, c.y - line_h / 2, c.x + 7 * s + w, c.y + line_h / 2};
      const ImVec4 left{c.x - 7 * s - w, right.y, c.x - 7 * s, right.w};
      const ImVec4 above{c.x - w / 2, c.y - 5 * s - line_h, c.x + w / 2, c.y - 5 * s};
      const ImVec4 below{above.x, c.y + 5 * s, above.z, c.y + 5 * s + line_h};
      // Off the diagonals too: a point on a rising or falling line (a roof's slope) has room beside it only there.
      const ImVec4 below_right{right.x, below.y, right.z, below.w}, above_left{left.x, above.y, left.z, above.w};
      const ImVec4 above_right{right.x, above.y, right.z, above.w}, below_left{left.x, below.y, left.z, below.w};
      const ImVec4* box = nullptr;
      for (const ImVec4* candidate :
           {&right, &left, &above, &below, &below_right, &above_left, &above_right, &below_left})
        if (clear(*candidate)) {
          box = candidate;
          break;
        }
      if (!box) continue;
      drawn.push_back(*box);
      draw->AddText({box->x, box->y}, line.color, line.name.c_str());
    }
  }
}

void draw_readout(ImDrawList* draw, const PlotSpec& spec, const PlotArea& a, const NearestPoint& nearest) {
  if (nearest.point == nullptr) return;
  const float s = ui_scale();
  const SeriesPoint& p = *nearest.point;
  draw->AddCircle({a.mx.px(p.x), a.my.px(p.y)}, 7 * s, highlight_color(), 0, 2 * s);
  std::string readout =
      fmt::format("{}\n{} = {} {}\n{} = {} {}", nearest.line->name, spec.x.label, format_number(p.x, 5), spec.x.unit,
                  spec.y.label, format_number(p.y, 5), spec.y.unit);
  if (nearest.line->whiskers)
    readout += fmt::format("\nmin {} .. max {}", format_number(p.y_min, 4), format_number(p.y_max, 4));
  ImGui::SetTooltip("%s", readout.c_str());
}

// The title's height, wrapped to the frame's width, with the heading font (pushed by the caller).
float wrapped_title_height(const PlotSpec& spec, ImVec2 size) {
  return ImGui::CalcTextSize(spec.title.c_str(), nullptr, false, std::max(size.x - 20 * ui_scale(), 1.0f)).y;
}

// How far below the frame's top edge the box for the legend and the data starts, under a title `title_height` tall
// (0: none): what draw_frame draws above it. Compact: the title and the y axis's title share one line.
float frame_top_height(float title_height, bool compact) {
  const float s = ui_scale();
  if (compact) return 6 * s + title_height + 6 * s;
  return 6 * s + (title_height > 0 ? title_height + 4 * s : 0) + ImGui::GetTextLineHeight() + 6 * s;
}

// What lies under the data: the tick labels and the x axis's title.
float below_data_height() { return 2 * ImGui::GetTextLineHeight() + 12 * ui_scale(); }

// The frame and titles: the plot's title on top, then the y axis's title, down to frame_top_height.
void draw_frame(ImDrawList* draw, const PlotSpec& spec, ImVec2 origin, ImVec2 size, bool compact) {
  const float s = ui_scale();
  draw->AddRectFilled(origin, {origin.x + size.x, origin.y + size.y}, panel_color(), 4 * s);
  float top = origin.y + 6 * s;
  if (compact) {
    // One line for both: the title, cut where it must be, and the y axis's title at its right end, cut to the room
    // the title leaves (the title keeps at least half the width), so the two never overlap.
    const float inner_w = size.x - 20 * s, gap = 12 * s;
    const std::string full_y_title = axis_title(spec.y);
    const float full_y_title_w = ImGui::CalcTextSize(full_y_title.c_str()).x;
    ImGui::PushFont(heading_font());
    const float title_room = std::max(inner_w - full_y_title_w - gap, 0.5f * inner_w);
    const std::string title = fitted_text(spec.title, "", title_room);
    const float title_w = ImGui::CalcTextSize(title.c_str()).x;
    draw->AddText({origin.x + 10 * s, top}, text_color(), title.c_str());
    const float line_h = ImGui::GetTextLineHeight();
    ImGui::PopFont();
    const std::string y_title = fitted_text(full_y_title, "", std::max(inner_w - title_w - gap, 0.0f));
    draw->AddText({origin.x + size.x - 10 * s - ImGui::CalcTextSize(y_title.c_str()).x,
                   top + line_h - ImGui::GetTextLineHeight()},
                  muted_text_color(), y_title.c_str());
    return;
  }
  if (!spec.title.empty()) {
    ImGui::PushFont(heading_font());
    // A title wider than the plot wraps onto a second line rather than run past the frame.
    const float wrap_w = std::max(size.x - 20 * s, 1.0f);
    draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), {origin.x + 10 * s, top}, text_color(), spec.title.c_str(),
                  nullptr, wrap_w);
    top += wrapped_title_height(spec, size) + 4 * s;
    ImGui::PopFont();
  }
  draw->AddText({origin.x + 10 * s, top}, muted_text_color(), axis_title(spec.y).c_str());
}

// Where a plot of `size` at `origin` puts its parts, as draw_plot draws them: the frame (its size after the least
// height and the view's cap), the box the tick labels and the legend leave for the data, the legend, and the data area.
struct PlotLayout {
  ImVec2 size;
  Range x, y;            // the data's ranges
  bool compact = false;  // a plot shorter than it should be (large text in a small window): titles on one line
  ImVec2 p0, p1;         // the box for the legend and the data
  LegendLayout legend;
  ImVec2 data_p0;     // the data area: data_p0 to p1
  bool room = false;  // false: no room for data, the frame alone
};

PlotLayout plot_layout(const PlotSpec& spec, ImVec2 origin, ImVec2 size) {
  const float s = ui_scale();
  PlotLayout g;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (size.x <= 0) size.x = avail.x;
  if (size.y <= 0) size.y = avail.y;
  // However little room is left, a plot stays readable: the view scrolls instead. It is never taller than the view,
  // so it can be seen whole.
  size.y = within_view_height(std::max(size.y, kPlotMinHeightLines * ImGui::GetTextLineHeightWithSpacing()));
  g.size = size;
  g.compact = size.y < kPlotMinHeightLines * ImGui::GetTextLineHeightWithSpacing();
  ImGui::PushFont(heading_font());
  const float title_h = g.compact            ? ImGui::GetTextLineHeight()
                        : spec.title.empty() ? 0.0f
                                             : wrapped_title_height(spec, size);
  ImGui::PopFont();
  const float top = origin.y + frame_top_height(title_h, g.compact);
  // Tick labels left and below the plot area, the x-axis title under them. The margin fits the widest label of both
  // a sparse and the full-height tick set, since the area's height (and so its ticks, "-0.5" among them) is only
  // known once the margin is.
  std::tie(g.x, g.y) = data_ranges(spec);
  float label_w = 0;
  for (float pixels : {200.0f, size.y})
    for (double v : ticks(g.y.lo, g.y.hi, spec.y.log, pixels))
      label_w = std::max(label_w, ImGui::CalcTextSize(tick_label(v).c_str()).x);
  g.p0 = {origin.x + label_w + 18 * s, top};
  g.p1 = {origin.x + size.x - 14 * s, origin.y + size.y - below_data_height()};
  if (g.p1.x - g.p0.x < 20 || g.p1.y - g.p0.y < 20) return g;
  // The legend goes above the plot area, where it can hide no data, in as many rows as leave the data three lines.
  const int legend_max_rows =
      std::max(1, static_cast<int>((g.p1.y - g.p0.y - 3 * ImGui::GetTextLineHeight()) / legend_row_height()));
  g.legend = layout_legend(spec, g.p1.x - g.p0.x, legend_max_rows);
  g.data_p0 = {g.p0.x, g.p0.y + g.legend.rows * legend_row_height() + (g.legend.rows > 0 ? 4 * s : 0)};
  g.room = g.p1.y - g.data_p0.y >= 20;
  return g;
}

}  // namespace

float plot_data_height(const PlotSpec& spec, ImVec2 size) {
  const PlotLayout g = plot_layout(spec, {0, 0}, size);
  return g.room ? g.p1.y - g.data_p0.y : 0.0f;
}

float plot_chrome_height(int legend_rows) {
  ImGui::PushFont(heading_font());
  const float title = ImGui::GetTextLineHeight();
  ImGui::PopFont();
  // As plot_layout lays them out: a one-line title and the y axis's title, the legend above the data, and under it
  // the tick labels and the x axis's title.
  const float legend = legend_rows > 0 ? float(legend_rows) * legend_row_height() + 4 * ui_scale() : 0.0f;
  return frame_top_height(title, false) + legend + below_data_height();
}

void draw_plot(const char* id, const PlotSpec& spec) {
  ImGui::PushID(id);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const PlotLayout g = plot_layout(spec, origin, spec.size);
  const ImVec2 size = g.size;
  ImGui::InvisibleButton("plot", size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw_frame(draw, spec, origin, size, g.compact);
  const ImVec2 p0 = g.p0, p1 = g.p1;
  // No room for data: the frame alone, reported with an empty data area so that a test sees the plot was squeezed.
  if (!g.room) {
    note_plot_area(spec.title, p0, p0, {}, origin, {origin.x + size.x, origin.y + size.y});
    ImGui::PopID();
    return;
  }
  const LegendLayout& legend = g.legend;
  PlotArea area{
      g.data_p0, p1, {g.x.lo, g.x.hi, spec.x.log, g.data_p0.x, p1.x}, {g.y.lo, g.y.hi, spec.y.log, p1.y, g.data_p0.y}};
  std::vector<ImU32> colors;
  for (const auto& line : spec.lines) colors.push_back(line.color);
  // The legend above the data is part of the plot's area.
  note_plot_area(spec.title, p0, area.p1, colors, origin, {origin.x + size.x, origin.y + size.y});
  draw_grid_and_axes(draw, spec, area);
  draw->PushClipRect(area.p0, area.p1, true);
  draw_bands(draw, spec, area);
  const std::vector<ImVec4> guide_labels = draw_guides(draw, spec, area);
  const NearestPoint nearest = draw_lines(draw, spec, area, hovered);
  draw_point_labels(draw, spec, area, guide_labels);
  draw->PopClipRect();
  draw_legend_strip(draw, spec, legend, p0, hovered);
  draw_readout(draw, spec, area, nearest);
  ImGui::PopID();
}

}  // namespace dlsys::gui
