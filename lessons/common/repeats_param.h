#pragma once
// The "repeats" parameter of the lessons that time calls: 1 to 100 timed calls, 5 by default.
#include <string>

#include "engine/params.h"

namespace dlsys {

// `help` says how this lesson uses the repeats ("timed calls per measurement, after one warm-up").
ParamSpec repeats_param(const std::string& help);

}  // namespace dlsys
