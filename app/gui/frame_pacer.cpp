#include "app/gui/frame_pacer.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <atomic>
#include <string_view>

#include "app/gui/key_taps.h"

namespace dlsys::gui {

namespace {

// Frames drawn at full rate after the last input event, so hover and press states follow the hand; while a run
// measures, only a couple: the ten that followed the click on Run cost a third of a second of a core (software
// rendering, 1920x1080), which in a one-second run put the window over the run-conditions bar with the mouse still.
constexpr int kEagerFramesAfterInput = 10;
constexpr int kEagerFramesDuringRun = 2;
// How often an idle window wakes: view animations tick every half second or slower.
constexpr double kIdleTickS = 0.2;
// While a run measures, its progress bar needs no more than this: with Mesa's software renderer a frame at 1920x1080
// costs about 30 ms of the cores the run measures on, so four frames a second took an eighth of a core.
constexpr double kRunTickS = 0.5;
// A harness counting frames waits for them; the frames it gets are built, and rendered only when they change. While a
// run measures, it gets them at kRunTickS as a user's window draws: at display rate a changing progress bar kept
// Mesa's software renderer drawing on a third to three quarters of a core, taken from the run it was watching.
constexpr double kObservedTickS = 1.0 / 60.0;

std::atomic<bool> input_seen{true};

void on_input() { input_seen.store(true, std::memory_order_relaxed); }

// FNV-1a over raw bytes: a fingerprint of the frame, not a security measure.
std::uint64_t fnv1a(std::uint64_t hash, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

std::uint64_t draw_data_hash(const ImDrawData& draw_data) {
  std::uint64_t hash = 14695981039346656037ull;
  for (int l = 0; l < draw_data.CmdListsCount; ++l) {
    const ImDrawList& list = *draw_data.CmdLists[l];
    hash = fnv1a(hash, list.VtxBuffer.Data, std::size_t(list.VtxBuffer.Size) * sizeof(ImDrawVert));
    hash = fnv1a(hash, list.IdxBuffer.Data, std::size_t(list.IdxBuffer.Size) * sizeof(ImDrawIdx));
    for (const ImDrawCmd& cmd : list.CmdBuffer) {
      hash = fnv1a(hash, &cmd.ClipRect, sizeof(cmd.ClipRect));
      hash = fnv1a(hash, &cmd.TextureId, sizeof(cmd.TextureId));
      hash = fnv1a(hash, &cmd.ElemCount, sizeof(cmd.ElemCount));
    }
  }
  return hash;
}

}  // namespace

FramePacer::FramePacer(GLFWwindow* window) {
  glfwSetCursorPosCallback(window, [](GLFWwindow*, double, double) { on_input(); });
  glfwSetMouseButtonCallback(window, [](GLFWwindow*, int, int, int) { on_input(); });
  glfwSetScrollCallback(window, [](GLFWwindow*, double, double) { on_input(); });
  glfwSetKeyCallback(window, [](GLFWwindow*, int key, int, int action, int) {
    note_key_event(key, action);
    on_input();
  });
  glfwSetCharCallback(window, [](GLFWwindow*, unsigned int) { on_input(); });
  glfwSetCursorEnterCallback(window, [](GLFWwindow*, int) { on_input(); });
  glfwSetWindowFocusCallback(window, [](GLFWwindow*, int) { on_input(); });
  glfwSetWindowSizeCallback(window, [](GLFWwindow*, int, int) { on_input(); });
  glfwSetWindowRefreshCallback(window, [](GLFWwindow*) { on_input(); });
}

void FramePacer::wait(bool run_going, bool scripted, bool observed) {
  restore_key_states();
  if (input_seen.exchange(false, std::memory_order_relaxed)) eager_frames_left_ = kEagerFramesAfterInput;
  if (run_going) eager_frames_left_ = std::min(eager_frames_left_, kEagerFramesDuringRun);
  if (scripted || eager_frames_left_ > 0) {
    if (eager_frames_left_ > 0) --eager_frames_left_;
    glfwPollEvents();
  } else {
    glfwWaitEventsTimeout(run_going ? kRunTickS : observed ? kObservedTickS : kIdleTickS);
  }
  // A press held back a frame (key_taps.h) is shown at the next frame, drawn at once.
  if (show_key_presses()) eager_frames_left_ = std::max(eager_frames_left_, 1);
}

bool FramePacer::should_render(const ImDrawData& draw_data, int framebuffer_width, int framebuffer_height,
                               bool forced) {
  const std::uint64_t hash = draw_data_hash(draw_data);
  const bool changed =
      hash != rendered_hash_ || framebuffer_width != rendered_width_ || framebuffer_height != rendered_height_;
  if (!changed && !forced) return false;
  rendered_hash_ = hash;
  rendered_width_ = framebuffer_width;
  rendered_height_ = framebuffer_height;
  return true;
}

}  // namespace dlsys::gui
