#include "app/views/bar_chart.h"

#include <algorithm>

#include "app/gui/theme.h"
#include "app/views/view.h"

namespace dlsys::gui {

void draw_bars(const std::vector<Bar>& bars, const BarChartStyle& style) {
  if (!style.title.empty()) {
    begin_figure();
    draw_heading(style.title);
  }
  const float s = ui_scale(), line = ImGui::GetTextLineHeight();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float title_h = style.title.empty() ? 0 : origin.y - ImGui::GetItemRectMin().y;
  const float avail = ImGui::GetContentRegionAvail().x;
  float label_width = 0, text_width = 0;
  double largest = style.full_scale;
  for (const Bar& b : bars) {
    label_width = std::max(label_width, ImGui::CalcTextSize(b.label.c_str()).x);
    text_width = std::max(text_width, ImGui::CalcTextSize(b.text.c_str()).x);
    largest = std::max(largest, b.value);
  }
  label_width = std::min(label_width, 0.35f * avail);
  const float x0 = origin.x + label_width + 12 * s;
  const float span = std::max(60 * s, avail - label_width - text_width - 36 * s);
  // Rows share the height asked for; a bar stays no thicker than a few lines, so a chart of two bars still reads
  // as bars, not as blocks.
  const float rows_h = style.height > 0 ? style.height - title_h - 4 * s : 0;
  const float least_row = line * (style.height > 0 ? 1.2f : style.row_lines);  // large text: rows close up
  const float row = std::max(least_row, bars.empty() ? 0 : rows_h / float(bars.size()));
  const float thickness = std::min(row - 6 * s, 2.5f * line);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const float y = origin.y + float(i) * row;
    draw->PushClipRect({origin.x, y}, {origin.x + label_width, y + row}, true);
    draw->AddText({origin.x, y + (row - line) / 2}, text_color(), b.label.c_str());
    draw->PopClipRect();
    if (ImGui::IsMouseHoveringRect({origin.x, y}, {origin.x + label_width, y + row}))
      ImGui::SetTooltip("%s", b.label.c_str());
    const float w = largest > 0 ? float(b.value / largest) * span : 0;
    draw->AddRectFilled({x0, y + (row - thickness) / 2}, {x0 + w, y + (row + thickness) / 2}, b.color, 3 * s);
    draw->AddText({x0 + w + 8 * s, y + (row - line) / 2}, text_color(), b.text.c_str());
  }
  ImGui::Dummy({avail, float(bars.size()) * row + 4 * s});
  if (!style.title.empty()) end_figure(style.title);
}

}  // namespace dlsys::gui
