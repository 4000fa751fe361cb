#include "app/gui/key_taps.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <array>
#include <vector>

namespace dlsys::gui {

namespace {

constexpr int kKeys = IM_ARRAYSIZE(ImGuiIO{}.KeysDown);

std::array<bool, kKeys> really_down{};  // what the keyboard last said of each key
std::vector<int> presses;               // since the last frame, in order
std::vector<int> deferred;              // presses to show at the next frame, after a frame showing the key up
std::vector<int> overridden;            // keys this frame shows other than really_down says
std::array<bool, kKeys> shown{};        // what the last frame showed

bool in(const std::vector<int>& keys, int key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); }

// ImGui's GLFW backend derives the modifiers from the keys' states in its own callback; the same, after an override.
void update_modifiers(ImGuiIO& io) {
  io.KeyCtrl = io.KeysDown[GLFW_KEY_LEFT_CONTROL] || io.KeysDown[GLFW_KEY_RIGHT_CONTROL];
  io.KeyShift = io.KeysDown[GLFW_KEY_LEFT_SHIFT] || io.KeysDown[GLFW_KEY_RIGHT_SHIFT];
  io.KeyAlt = io.KeysDown[GLFW_KEY_LEFT_ALT] || io.KeysDown[GLFW_KEY_RIGHT_ALT];
  io.KeySuper = io.KeysDown[GLFW_KEY_LEFT_SUPER] || io.KeysDown[GLFW_KEY_RIGHT_SUPER];
}

}  // namespace

void note_key_event(int key, int action) {
  if (key < 0 || key >= kKeys) return;
  if (action == GLFW_PRESS) presses.push_back(key);
  if (action != GLFW_REPEAT) really_down[std::size_t(key)] = action == GLFW_PRESS;
}

bool show_key_presses() {
  ImGuiIO& io = ImGui::GetIO();
  std::vector<int> waiting = std::move(deferred);  // shown up last frame: down now
  deferred.clear();
  for (const int key : presses)
    if (!in(waiting, key)) (shown[std::size_t(key)] ? deferred : waiting).push_back(key);
  presses.clear();
  for (const int key : deferred) io.KeysDown[key] = false;
  for (const int key : waiting) io.KeysDown[key] = true;
  overridden = waiting;
  overridden.insert(overridden.end(), deferred.begin(), deferred.end());
  if (!overridden.empty()) update_modifiers(io);
  std::copy(std::begin(io.KeysDown), std::end(io.KeysDown), shown.begin());
  return !deferred.empty();
}

void restore_key_states() {
  if (overridden.empty()) return;
  ImGuiIO& io = ImGui::GetIO();
  for (const int key : overridden) io.KeysDown[key] = really_down[std::size_t(key)];
  overridden.clear();
  update_modifiers(io);
}

}  // namespace dlsys::gui
