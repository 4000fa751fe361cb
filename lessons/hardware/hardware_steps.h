#pragma once
// What the hardware steps draw before (and beside) a run: this machine's caches and which level a working set of the
// chosen size fits in; the course's table of GPU numbers beside what each figure really counts; the links as bars
// on one basis (GB/s per direction); and what the hierarchy means for the other lessons.
#include <memory>
#include <string>
#include <vector>

#include "lessons/common/step_data.h"
#include "lessons/hardware/hardware_levels.h"
#include "lessons/hardware/hardware_params.h"
#include "lessons/hardware/hardware_values.h"

namespace dlsys::hardware {

// One line of the course's table and what to make of it.
struct CourseFigure {
  std::string what;        // "NVLink 5.0 (B200)"
  std::string course;      // as the course prints it
  std::string reference;   // the published figure, with its basis
  std::string correction;  // what is wrong or missing, in plain words ("" when the figure stands)
};

// One link, its published figure per direction (the basis every bar shares), and how the course quoted it.
struct LinkFigure {
  std::string name;
  double gbps_per_direction = 0;
  std::string basis;      // "per GPU, each direction" ...
  std::string course;     // the course's figure, "" when it gives none
  bool in_chart = false;  // one of the few drawn as bars (the rest are in the table under them)
};

// What the hierarchy explains in another lesson.
struct Consequence {
  std::string lesson;  // the lesson's id
  std::string claim;
  std::string numbers;  // the closed form behind it
};

struct HardwareSteps final : StepData {
  HardwareParams params;
  HardwareTheory theory;
  std::vector<CpuCache> caches;  // this machine's, read when the steps were made
  std::vector<Tier> tiers;
  std::string working_set_level;  // the level params.working_set fits in, by size
  std::vector<CourseFigure> course_table;
  std::vector<LinkFigure> links;  // datasheet links; the views add the run's measured memory bars
  std::vector<Consequence> consequences;
};

std::vector<CourseFigure> course_table();
std::vector<LinkFigure> link_figures();
std::vector<Consequence> consequences(const HardwareTheory& theory);
std::shared_ptr<const HardwareSteps> make_steps(const HardwareParams& params, const HardwareTheory& theory);

}  // namespace dlsys::hardware
