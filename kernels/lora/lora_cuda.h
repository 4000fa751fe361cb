#pragma once
// The LoRA layer's inference on GPU 0, for code that never includes a CUDA header: the adapter path y = W x + s B (A x)
// beside the merged weight's W' x, on cuBLAS (fp32, no TF32). Without the CUDA library the call
// (cuda/lora_cuda_calls.cpp) throws RunFailure saying why.
#include <functional>
#include <vector>

#include "engine/measure.h"
#include "kernels/lora/lora.h"

namespace dlsys::lora::cuda {

struct GpuForwardTiming {
  TimingStats adapter, merged;
  std::vector<float> adapter_output, merged_output;  // (d, n) each, from the last timed call of each path
};

// Uploads the layer once; then times the adapter path (three sgemm: y = W x, h = A x, y += s B h, the last adding
// into y through beta = 1, as the CPU's) against W' x in alternation (measure_pair), each call with CUDA events on the
// default stream, and brings both outputs back.
GpuForwardTiming time_forward_gpu(const InferenceLayer& layer, const MeasureOptions& options,
                                  const std::function<void()>& between);

}  // namespace dlsys::lora::cuda
