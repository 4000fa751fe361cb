#pragma once
// Plane geometry the plots use to keep their labels off what they draw.
#include <imgui.h>

#include <algorithm>
#include <utility>

namespace dlsys::gui {

// Whether the segment from p to q passes through the box (x0, y0, x1, y1), edges included.
inline bool segment_crosses_box(ImVec2 p, ImVec2 q, const ImVec4& box) {
  const auto inside = [&](ImVec2 v) { return v.x >= box.x && v.x <= box.z && v.y >= box.y && v.y <= box.w; };
  if (inside(p) || inside(q)) return true;
  // Clip the segment's parameter range to the box's slab on each axis (Liang-Barsky).
  double t0 = 0, t1 = 1;
  const auto clip = [&](double from, double delta, double lo, double hi) {
    if (delta == 0) return from >= lo && from <= hi;
    double a = (lo - from) / delta, b = (hi - from) / delta;
    if (a > b) std::swap(a, b);
    t0 = std::max(t0, a);
    t1 = std::min(t1, b);
    return t0 <= t1;
  };
  return clip(p.x, q.x - p.x, box.x, box.z) && clip(p.y, q.y - p.y, box.y, box.w);
}

}  // namespace dlsys::gui
