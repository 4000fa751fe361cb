#pragma once
// The "threads" parameter the CPU lessons share: 1 to 256, this machine's hardware threads by default.
#include <string>

#include "engine/params.h"

namespace dlsys {

// `help` says what the threads run in this lesson ("for every CPU variant alike").
ParamSpec cpu_threads_param(const std::string& help);

}  // namespace dlsys
