// Stacked bars (see stacked_bars.h).
#include "app/views/stacked_bars.h"

#include <fmt/format.h>

#include <algorithm>

#include "app/gui/theme.h"
#include "app/views/view.h"
#include "engine/units.h"

namespace dlsys::gui {

// A bar's total in few characters (decimal units, as the paper's GB): the bars can stand close together.
std::string short_bytes(double bytes) {
  const struct {
    double scale;
    const char* unit;
  } units[] = {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}};
  for (const auto& u : units)
    if (bytes >= u.scale) return fmt::format("{} {}", format_number(bytes / u.scale, 4), u.unit);
  return fmt::format("{:g} B", bytes);
}

// Vertical stacked bars at the cursor, labelled with their totals, a dashed limit line (a GPU's memory) when
// `limit` > 0, and a key of the parts under them.
void draw_stacked_bars(const std::vector<StackPart>& kinds, const std::vector<StackedBar>& bars, float height,
                       double limit, const std::string& limit_label, float chart_width, const std::string& title,
                       TotalText total_text) {
  const float s = ui_scale(), line = ImGui::GetTextLineHeight();
  double top = limit;
  for (const StackedBar& b : bars) top = std::max(top, b.total());
  if (top <= 0) top = 1;
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float width = chart_width > 0 ? chart_width : std::max(ImGui::GetContentRegionAvail().x, 200 * s);
  const float title_h = title.empty() ? 0 : line * 1.3f;
  // The key: the parts some bar has, in rows as wide as the chart, under the bars' labels.
  FigureKey key;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    bool present = false;
    for (const StackedBar& b : bars) present = present || (k < b.values.size() && b.values[k] > 0);
    if (present) key.entries.push_back({with_alpha(kinds[k].color, 0.85f), kinds[k].name});
  }
  const float key_h = key.height(width);
  height = std::max(height, title_h + key_h + line * 4.5f);  // room for bars of a few lines at least, else scroll
  const float plot_top = o.y + title_h + line * 1.4f, plot_bottom = o.y + height - line * 1.4f - key_h;
  const float slot = width / float(std::max<std::size_t>(bars.size(), 1));
  const float bar_w = std::min(slot * 0.6f, 160 * s);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  if (!title.empty()) draw->AddText({o.x, o.y}, text_color(), title.c_str());
  draw->AddLine({o.x, plot_bottom}, {o.x + width, plot_bottom}, grid_color(), 1.0f * s);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const float cx = o.x + slot * (float(i) + 0.5f), x0 = cx - bar_w / 2, x1 = cx + bar_w / 2;
    float y = plot_bottom;
    for (std::size_t k = 0; k < bars[i].values.size() && k < kinds.size(); ++k) {
      const float h = float(bars[i].values[k] / top) * (plot_bottom - plot_top);
      if (h <= 0) continue;
      draw->AddRectFilled({x0, y - h}, {x1, y}, with_alpha(kinds[k].color, 0.85f));
      y -= h;
    }
    const std::string total = total_text(bars[i].total());
    const ImVec2 ts = ImGui::CalcTextSize(total.c_str());
    draw->AddText({cx - ts.x / 2, y - ts.y - 2 * s}, text_color(), total.c_str());
    const ImVec2 ls = ImGui::CalcTextSize(bars[i].label.c_str());
    draw->AddText({cx - ls.x / 2, plot_bottom + 4 * s}, text_color(), bars[i].label.c_str());
  }
  if (limit > 0) {
    const float y = plot_bottom - float(limit / top) * (plot_bottom - plot_top);
    for (float x = o.x; x < o.x + width; x += 12 * s)
      draw->AddLine({x, y}, {std::min(x + 7 * s, o.x + width), y}, warning_color(), 2 * s);
    // The label at the right end, on the panel colour so bars under it do not hide it.
    const ImVec2 ls = ImGui::CalcTextSize(limit_label.c_str());
    const ImVec2 at{o.x + width - ls.x - 6 * s, y - ls.y - 3 * s};
    draw->AddRectFilled({at.x - 4 * s, at.y - 1 * s}, {at.x + ls.x + 4 * s, at.y + ls.y + 1 * s}, panel_color(), 3 * s);
    draw->AddText(at, text_color(), limit_label.c_str());
  }
  key.draw(draw, o.x, o.x + width, plot_bottom + line * 1.3f);
  ImGui::Dummy({width, height});
}

}  // namespace dlsys::gui
