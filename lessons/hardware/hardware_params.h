#pragma once
#include <cstdint>

namespace dlsys::hardware {

// Read once from the checked values (HardwareLesson::read_params).
struct HardwareParams {
  std::int64_t min_bytes = 0, max_bytes = 0;  // the sweep's smallest and largest working set
  int points_per_octave = 1;                  // working sets per doubling
  std::int64_t chase_steps = 0;               // dependent loads per timed call of the chase
  std::int64_t working_set = 0;               // the one the staircase step asks about
  std::int64_t stream_bytes = 0;              // each of STREAM's three arrays (the roofline lesson's measurement)
  int threads = 1;                            // "all threads": this many, one contiguous part each
  int repeats = 1;
  double max_minutes = 0;
};

}  // namespace dlsys::hardware
