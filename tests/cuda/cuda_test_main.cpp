// Runs the CUDA suites only where a device answers; otherwise prints why and exits 77 (CTest: Skipped).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "engine/backend.h"

int main(int argc, char** argv) {
  const dlsys::CudaStatus& cuda = dlsys::cuda_status();
  if (!cuda.available) {
    std::cout << "SKIP: CUDA tests compiled but not run: " << cuda.reason << "\n";
    return 77;
  }
  std::cout << "CUDA device: " << cuda.device.name << "\n";
  doctest::Context context(argc, argv);
  return context.run();
}
