#pragma once
// The project's plot widget (ImPlot is not packaged here): line and marker series on linear or log axes with
// units, a legend, a hover read-out of the nearest point, theory drawn as lines and measurements as markers with
// min-max whiskers. Drawn with ImDrawList into the space the caller gives it.
#include <imgui.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/run_result.h"

namespace dlsys::gui {

enum class SeriesStyle { Line, Markers, LineAndMarkers };
enum class MarkerShape { Circle, Square, Triangle, Diamond };

struct PlotLine {
  std::string name;
  ImU32 color = 0;
  SeriesStyle style = SeriesStyle::Line;
  bool dashed = false;    // theory lines are dashed when they sit on top of measurements
  bool whiskers = false;  // draw y_min..y_max of each point (measured)
  std::vector<SeriesPoint> points;
  MarkerShape marker = MarkerShape::Circle;
  bool label_points = false;  // the name beside each point: scattered points read without the legend
};

struct PlotAxis {
  std::string label;  // "n (m = n = k)"
  std::string unit;   // "us", "GB/s"; shown in the axis title and the hover read-out
  bool log = false;
  double min = NAN;  // NAN: fit to the data
  double max = NAN;
};

// A vertical or horizontal reference line with a label (a peak, a ceiling, the current parameter value).
struct PlotGuide {
  bool vertical = false;
  double value = 0;
  std::string label;
  ImU32 color = 0;
};

// A shaded span of the x axis, named at its foot: the sizes a cache level holds, a regime.
struct PlotBand {
  double x0 = 0, x1 = 0;
  std::string label;
  ImU32 color = 0;
};

struct PlotSpec {
  std::string title;
  PlotAxis x;
  PlotAxis y;
  std::vector<PlotLine> lines;
  std::vector<PlotGuide> guides;
  ImVec2 size{0, 0};              // 0 = take the available width / height
  std::vector<PlotBand> bands{};  // under everything else, clipped to the axes' range
};

void draw_plot(const char* id, const PlotSpec& spec);
// What a plot's frame takes beyond its data area at the current text size: a one-line title, the axes' titles, the
// tick labels and `legend_rows` rows of legend. A figure that must keep its data area asks for that much more.
float plot_chrome_height(int legend_rows);
// The height of the data area a plot of `spec` at `size` gets (0 for the available width or height), as draw_plot
// would lay it out now: what a view weighs before choosing a layout.
float plot_data_height(const PlotSpec& spec, ImVec2 size);

// A RunResult series as a plot line: theory as a line, measured as markers with whiskers.
PlotLine line_from_series(const Series& series, ImU32 color);
// The run's series `id` drawn in `style` (an empty line when the run has none): dashed where asked, and with the
// measurement's min-max whiskers only where asked and drawn with markers.
struct LineLook {
  bool dashed = false;
  bool whiskers = false;
};
PlotLine run_series_line(const RunResult& run, const std::string& id, ImU32 color, SeriesStyle style,
                         LineLook look = {});
// The same as line_from_series, as the index-th series of a plot: the palette's colour, and on each pass past the
// palette's length the next marker shape and a dashed line, so no two series of one plot look alike.
PlotLine categorical_line(const Series& series, int index);
// A line of the second run compared with the first (app/views: add_compared_lines): dashed, in its colour made paler.
PlotLine compared_run_line(PlotLine line);

}  // namespace dlsys::gui
