#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <map>
#include <string>

#include "app/gui/figure_size.h"
#include "app/gui/folded_band.h"
#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "app/views/view.h"

namespace dlsys::gui {

namespace {
// Half the window for the frame of the main figure leaves its data area (the frame less title, legend and axes) at
// least 30 % of the window at 1x text. Where large text makes the frame's parts take more than a fifth of the window
// (presentation mode in a 1280x720 window), the frame grows by what they take beyond it, so the data keeps its 30 %
// (a legend of up to two rows counted).
constexpr float kMainFigureShare = 0.5f;
constexpr float kLeastDataShare = 0.3f;
constexpr int kLegendRowsKept = 2;
// Where less than this share of the window is left on screen for the main figure (large text, a small window), a
// figure squeezed into it would not read: it takes its full share instead, and the view scrolls to it.
constexpr float kLeastOnScreenShare = 0.35f;

float main_figure_share() {
  const float window_h = ImGui::GetIO().DisplaySize.y;
  return within_view_height(
      std::max(kMainFigureShare * window_h, kLeastDataShare * window_h + plot_chrome_height(kLegendRowsKept)));
}
}  // namespace

float main_figure_height() {
  const float avail = ImGui::GetContentRegionAvail().y;
  const float on_screen = kLeastOnScreenShare * ImGui::GetIO().DisplaySize.y;
  return avail >= on_screen ? std::min(avail, main_figure_share()) : main_figure_share();
}

void draw_plot_pair(const char* id_a, PlotSpec a, const char* id_b, PlotSpec b, float height) {
  const float full = ImGui::GetContentRegionAvail().x, half = (full - ImGui::GetStyle().ItemSpacing.x) / 2;
  const auto keeps_its_data = [&](const PlotSpec& spec) {
    return plot_data_height(spec, {half, height}) >= kSideBySideShare * plot_data_height(spec, {full, height});
  };
  const bool side_by_side = keeps_its_data(a) && keeps_its_data(b);
  a.size = b.size = {side_by_side ? half : full, height};
  draw_plot(id_a, a);
  if (side_by_side) ImGui::SameLine();
  draw_plot(id_b, b);
}

void draw_context_and_figure(const std::function<void()>& context, const std::function<void()>& figure) {
  const bool figure_first = window_is_short();
  if (!figure_first) context();
  figure();
  if (figure_first) context();
}

float figure_height_after_context(float least) {
  return window_is_short() ? main_figure_height() : std::max(ImGui::GetContentRegionAvail().y, least);
}

bool shared_time_axis_toggle(const ViewContext& context, const char* id) {
  static std::map<std::string, bool> shared;
  bool& on = shared[id];
  if (!context.figure) {
    ImGui::PushID(id);
    ImGui::Checkbox("one time axis for every run (off: each fits its own)", &on);
    ImGui::PopID();
  }
  return on;
}

TimelineHover draw_timeline_alone(const std::string& id, const Timeline& timeline, float height) {
  static std::map<std::string, TimelineViewState> views;
  return draw_timelines(id.c_str(), {&timeline}, false, views[id], {0, height});
}

namespace {
// A fitted figure's text scale (1: as large as the text around it) and the view and text sizes it was fitted to.
struct FitScale {
  float scale = 1, view_h = 0, text_scale = 0;
};
std::map<std::string, FitScale> g_fit_scales;  // by title
std::string g_fitting;                         // the title of the fitted figure being drawn, or empty
// Fitted figures aim a little under the view's height. A scale only shrinks while the view and the text keep their
// sizes (it starts again from 1 when either changes), so a figure whose rows rewrap as its text shrinks cannot flip
// between two layouts from frame to frame.
constexpr float kFitTarget = 0.95f;
// The least text a fitted figure draws, in units of the 1x text. In a 1280x720 window at 2x text every diagram is
// seen whole with text at least as large as the 1x text (they take flatter layouts there: figure_rule.py checks);
// smaller windows may need less.
constexpr float kLeastFitText = 0.75f;

// The text scale to draw a fitted figure with this frame.
float fit_scale_now(FitScale& fit) {
  if (fit.view_h != view_height() || fit.text_scale != ui_scale()) fit = {1, view_height(), ui_scale()};
  return fit.scale;
}

// The next frame's scale for a fitted figure that took `size` where `room` was left (the view's height, the width to
// the view's right edge): its size is nearly in proportion to its text, so the scale shrinks by the ratio of the
// room to the size, never under kLeastFitText of the 1x text.
void correct_fit_scale(FitScale& fit, ImVec2 size, ImVec2 room) {
  const float ratio = std::min(room.y / size.y, (room.x + 1) / size.x);  // a point of rounding
  if (ratio >= 1) return;
  const float least = std::min(1.0f, kLeastFitText / fit.text_scale);
  fit.scale = std::clamp(fit.scale * kFitTarget * ratio, least, 1.0f);
}

// The width from `left` to the right edge of the window's content.
float width_right_of(float left) { return ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x - left; }
}  // namespace

void begin_figure() { ImGui::BeginGroup(); }

void begin_fitted_figure(const std::string& title) {
  g_fitting = title;
  const float scale = fit_scale_now(g_fit_scales[title]);
  ImGui::SetWindowFontScale(scale);
  set_figure_text_scale(scale);
  ImGui::BeginGroup();
}

void end_figure(const std::string& title) {
  ImGui::EndGroup();
  const ImVec2 min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
  note_plot_area(title, min, max, {}, min, max, true);  // with the size of the text it was drawn with
  if (!g_fitting.empty()) {
    ImGui::SetWindowFontScale(1.0f);
    set_figure_text_scale(1.0f);
    correct_fit_scale(g_fit_scales[g_fitting], {max.x - min.x, max.y - min.y}, {width_right_of(min.x), view_height()});
    g_fitting.clear();
  }
}

float plot_height_leaving(float rows_below) {
  const float avail = ImGui::GetContentRegionAvail().y;
  return within_view_height(
      std::max(main_figure_height(), avail - (rows_below + 0.5f) * ImGui::GetFrameHeightWithSpacing()));
}

void draw_note(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(muted_text_color()));
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

void draw_warning_band(const std::string& text) {
  draw_band({text, text, with_alpha(warning_color(), 0.18f), warning_color(), "warning_band", ""},
            ImGui::GetContentRegionAvail().x);
}

void draw_heading(const std::string& text) {
  ImGui::PushFont(heading_font());
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
}

void draw_needs_run(const ViewContext& context, const char* what) {
  ImGui::Spacing();
  ImGui::PushFont(heading_font());
  if (const RunProgress& progress = context.run_progress; progress.running) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(highlight_color()), "Measuring %s ...", what);
    ImGui::PopFont();
    ImGui::ProgressBar(static_cast<float>(progress.fraction), {-1, 0}, progress.what.c_str());
    return;
  }
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(highlight_color()), "Press Run to measure %s.", what);
  ImGui::PopFont();
  ImGui::TextDisabled("Runs happen on a worker thread; the window stays responsive and Cancel stops them.");
}

