#include "app/gui/theme.h"

namespace dlsys::gui {

namespace {
ThemeKind g_theme = ThemeKind::Dark;

// Okabe-Ito: distinguishable for the common forms of colour blindness. On the light theme its yellow is darkened to an
// olive, which point labels and thin lines need to read on white.
constexpr ImU32 kOkabeIto[] = {IM_COL32(0, 114, 178, 255),   IM_COL32(213, 94, 0, 255),  IM_COL32(0, 158, 115, 255),
                               IM_COL32(204, 121, 167, 255), IM_COL32(230, 159, 0, 255), IM_COL32(86, 180, 233, 255),
                               IM_COL32(160, 145, 0, 255)};
// On the dark background the blue is lifted so it does not sink into the panel colour.
constexpr ImU32 kOkabeItoOnDark[] = {IM_COL32(86, 160, 235, 255), IM_COL32(240, 120, 40, 255),
                                     IM_COL32(40, 200, 150, 255), IM_COL32(220, 140, 190, 255),
                                     IM_COL32(240, 180, 40, 255), IM_COL32(120, 200, 240, 255),
                                     IM_COL32(240, 228, 66, 255)};
}  // namespace

void apply_theme(ThemeKind kind) {
  g_theme = kind;
  ImGuiStyle& style = ImGui::GetStyle();
  if (kind == ThemeKind::Dark) {
    ImGui::StyleColorsDark(&style);
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0.12f, 0.13f, 0.16f, 1.0f);
  } else {
    // Projectors wash out mid-tones: pure white ground, near-black text, saturated accents, thick borders.
    ImGui::StyleColorsLight(&style);
    style.Colors[ImGuiCol_WindowBg] = ImVec4(1, 1, 1, 1);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0.96f, 0.96f, 0.97f, 1);
    style.Colors[ImGuiCol_Text] = ImVec4(0.02f, 0.02f, 0.04f, 1);
    style.Colors[ImGuiCol_Border] = ImVec4(0.25f, 0.25f, 0.3f, 1);
    style.Colors[ImGuiCol_Button] = ImVec4(0.82f, 0.87f, 0.95f, 1);
    style.Colors[ImGuiCol_ButtonHovered] = ImVec4(0.65f, 0.76f, 0.93f, 1);
    // Sliders, check boxes and fields on a tint of their own: the light style's white frames vanish on the white
    // ground, leaving a slider's grab or a check mark floating, and an unticked box not there at all.
    style.Colors[ImGuiCol_FrameBg] = ImVec4(0.88f, 0.90f, 0.94f, 1);
    style.Colors[ImGuiCol_FrameBgHovered] = ImVec4(0.80f, 0.85f, 0.93f, 1);
    style.Colors[ImGuiCol_FrameBgActive] = ImVec4(0.72f, 0.80f, 0.93f, 1);
  }
  style.WindowRounding = 0;
  style.ChildRounding = 4;
  style.FrameRounding = 3;
  style.WindowBorderSize = 0;
  style.ChildBorderSize = kind == ThemeKind::Projector ? 1.0f : 0.0f;
}

ThemeKind current_theme() { return g_theme; }

ImU32 series_color(int index) {
  const int i = ((index % kSeriesColorCount) + kSeriesColorCount) % kSeriesColorCount;
  return g_theme == ThemeKind::Dark ? kOkabeItoOnDark[i] : kOkabeIto[i];
}
ImU32 theory_color() { return g_theme == ThemeKind::Dark ? IM_COL32(235, 235, 235, 255) : IM_COL32(20, 20, 20, 255); }
ImU32 text_color() { return ImGui::GetColorU32(ImGuiCol_Text); }
ImU32 muted_text_color() {
  return g_theme == ThemeKind::Dark ? IM_COL32(160, 165, 175, 255) : IM_COL32(70, 70, 80, 255);
}
ImU32 grid_color() { return g_theme == ThemeKind::Dark ? IM_COL32(255, 255, 255, 28) : IM_COL32(0, 0, 0, 40); }
ImU32 panel_color() { return g_theme == ThemeKind::Dark ? IM_COL32(22, 24, 30, 255) : IM_COL32(250, 250, 252, 255); }
ImU32 highlight_color() {
  return g_theme == ThemeKind::Dark ? IM_COL32(255, 200, 60, 255) : IM_COL32(200, 120, 0, 255);
}
ImU32 warning_color() { return g_theme == ThemeKind::Dark ? IM_COL32(150, 60, 30, 255) : IM_COL32(255, 210, 150, 255); }

ImVec4 error_text_color() { return ImGui::ColorConvertU32ToFloat4(IM_COL32(230, 60, 50, 255)); }

ImU32 info_color() { return g_theme == ThemeKind::Dark ? IM_COL32(34, 52, 78, 255) : IM_COL32(222, 234, 250, 255); }

ImU32 run_color(int run) {
  if (g_theme == ThemeKind::Dark) return run == 0 ? IM_COL32(96, 84, 210, 255) : IM_COL32(196, 52, 120, 255);
  return run == 0 ? IM_COL32(72, 60, 190, 255) : IM_COL32(176, 30, 100, 255);
}

ImU32 with_alpha(ImU32 color, float alpha) {
  const ImU32 a = static_cast<ImU32>(alpha * 255.0f) & 0xFF;
  return (color & ~IM_COL32_A_MASK) | (a << IM_COL32_A_SHIFT);
}

void draw_hatching(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 color, float spacing) {
  draw->PushClipRect(a, b, true);
  const float h = b.y - a.y;
  for (float x = a.x - h; x < b.x; x += spacing) draw->AddLine({x, b.y}, {x + h, a.y}, color, 1.0f);
  draw->PopClipRect();
}

}  // namespace dlsys::gui
