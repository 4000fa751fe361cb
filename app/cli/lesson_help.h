#pragma once
// `dlsys-lab run LESSON --help`: the lesson's parameters with what each allows, its default and unit, the same facts
// the GUI's parameter panel shows, so nobody has to provoke an error to learn them.
#include <string>

#include "lessons/common/lesson.h"

namespace dlsys {

std::string lesson_params_help(const Lesson& lesson);

}  // namespace dlsys
