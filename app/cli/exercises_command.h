#pragma once
// `dlsys-lab exercises LESSON`: a lesson's exercises, and with --answer ID=VALUE the student's prediction beside the
// closed form's answer and, with --measure (a run here) or --run-file (a recorded run), this machine's number.
#include <ostream>
#include <string>
#include <vector>

namespace dlsys {

struct ExercisesOptions {
  std::string lesson;
  std::vector<std::string> sets;
  std::vector<std::string> answers;  // "ID=VALUE"
  bool measure = false;
  bool quick = false;
  std::string backend = "auto";
  std::string run_file;
};

int exercises_command(const ExercisesOptions& options, std::ostream& out);

}  // namespace dlsys
