#pragma once
// `compare A.json B.json`: two recorded runs of one lesson side by side. The table (parameters, measured numbers with
// B / A, benchmark lines) comes from the lessons layer; the figure is the step drawn for both runs by the GUI's own
// offscreen renderer, which main() registers as it does for `shot`.
#include <iosfwd>
#include <string>

#include "engine/run_result.h"
#include "lessons/common/run_comparison.h"

namespace dlsys {

struct CompareOptions {
  std::string a_path;
  std::string b_path;
  int step = 1;
  std::string size = "1600x1200";  // points; taller than shot's, for the table under the figure
  double scale = 1.0;
  double text_scale = 0;
  bool presentation = false;
  std::string output_png;  // -o: the figure; empty: none
  std::string json_path;   // --json: the table, "-" for stdout; empty: none
};

// The figure as PNG bytes, and the line to print once it is written ("wrote F.png (1600x1200, step 4 of 5, ...)").
struct RenderedFigure {
  std::string png;
  std::string description;
};
using CompareRenderer = RenderedFigure (*)(const CompareOptions& options, const RunResult& a, const RunResult& b);
void set_compare_renderer(CompareRenderer renderer);

// Without -o and --json, the table is printed on stdout. Throws BadInput for files that cannot be compared.
int compare_command(const CompareOptions& options, std::ostream& out);

}  // namespace dlsys
