#include "app/gui/folded_band.h"

#include <set>

#include "app/gui/figure_size.h"
#include "app/gui/fit_text.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"

namespace dlsys::gui {

namespace {

std::set<std::string> g_open;  // the bands clicked open, by name and text: a band with a new text starts folded

std::string open_key(const Band& band) { return band.name + '\n' + band.whole; }
bool is_open(const Band& band) { return g_open.count(open_key(band)) > 0; }
void toggle_open(const Band& band) {
  if (g_open.erase(open_key(band)) == 0) g_open.insert(open_key(band));
}

// Where the text sits inside its band; text without a band behind it lines up with the text around it.
ImVec2 text_inset(const Band& band) {
  const float s = ui_scale();
  return band.fill != 0 ? ImVec2{8 * s, 4 * s} : ImVec2{0, 0};
}
float gap_under() { return 4 * ui_scale(); }
float line_height(const Band& band) { return ImGui::GetTextLineHeight() + 2 * text_inset(band).y; }
float whole_height(const Band& band, float width) {
  const ImVec2 inset = text_inset(band);
  return ImGui::CalcTextSize(band.whole.c_str(), nullptr, false, width - 2 * inset.x).y + 2 * inset.y;
}
// The space under a band: its gap, and the item spacing the next item keeps.
float space_under() { return gap_under() + ImGui::GetStyle().ItemSpacing.y; }

void draw_background(const Band& band, ImVec2 min, ImVec2 max) {
  if (band.fill == 0) return;
  const float s = ui_scale();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(min, max, band.fill, 3 * s);
  draw->AddRectFilled(min, {min.x + 3 * s, max.y}, band.edge);
}

void end_band_at(float x, float bottom) {
  ImGui::SetCursorScreenPos({x, bottom + gap_under()});
  ImGui::Dummy({0, 0});
}

void show_whole_text(const Band& band) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(band.whole.c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextDisabled("Click it to keep it open.");
  ImGui::EndTooltip();
}

// A folded band in the box at `min` of `size`: its line, cut to fit; where it was cut, the whole text on hover and a
// click opens it.
void draw_folded(const Band& band, ImVec2 min, ImVec2 size) {
  const ImVec2 max{min.x + size.x, min.y + size.y}, inset = text_inset(band);
  draw_background(band, min, max);
  const std::string shown = fitted_text(band.line, band.kept, size.x - 2 * inset.x);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->PushClipRect(min, max, true);
  draw->AddText({min.x + inset.x, min.y + inset.y}, text_color(), shown.c_str());
  draw->PopClipRect();
  ImGui::SetCursorScreenPos(min);
  const bool clicked = ImGui::InvisibleButton(band.name.c_str(), size);
  note_last_item(band.name);
  if (shown == band.whole) return;
  if (ImGui::IsItemHovered()) show_whole_text(band);
  if (clicked) toggle_open(band);
}

// Folded bands side by side on one line of `width`, each cut to its share.
void draw_folded_row(const std::vector<const Band*>& bands, float width) {
  if (bands.empty()) return;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float gap = gap_under(), h = line_height(*bands.front());
  const float share = (width - gap * float(bands.size() - 1)) / float(bands.size());
  for (std::size_t i = 0; i < bands.size(); ++i)
    draw_folded(*bands[i], {origin.x + float(i) * (share + gap), origin.y}, {share, h});
  end_band_at(origin.x, origin.y + h);
}

// A band's whole text, wrapped across `width`; a click folds it again where it was opened.
void draw_whole(const Band& band, float width) {
  const ImVec2 min = ImGui::GetCursorScreenPos(), inset = text_inset(band);
  const float h = whole_height(band, width);
  draw_background(band, min, {min.x + width, min.y + h});
  ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize(), {min.x + inset.x, min.y + inset.y},
                                      text_color(), band.whole.c_str(), nullptr, width - 2 * inset.x);
  ImGui::SetCursorScreenPos(min);
  const bool clicked = ImGui::InvisibleButton(band.name.c_str(), {width, h});
  note_last_item(band.name);
  if (clicked && is_open(band)) toggle_open(band);
  end_band_at(min.x, min.y + h);
}

}  // namespace

void draw_folded_bands(const std::vector<Band>& bands, float width) {
  std::vector<const Band*> folded;
  for (const Band& band : bands)
    if (!is_open(band)) folded.push_back(&band);
  ImGui::PushID("folded_bands");
  draw_folded_row(folded, width);
  for (const Band& band : bands)
    if (is_open(band)) draw_whole(band, width);
  ImGui::PopID();
}

float folded_bands_height(const std::vector<Band>& bands, float width) {
  float height = 0;
  bool any_folded = false;
  for (const Band& band : bands) {
    if (is_open(band))
      height += whole_height(band, width) + space_under();
    else if (!any_folded)
      height += line_height(band) + space_under(), any_folded = true;
  }
  return height;
}

bool band_folds(const Band& band) { return window_is_short() && !is_open(band); }

void draw_band(const Band& band, float width) {
  ImGui::PushID(band.whole.c_str());
  if (band_folds(band))
    draw_folded_row({&band}, width);
  else
    draw_whole(band, width);
  ImGui::PopID();
}

void fold_band_on_click(const Band& band) {
  if (window_is_short() && is_open(band) && ImGui::IsItemClicked()) toggle_open(band);
}

}  // namespace dlsys::gui
