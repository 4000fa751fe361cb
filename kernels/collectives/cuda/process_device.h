#pragma once
// The GPU of a rank that is a process: local rank mod the devices this process sees, made current, with the words
// the run's report uses for it. For .cu files.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <string>

#include "engine/errors.h"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::collectives::cuda {

struct ProcessDevice {
  int device = 0;
  std::string description;  // "<name> (device d of n on rank 0's host)"
};

inline ProcessDevice use_process_device(int rank, int local_rank) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    throw RunFailure(fmt::format("rank {}: no CUDA device answers in this process", rank));
  }
  ProcessDevice out;
  out.device = local_rank % devices;
  DLSYS_CUDA_CHECK(cudaSetDevice(out.device));
  cudaDeviceProp prop{};
  DLSYS_CUDA_CHECK(cudaGetDeviceProperties(&prop, out.device));
  out.description = fmt::format("{} (device {} of {} on rank 0's host)", prop.name, out.device, devices);
  return out;
}

}  // namespace dlsys::collectives::cuda