void draw_step_data_missing(const ViewContext& context) {
  if (!context.step_data_error.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(highlight_color()), "%s", context.step_data_error.c_str());
    ImGui::PopTextWrapPos();
  } else {
    ImGui::TextDisabled("Preparing this step ...");
  }
}

std::string short_number_text(double value) { return fmt::format("{:g}", value); }

std::string percent_text(double share, int decimals) { return fmt::format("{:.{}f}%", 100 * share, decimals); }

void draw_color_key(const std::vector<ColorKeyEntry>& entries) {
  const float s = ui_scale();
  const float box = ImGui::GetTextLineHeight(), gap = 6 * s, spacing = 18 * s;
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ColorKeyEntry& e = entries[i];
    const float width = box + gap + ImGui::CalcTextSize(e.meaning.c_str()).x;
    if (i > 0) {
      ImGui::SameLine(0, spacing);
      if (ImGui::GetCursorScreenPos().x + width > right) ImGui::NewLine();
    }
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    if (e.fill) draw->AddRectFilled(at, {at.x + box, at.y + box}, e.fill, 2 * s);
    if (e.outline) draw->AddRect(at, {at.x + box, at.y + box}, e.outline, 2 * s, 0, 2 * s);
    ImGui::Dummy({box, box});
    ImGui::SameLine(0, gap);
    ImGui::TextWrapped("%s", e.meaning.c_str());
  }
}

