#pragma once
// Rendering without a window: a GL framebuffer object to draw an ImGui frame into, a surfaceless EGL context for
// `shot` (no X server needed), and PNG output.
#include <imgui.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dlsys::gui {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgba;  // bottom row first, as glReadPixels gives it
};

// `image` encoded as PNG (flipped to top row first). Throws RunFailure naming `path`, the file it is for.
std::string encode_png(const std::string& path, const Image& image);
// Writes `image` as PNG. Throws RunFailure naming the file and the reason.
void write_png(const std::string& path, const Image& image);

// Reads the currently bound framebuffer's colour (GL_BACK of a window, or an FBO).
Image read_pixels(int width, int height, bool back_buffer);

// Renders `draw_ui` as one ImGui frame into an offscreen framebuffer of display_size x framebuffer_scale pixels.
// The caller owns the ImGui context and has initialised the OpenGL3 backend; fonts must already be rasterised
// at framebuffer_scale (see rebuild_fonts). `frames` > 1 renders several frames and keeps the last (ImGui lays out
// auto-sized windows on the second frame).
Image render_offscreen(const std::function<void()>& draw_ui, ImVec2 display_size, float framebuffer_scale, int frames,
                       ImVec4 clear_color);

// A GL 3.3 core context with no window and no display, through EGL (Mesa's surfaceless platform, or the GPU
// driver's device platform). Throws RunFailure with the EGL error when no such context can be made.
class HeadlessGl {
 public:
  HeadlessGl();
  ~HeadlessGl();
  HeadlessGl(const HeadlessGl&) = delete;
  HeadlessGl& operator=(const HeadlessGl&) = delete;
  std::string renderer() const;

 private:
  void* display_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace dlsys::gui
