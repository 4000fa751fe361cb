#pragma once
// The two places the LoRA lesson times its inference layer, with the same method: the adapter path against the merged
// weight, timed in alternation, and the outputs' check.
//   CpuLoraForward   OpenBLAS on one thread, steady_clock; checked by check_merged (the two CPU paths against each
//                    other).
//   CudaLoraForward  cuBLAS on GPU 0, CUDA events (lora_cuda.h); both GPU outputs checked against the CPU's adapter
//                    path (check_outputs), the worse of the two reported.
// The trainings run on the CPU whichever device times the inference.
#include <functional>

#include "engine/measure.h"
#include "kernels/lora/lora.h"
#include "kernels/lora/lora_cuda.h"

namespace dlsys::lora {

struct CpuLoraForward {
  static constexpr const char* kTimer = "steady_clock";
  static constexpr bool kOnGpu = false;
  static ForwardTiming time(const InferenceLayer& layer, const MeasureOptions& options,
                            const std::function<void()>& between) {
    return time_adapter_forward(layer, options, between);
  }
};

struct CudaLoraForward {
  static constexpr const char* kTimer = "cuda_event";
  static constexpr bool kOnGpu = true;
  static ForwardTiming time(const InferenceLayer& layer, const MeasureOptions& options,
                            const std::function<void()>& between) {
    const cuda::GpuForwardTiming gpu = cuda::time_forward_gpu(layer, options, between);
    return {gpu.adapter, gpu.merged, check_outputs(layer, {gpu.adapter_output.data(), gpu.merged_output.data()})};
  }
};

}  // namespace dlsys::lora
