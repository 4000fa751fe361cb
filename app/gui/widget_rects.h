#pragma once
// A test hook (`--widget-rects FILE`): the screen rectangles of named widgets and plot areas, and a summary of the
// app's state, written to a file whenever they change, so a test that drives the real window with X events can click
// by name instead of guessing pixels, and know what it should see.
#include <imgui.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dlsys::gui {

// Recording is off unless a path was given; the note_* calls then cost one branch.
void enable_widget_rects(const std::string& path);
bool widget_rects_enabled();

// Forgets the last frame's rectangles (call before drawing a frame).
void begin_widget_frame();
// The rectangle of the last ImGui item, under `name` (e.g. "step/next", "sidebar/matmul").
void note_last_item(const std::string& name);
// A plot or timeline: its data area (with the legend above it; `rect`), the whole widget with its title and axes
// (`frame`), and the colours of what it draws, so a test can look for them in a screenshot and check that the figure
// is whole on screen.
// `text_rows`: a diagram or bar chart built of rows of text, whose height follows the text size (it cannot shrink
// to fit the view as a plot's axes can). The size its text is drawn at (ui_scale(): 1 is the 1x text) is recorded too.
void note_plot_area(const std::string& title, ImVec2 min, ImVec2 max, const std::vector<ImU32>& colors,
                    ImVec2 frame_min, ImVec2 frame_max, bool text_rows = false);

// Writes the frame's rectangles with `state` (lesson, step, mode, frame number, ...).
// Replaces the file atomically (write, then rename) so a reader never sees half a document.
void write_widget_rects(const nlohmann::json& state);

}  // namespace dlsys::gui
