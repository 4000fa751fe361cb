#pragma once
// Marks functions that both compilers build: plain host functions for g++, host and device functions for nvcc.
// Tile math written once this way is tested on the CPU and used unchanged inside CUDA kernels.
#if defined(__CUDACC__)
#define DLSYS_HOST_DEVICE __host__ __device__
#else
#define DLSYS_HOST_DEVICE
#endif
