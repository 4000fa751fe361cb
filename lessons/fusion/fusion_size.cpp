#include "lessons/fusion/fusion_size.h"

#include "lessons/roofline/last_level_cache.h"

namespace dlsys::fusion {

bool arrays_fit_in_cache(double array_bytes) {
  const double llc = last_level_cache_bytes();
  return llc > 0 && 3 * array_bytes <= llc;
}

std::int64_t default_side() {
  std::int64_t side = kCourseSide;
  while (side < kLargestDefaultSide && arrays_fit_in_cache(4.0 * double(side) * double(side))) side *= 2;
  return side;
}

}  // namespace dlsys::fusion
