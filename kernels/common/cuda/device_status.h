#pragma once
// Inside the CUDA library: what cuda_status() reports to the program, from the runtime itself. Asked once, then
// cached (device_status.cpp). Code in the library asks this, not cuda_status(), which is the program's way in.
#include "engine/backend.h"

namespace dlsys::cuda {

const CudaStatus& device_status();

}  // namespace dlsys::cuda
