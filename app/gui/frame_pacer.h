#pragma once
// The window draws only when something changed, so it does not take the cores a run is measuring on (with Mesa's
// software renderer a frame costs tens of milliseconds of CPU). Input wakes the loop at once and keeps it drawing
// at full rate for a few frames (ImGui needs them to settle hover and popups); otherwise the loop wakes a few times a
// second to let runs report progress and animations tick, builds the ImGui frame (cheap), and hands it to OpenGL only
// when its draw data differ from the last frame rendered.
#include <cstdint>

struct GLFWwindow;
struct ImDrawData;

namespace dlsys::gui {

class FramePacer {
 public:
  // Installs the input callbacks. Call before ImGui's GLFW backend installs its own: ImGui chains to these.
  explicit FramePacer(GLFWwindow* window);

  // Blocks until input arrives or the next tick is due. `scripted` screenshots never wait; a test harness that
  // watches the frame counter (`observed`) gets frames at display rate, still rendered only when they change, except
  // while a run measures.
  void wait(bool run_going, bool scripted, bool observed);
  // Whether this frame must reach the screen: its draw data or the framebuffer changed, or `forced` (screenshots).
  bool should_render(const ImDrawData& draw_data, int framebuffer_width, int framebuffer_height, bool forced);

 private:
  int eager_frames_left_ = 0;
  std::uint64_t rendered_hash_ = 0;
  int rendered_width_ = -1, rendered_height_ = -1;
};

}  // namespace dlsys::gui
