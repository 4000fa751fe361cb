#pragma once
// Colours and fonts shared by every view. Two themes: dark for a desk, light high-contrast for projectors.
// Views ask for colours by role, never hard-code them, so both themes and exports stay legible.
#include <imgui.h>

namespace dlsys::gui {

enum class ThemeKind { Dark, Projector };

void apply_theme(ThemeKind kind);
ThemeKind current_theme();

// Categorical series colours (Okabe-Ito, colour-blind safe; one palette for the whole lab), lifted on the dark theme
// for contrast. Indices past kSeriesColorCount repeat the palette: plots with more series than that vary the marker
// and the line as well (categorical_line in app/gui/plot.h).
inline constexpr int kSeriesColorCount = 7;
ImU32 series_color(int index);
ImU32 theory_color();  // theory lines: the strongest contrast against the background
ImU32 text_color();
ImU32 muted_text_color();  // axis ticks, grid labels
ImU32 grid_color();
ImU32 panel_color();        // background of cards and plot areas
ImU32 highlight_color();    // the element the step is about
ImU32 warning_color();      // something the reader must act on: a result measured with other parameters
ImU32 info_color();         // background of notes that qualify a result: emulated ranks, replayed runs
ImVec4 error_text_color();  // a refused input, a wrong prediction: red, readable on either theme
// The two runs of a comparison, A (0) and B (1): their badges' colours, apart from the series palette so that a run's
// badge is never read as a series.
ImU32 run_color(int run);
ImU32 with_alpha(ImU32 color, float alpha);
// Diagonal lines `spacing` pixels apart across the rectangle a-b, clipped to it: how the lab marks time or slots that
// did no useful work (a pipeline's bubbles, a batch's padding), told apart from every filled block.
void draw_hatching(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 color, float spacing);

// Fonts loaded at the current scale (DejaVu from the system, ProggyClean as fallback).
ImFont* body_font();
ImFont* heading_font();
ImFont* mono_font();
// Pixels per "point": 1 at 1x; views multiply fixed sizes (margins, marker radius) by it.
float ui_scale();
// Inside a figure drawn with smaller text (views' begin_fitted_figure), its sizes shrink with its text: ui_scale() is
// multiplied by this until it is set back to 1.
void set_figure_text_scale(float scale);

}  // namespace dlsys::gui
