#pragma once
// GPUs the sizing can be set against, with their datasheet memory, 16-bit tensor-core peak and memory bandwidth.
// The peak over the bandwidth is the ridge point of the roofline (Williams, Waterman and Patterson, "Roofline", CACM
// 2009): a kernel doing fewer FLOPs per byte it moves is limited by memory, more by arithmetic.
#include <string>
#include <vector>

namespace dlsys::kvcache {

struct GpuSpec {
  std::string id;             // the value of the `gpu` parameter: "h100-sxm"
  std::string name;           // "H100 SXM"
  double memory_gb = 0;       // as sold, GB = 1e9 bytes
  double peak_tflops = 0;     // dense BF16/FP16 on tensor cores, FP32 accumulation
  double bandwidth_tbps = 0;  // memory bandwidth, TB/s = 1e12 bytes per second
  std::string source;         // the datasheet the three figures come from
  double ridge_flop_per_byte() const { return peak_tflops / bandwidth_tbps; }
};

// The datasheet GPUs, in the order the parameter lists them.
const std::vector<GpuSpec>& gpu_specs();
// The `gpu` parameter's choices: the datasheet GPUs, then kThisMachine.
std::vector<std::string> gpu_choice_names();
inline constexpr const char* kThisMachine = "this-machine";
// The spec named `id`, or nullptr for kThisMachine. Throws BadInput naming the choices for anything else.
const GpuSpec* find_gpu_spec(const std::string& id);

}  // namespace dlsys::kvcache
