#pragma once
// The matmul lesson's parameters as read once from the checked values (the specs are in matmul_lesson.cpp).
#include <string>
#include <string_view>
#include <vector>

#include "kernels/matmul/tile_math.h"

namespace dlsys::matmul {

// Which kernels run: every one, or the one whose key is the choice's name (a CPU variant, or on a GPU the rung).
enum class Impl { All, Naive, Tiled, Blas };
inline const std::vector<std::string> kImplChoices{"all", "naive", "tiled", "blas"};

struct MatmulParams {
  Shape shape;                // the chosen m x n x k
  std::vector<double> sizes;  // the sweep's n of n x n x n
  Impl impl = Impl::All;
  int repeats = 0;
  int threads = 0;
  double max_minutes = 0;  // the run's limit

  // Whether the kernel named `key` runs.
  bool selects(std::string_view key) const {
    return impl == Impl::All || key == kImplChoices[static_cast<std::size_t>(impl)];
  }
};

}  // namespace dlsys::matmul
