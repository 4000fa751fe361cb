#pragma once
// The course's worked example (T8, two tiles of one row) run two ways: the one-row online softmax in double, and the
// tiled kernel itself (v2_flash<double> with its trace hook). Both land in the run's measured values as flat keys
// (example_tile1_m, ..., example_kernel_o_0, ...) and the text report prints the state after each tile.
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/attention/tile_math.h"

namespace dlsys {

nlohmann::ordered_json run_flash_worked_example(attention::LoopOrder order);
std::string format_flash_worked_example(const nlohmann::ordered_json& measured);

}  // namespace dlsys
