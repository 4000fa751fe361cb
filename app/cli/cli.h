#pragma once
// The headless command line: list, info, run, shot, export. Same binary and same lessons as the GUI.
#include <iosfwd>
#include <string>
#include <vector>

namespace dlsys {

// What the GUI needs from the command line when no subcommand was given.
struct GuiRequest {
  std::string open_state_file;    // --open FILE
  std::string open_run_file;      // --open-run FILE: a recorded run (`run LESSON --json FILE`) shown as the result
  std::string compare_run_file;   // --compare-run FILE: a recorded run pinned beside the result, "Compare" on
  std::string lesson;             // --lesson ID: start on this lesson
  int step = 0;                   // --step N (1-based); 0: not given (the lesson's first step)
  std::vector<std::string> sets;  // --set key=value for that lesson
  bool presentation = false;      // --present
  bool run_on_start = false;      // --run: start a run at once
  // For tests and demos: write a PNG of the window after the run (if any) finished and `frames` frames were drawn,
  // then quit.
  std::string screenshot_png;     // --screenshot FILE
  int frames = 0;                 // --frames N
  std::string figure_png;         // --figure FILE: also export the lesson view (the "Export figure" path)
  int figure_scale = 2;           // --figure-scale 1|2|4
  bool figure_light = false;      // --figure-light: figures in the light theme from desk mode too
  std::string size;               // --size WxH; empty: the monitor's work area
  bool quick = false;             // --quick: every lesson starts with its quick parameters
  std::string widget_rects_path;  // --widget-rects FILE: where named widgets are on screen, for tests
};

// Parses `args` (without the program name) and runs the subcommand. Returns the process exit code.
// When no subcommand is given, sets `wants_gui` and fills `gui` instead.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool& wants_gui,
            GuiRequest& gui);

}  // namespace dlsys
