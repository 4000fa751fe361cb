#pragma once
// Keys as ImGui 1.86 should see them. It reads each key's state once a frame, so a key pressed and released between
// two frames (a tap on a busy machine, where events wait for the next frame) would never be seen down, and a second
// press arriving while the first is still shown down would never be seen as a press. A press is shown down for the
// frame that reads it, whatever happened to the key since; a press of a key the last frame showed down is shown up
// for one frame first, then down.
namespace dlsys::gui {

// GLFW's key callback, before ImGui's backend: records presses and the keys' real states.
void note_key_event(int key, int action);
// After the frame's events are read and before ImGui::NewFrame. Returns whether a press waits for the next frame
// (the window should draw it at once instead of waiting for input).
bool show_key_presses();
// Before the next frame's events are read: the keys shown down for a press take their real state again.
void restore_key_states();

}  // namespace dlsys::gui
