#pragma once
// A lesson's views: one function per lesson draws the current step into the space it is given, from the parameters,
// the step number and the last finished run (DESIGN.md: views are functions of the run result and view state).
// View state that must persist (zoom, selection) lives in statics next to the code that draws it.
#include <functional>
#include <string>
#include <vector>

#include "app/gui/plot.h"
#include "app/gui/timeline.h"
#include "engine/params.h"
#include "engine/run_result.h"
#include "lessons/common/lesson.h"
#include "lessons/common/run_comparison.h"
#include "lessons/run_file.h"

namespace dlsys::gui {

// This lesson's run while it goes on: how far it got and what it does now (the worker's own words).
struct RunProgress {
  bool running = false;
  double fraction = 0;
  std::string what;
};

struct ViewContext {
  // The panel's parameters reach a view only as its lesson read them (typed, in the step data): there is no field for
  // them here, so no view can read one by its key.
  const Lesson& lesson;
  int step = 0;             // 0-based
  const RunResult* result;  // the last finished run of this lesson, or nullptr before the first run
  double step_time_s = 0;   // seconds since this step was shown: drives animations (0 in screenshots' first frame)
  bool presentation = false;
  bool result_stale = false;  // the result was measured with other parameters (the shell marks it)
  // Drawing a figure for export: views then leave out their widgets (checkboxes, sliders) and draw with the values
  // those widgets hold.
  bool figure = false;
  const StepData* step_data = nullptr;  // the lesson's step data (latest finished), or nullptr while none is ready
  std::string step_data_error;          // why the current parameters cannot be drawn, if they cannot
  RunProgress run_progress;             // the shell sets it from the worker, once per frame
  // Two runs compared ("Compare with pinned/previous", `dlsys-lab compare`): run B beside `result` (run A), and the
  // table the lessons layer made of the two. Both null when nothing is compared.
  const RunResult* compare_result = nullptr;
  const RunComparison* comparison = nullptr;
  const StepData* compare_step_data = nullptr;  // the step data of run B's parameters, for its half of the view
};

// The lesson's step data as its own type, or nullptr (then draw_step_data_missing says why).
template <typename Data>
const Data* step_data_as(const ViewContext& context) {
  return dynamic_cast<const Data*>(context.step_data);
}
// "Preparing ..." while the data is computed, or why it cannot be.
void draw_step_data_missing(const ViewContext& context);

// The pace of the step views' teaching animations: one change a second. Each change costs a frame (tens of
// milliseconds of CPU with a software renderer), so a faster pace would take more of a core from the runs measured
// beside an idle window than the lab allows itself (0.05).
inline constexpr double kAnimationTickS = 1.0;

// The parameters of the run on show (context.result, which must be set), as its lesson reads them: the sizes a view
// prints are the run's own, typed, never looked up by their key.
template <typename TypedLessonType>
typename TypedLessonType::ParamsType run_params(const ViewContext& context) {
  const auto& lesson = dynamic_cast<const TypedLessonType&>(context.lesson);
  return lesson.read_params(recorded_params(lesson, *context.result));
}

// Draws one step of a lesson.
using StepView = void (*)(const ViewContext& context);
// Whether a step can show what a run measured (then the shell marks a run on a busy machine above it) or only
// theory and step data (then it does not: nothing on it was measured).
enum class StepShows { Measurement, TheoryOnly };
// How a step shows two runs compared: each half of the view drawn by the step's view with one run as its result, or
// once, the step's plots drawing the second run's series over the first's (add_compared_lines).
enum class CompareLayout { SideBySide, Overlaid };
struct StepViewEntry {
  const char* step_id;  // as in the lesson text: "## Step <id>: ..."
  StepView draw;
  StepShows shows = StepShows::Measurement;
  CompareLayout compare = CompareLayout::SideBySide;
};
using StepViews = std::vector<StepViewEntry>;

// The views of a lesson, one per step id, or nullptr for a lesson with no views (the shell then shows its theory).
const StepViews* find_step_views(const std::string& lesson_id);
// The view of one step, or nullptr when that step has none (a test keeps the tables and the texts in step).
StepView find_step_view(const std::string& lesson_id, const std::string& step_id);
// Whether that step can show measured content (true for a step without a view: the shell then shows the run's text).
bool step_shows_measurement(const std::string& lesson_id, const std::string& step_id);
// How that step shows two runs compared (side by side for a step without a view).
CompareLayout step_compare_layout(const std::string& lesson_id, const std::string& step_id);

// Two runs compared (context.compare_result set): a coloured badge naming each run over the step, the step drawn for
// both (side by side, or once where its view overlays them), and the comparison table under it.
void draw_compared_step(const ViewContext& context);
// The badge of run A (0) or B (1): "A: <file or 'live'>" on the run's colour.
void draw_run_badge(int run, const std::string& name);

// A plot of an Overlaid step built from one run's series: `lines_of` gives its lines for a run. Adds the lines of
// context.result and, when a run is compared, those of context.compare_result dashed and lighter in the same colours;
// the legend then names each line's run ("A: ", "B: ").
using RunLines = std::function<std::vector<PlotLine>(const RunResult& run)>;
void add_compared_lines(const ViewContext& context, PlotSpec& spec, const RunLines& lines_of);

// Shared pieces of lesson views.
// Where a view needs a run that has not finished yet: "Press Run to measure ...", or the progress of the run going on.
void draw_needs_run(const ViewContext& context, const char* what);
// The height of a step's main figure (the plot or timeline the step is about), drawn next: the height left in the
// view less `rows_below` rows of frames (a table or a line of text under it), but at least half the window's height
// while that much is left, so the figure stays whole on screen and large enough to read at a glance
// at 1280x720 and projected at 1920x1080 (tests/gui/figure_room.sh checks every step). What follows it scrolls.
float plot_height_leaving(float rows_below);
// The height of a step's main figure, drawn next, where what follows it may scroll: half the window, or more where
// large text leaves its data less than 30 % of the window (no more than the view), where that much is left on
// screen, else what is left where that is still a good part of the window, else its share and the view scrolls to it.
// Figures after it that compare with it take `kSecondFigureShare` of it.
float main_figure_height();
inline constexpr float kSecondFigureShare = 0.6f;
// Two plots that compare, `a` and `b` at `height` each: side by side where each keeps at half the width at least
// kSideBySideShare of the data area it would have at the full width, else one under the other at the full width, the
// second scrolling into view (large text in a small window, where half the width wraps a title and a legend into
// rows that leave a sliver of data).
inline constexpr float kSideBySideShare = 0.6f;
void draw_plot_pair(const char* id_a, PlotSpec a, const char* id_b, PlotSpec b, float height);
// A step whose main figure stands under a table or a few bars: `context` first, then `figure`, except where the window
// is short of room (window_is_short: presentation mode at 1280x720), where the figure comes first so that it is whole
// on screen, and the context follows it.
void draw_context_and_figure(const std::function<void()>& context, const std::function<void()>& figure);
// The height of the figure that draw_context_and_figure draws: where it comes first, the main figure's; under its
// context, what that left of the view, but at least `least`.
float figure_height_after_context(float least);
// A figure drawn by hand (bars, a diagram): what the view draws between these two calls is reported under `title`
// as plots and timelines are (`--widget-rects`), so the figure rule measures it like them.
void begin_figure();
void end_figure(const std::string& title);
// The same for a diagram built of rows of text (end it with end_figure(title)): where it is taller than the view or
// wider than what is left of its line (large text), it draws its text smaller until it can be seen whole (at 2x text
// in 1280x720 never under the 1x text size: diagrams take flatter layouts where the window is short). The scale is
// kept per title and corrected from each frame's size, so the first frame after a change may still be too large.
void begin_fitted_figure(const std::string& title);

// Steps that show several measured runs' timelines fit each to its own run by default (one slow run does not shrink
// the others to slivers), the run the step is about first and largest; this checkbox puts them on one time axis to
// compare durations. Returns whether it is ticked; exported figures draw what the window shows, without it.
bool shared_time_axis_toggle(const ViewContext& context, const char* id);
// One timeline in a widget of its own, fitted to its own run, its zoom kept under `id`; returns the hovered span
// (timeline index 0).
TimelineHover draw_timeline_alone(const std::string& id, const Timeline& timeline, float height);
// A wrapped line in the muted text colour (what a number means, a caveat), and a wrapped heading in the heading font.
void draw_note(const std::string& text);
void draw_heading(const std::string& text);
// A band the reader cannot miss, in the warning colour with a stripe on its left: what disturbed a run, or what
// qualifies its numbers. The text wraps inside it; where the window is short of room it folds to one line (whole on
// hover or after a click: folded_band.h). The cursor ends under it.
void draw_warning_band(const std::string& text);
// Numbers as the views write them: the shortest form at six significant digits ("0.5", "2048", "1e+06"), and a share
// as a percentage with `decimals` places (0.1234 -> "12.3%").
std::string short_number_text(double value);
std::string percent_text(double share, int decimals = 1);
// One entry of a colour key: a swatch as tall as the text, filled and/or outlined, then what that colour marks.
struct ColorKeyEntry {
  ImU32 fill = 0;  // 0: an empty swatch
  std::string meaning;
  ImU32 outline = 0;  // 0: none; else drawn around the swatch (the highlight of the element the step is about)
};
// A figure's colour key: its entries side by side, flowing onto the next line when the width runs out; a meaning
// wider than the whole line wraps beside its swatch.
void draw_color_key(const std::vector<ColorKeyEntry>& entries);
// The same kind of key inside a figure drawn on its draw list, which reserves its height: the entries flow in rows
// across the figure's width. A hatched swatch is marked as the lab marks idle or thrown-away work.
struct FigureKeyEntry {
  ImU32 fill = 0;  // 0: no fill
  std::string meaning;
  bool hatched = false;
};
struct FigureKey {
  std::vector<FigureKeyEntry> entries;
  float height(float width) const;  // its rows at this width, in pixels
  void draw(ImDrawList* draw, float x0, float x1, float y) const;
};
// A small two-column table of label / value rows, values right-aligned in the mono font.
void draw_value_table(const char* id, const std::vector<std::pair<std::string, std::string>>& rows);
// A table with a header row; every column after the first in the mono font.
void draw_columns_table(const char* id, const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows);

}  // namespace dlsys::gui