namespace {
// A figure key's sizes: a swatch wide enough to show hatching, and the room one entry takes in its row.
struct FigureKeySizes {
  float line = ImGui::GetTextLineHeight(), gap = 6 * ui_scale();
  float swatch_w = 1.6f * line, swatch_h = 0.8f * line, row_h = line + gap;
  float entry_w(const std::string& meaning) const {
    return swatch_w + gap + ImGui::CalcTextSize(meaning.c_str()).x + 3 * gap;
  }
};
}  // namespace

float FigureKey::height(float width) const {
  const FigureKeySizes k;
  int rows = 1;
  float x = 0;
  for (const FigureKeyEntry& e : entries) {
    if (x > 0 && x + k.entry_w(e.meaning) > width) {
      ++rows;
      x = 0;
    }
    x += k.entry_w(e.meaning);
  }
  return float(rows) * k.row_h;
}

void FigureKey::draw(ImDrawList* draw, float x0, float x1, float y) const {
  const FigureKeySizes k;
  float x = x0;
  for (const FigureKeyEntry& e : entries) {
    if (x > x0 && x + k.entry_w(e.meaning) > x1) {
      x = x0;
      y += k.row_h;
    }
    const ImVec2 a{x, y + (k.line - k.swatch_h) / 2}, b{x + k.swatch_w, y + (k.line + k.swatch_h) / 2};
    if (e.fill) draw->AddRectFilled(a, b, e.fill);
    if (e.hatched) draw_hatching(draw, a, b, muted_text_color(), 4 * ui_scale());
    draw->AddText({b.x + k.gap, y}, text_color(), e.meaning.c_str());
    x += k.entry_w(e.meaning);
  }
}

void draw_value_table(const char* id, const std::vector<std::pair<std::string, std::string>>& rows) {
  // As wide as its longest label and value where that fits; in a narrower column the labels wrap and the values keep
  // their width, so no number is cut at the column's edge.
  float label_w = 0, value_w = 0;
  ImGui::PushFont(mono_font());
  for (const auto& row : rows) value_w = std::max(value_w, ImGui::CalcTextSize(row.second.c_str()).x);
  ImGui::PopFont();
  for (const auto& row : rows) label_w = std::max(label_w, ImGui::CalcTextSize(row.first.c_str()).x);
  const float padding = 4 * ImGui::GetStyle().CellPadding.x + ImGui::GetStyle().ItemSpacing.x;
  const bool wrap = label_w + value_w + padding > ImGui::GetContentRegionAvail().x;
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
  if (wrap) {
    ImGui::TableSetupColumn("label", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed, value_w);
  }
  for (const auto& [label, value] : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (wrap)
      ImGui::TextWrapped("%s", label.c_str());
    else
      ImGui::TextUnformatted(label.c_str());
    ImGui::TableNextColumn();
    ImGui::PushFont(mono_font());
    ImGui::TextUnformatted(value.c_str());
    ImGui::PopFont();
  }
  ImGui::EndTable();
}

void draw_columns_table(const char* id, const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows) {
  const int columns = static_cast<int>(headers.size());
  if (columns == 0 || !ImGui::BeginTable(id, columns, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
  for (const auto& header : headers) ImGui::TableSetupColumn(header.c_str());
  ImGui::TableHeadersRow();
  for (const auto& row : rows) {
    ImGui::TableNextRow();
    for (int c = 0; c < columns && c < static_cast<int>(row.size()); ++c) {
      ImGui::TableSetColumnIndex(c);
      if (c > 0) ImGui::PushFont(mono_font());
      ImGui::TextUnformatted(row[c].c_str());
      if (c > 0) ImGui::PopFont();
    }
  }
  ImGui::EndTable();
}

}  // namespace dlsys::gui
