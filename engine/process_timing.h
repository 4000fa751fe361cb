#pragma once
// Timing ranks that are processes (`launcher=mpi`): every sample starts after a barrier and counts the slowest rank,
// so a collective is done only when its last rank is, and every rank holds the same sample (so no rank decides alone
// how many more to take). Collective (engine/mpi_world.h): every rank calls these in the same order.
#include <functional>
#include <string>

#include "engine/measure.h"

namespace dlsys {

// After a barrier, `sample_us` on this rank (what it returns: the microseconds it took); the slowest rank's.
double slowest_rank_us(const std::function<double()>& sample_us);

// A timer for measure() and measure_pair() (engine/measure.h) that times each call so, with a stopwatch.
CallTimer slowest_rank_timer(std::string name = "steady_clock, slowest rank");

}  // namespace dlsys
