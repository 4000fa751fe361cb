#include "app/gui/fonts.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <filesystem>

#include "app/gui/theme.h"

namespace dlsys::gui {

namespace {
ImFont* g_body = nullptr;
ImFont* g_heading = nullptr;
ImFont* g_mono = nullptr;
float g_ui_scale = 1.0f;
float g_figure_text_scale = 1.0f;
bool g_system_fonts = false;

constexpr float kBodyPx = 17.0f, kHeadingPx = 23.0f, kMonoPx = 16.0f;
constexpr const char* kFontDir = "/usr/share/fonts/truetype/dejavu/";

ImFont* load(const char* file, float pixels) {
  const std::string path = std::string(kFontDir) + file;
  if (!std::filesystem::exists(path)) return nullptr;
  ImFontConfig config;
  config.OversampleH = 2;
  config.PixelSnapH = false;
  return ImGui::GetIO().Fonts->AddFontFromFileTTF(path.c_str(), pixels, &config);
}
}  // namespace

void rebuild_fonts(float ui_scale, float raster_scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  const float px = ui_scale * raster_scale;
  g_body = load("DejaVuSans.ttf", kBodyPx * px);
  g_heading = load("DejaVuSans-Bold.ttf", kHeadingPx * px);
  g_mono = load("DejaVuSansMono.ttf", kMonoPx * px);
  g_system_fonts = g_body != nullptr;
  if (!g_system_fonts) {
    ImFontConfig config;
    config.SizePixels = 13.0f * px;
    g_body = g_heading = g_mono = io.Fonts->AddFontDefault(&config);
  }
  if (g_heading == nullptr) g_heading = g_body;
  if (g_mono == nullptr) g_mono = g_body;
  io.FontDefault = g_body;
  io.FontGlobalScale = 1.0f / raster_scale;
  io.Fonts->Build();
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  g_ui_scale = ui_scale;
  // Sizes of frames and spacing follow the text.
  const ThemeKind theme = current_theme();
  ImGui::GetStyle() = ImGuiStyle();
  apply_theme(theme);
  ImGui::GetStyle().ScaleAllSizes(ui_scale);
}

bool have_system_fonts() { return g_system_fonts; }
ImFont* body_font() { return g_body; }
ImFont* heading_font() { return g_heading; }
ImFont* mono_font() { return g_mono; }
float ui_scale() { return g_ui_scale * g_figure_text_scale; }
void set_figure_text_scale(float scale) { g_figure_text_scale = scale; }

}  // namespace dlsys::gui
