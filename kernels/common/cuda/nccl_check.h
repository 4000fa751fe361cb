#pragma once
// NCCL's header and a check for its calls, when the build has NCCL (DLSYS_HAVE_NCCL): a failure becomes RunFailure
// with the call, the place and NCCL's own message, as DLSYS_CUDA_CHECK does for CUDA.
#if DLSYS_HAVE_NCCL
#include <nccl.h>

#include "kernels/common/cuda/cuda_check.h"

#define DLSYS_NCCL_CHECK(call)                                                                               \
  do {                                                                                                       \
    const ncclResult_t status_ = (call);                                                                     \
    if (status_ != ncclSuccess) ::dlsys::cuda::fail(#call, ncclGetErrorString(status_), __FILE__, __LINE__); \
  } while (0)
#endif
