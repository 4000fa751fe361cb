#pragma once
// The course's worked example (T8, two tiles of one row) run two ways: the one-row online softmax in double, and the
// tiled kernel itself (v2_flash<double> with its trace hook). The text report prints the state after each tile.
#include <string>

#include "kernels/attention/tile_math.h"
#include "lessons/flash/flash_values.h"

namespace dlsys {

flash::FlashWorkedExample run_flash_worked_example(attention::LoopOrder order);
std::string format_flash_worked_example(const flash::FlashWorkedExample& example);

}  // namespace dlsys
