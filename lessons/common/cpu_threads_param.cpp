#include "lessons/common/cpu_threads_param.h"

#include <algorithm>
#include <thread>

namespace dlsys {

ParamSpec cpu_threads_param(const std::string& help) {
  return {.key = "threads",
          .label = "CPU threads",
          .type = ParamType::Integer,
          .default_text = std::to_string(std::max(1u, std::thread::hardware_concurrency())),
          .min = 1,
          .max = 256,
          .help = help};
}

}  // namespace dlsys
