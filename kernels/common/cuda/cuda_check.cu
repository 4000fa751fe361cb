#include <fmt/format.h>

#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::cuda {

void fail(const char* what, const std::string& why, const char* file, int line) {
  cudaGetLastError();  // clear a sticky launch error so the app stays usable
  throw RunFailure(fmt::format("{} failed: {} ({}:{})", what, why, file, line));
}

}  // namespace dlsys::cuda
