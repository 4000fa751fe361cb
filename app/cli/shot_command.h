#pragma once
// `shot` renders a lesson view to PNG without a display; `export` writes a lesson's timelines as SVG or Chrome trace.
#include <iosfwd>
#include <string>
#include <vector>

namespace dlsys {

struct ShotOptions {
  std::string lesson;
  int step = 1;
  bool every_step = false;  // every step, each to its own files: view.png -> view-step1.png, view-step2.png, ...
  std::vector<std::string> sets;
  std::string size = "1600x900";  // the window the view is laid out in, in points
  double scale = 1.0;             // pixels per point: the image is scale x size pixels, with the same layout
  double text_scale = 0;          // as Ctrl +/- sets it in the window (1 to 3); 0: the mode's default
  bool quick = false;
  std::string backend = "auto";
  bool presentation = false;
  std::string output_png;
  std::string open_run_file;       // render this recorded run instead of running the lesson
  std::string json_path;           // also write the rendered run as a run file
  bool no_recorded_label = false;  // tests: the recorded run drawn without its label, pixel for pixel as live
  std::string widget_rects_path;   // tests: where the named widgets and the plots were in the last frame drawn
};

struct ExportOptions {
  std::string lesson;
  std::vector<std::string> sets;
  std::string backend = "auto";
  std::string svg_path;
  std::string trace_path;
  bool run = false;  // run the lesson and export its measured timelines beside the theory; else the theory alone
};

// Where step `step` of `shot --every-step` goes: "-step<N>" before the file's extension ("a/view.png" ->
// "a/view-step3.png").
std::string every_step_path(const std::string& path, int step);

// `shot` renders with the GUI's code (offscreen EGL), which the CLI library does not link: the executable registers
// the renderer when the GUI is built. Without one, `shot` throws BadInput saying the build has no GUI (exit 2).
using ShotRenderer = int (*)(const ShotOptions& options, std::ostream& out, std::ostream& err);
void set_shot_renderer(ShotRenderer renderer);
int shot_command(const ShotOptions& options, std::ostream& out, std::ostream& err);
int export_command(const ExportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace dlsys
