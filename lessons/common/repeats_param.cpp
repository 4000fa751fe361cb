#include "lessons/common/repeats_param.h"

namespace dlsys {

ParamSpec repeats_param(const std::string& help) {
  return {.key = "repeats",
          .label = "timed repeats",
          .type = ParamType::Integer,
          .default_text = "5",
          .min = 1,
          .max = 100,
          .help = help};
}

}  // namespace dlsys
