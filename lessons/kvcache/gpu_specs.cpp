#include "lessons/kvcache/gpu_specs.h"

#include <fmt/format.h>

#include "engine/errors.h"

namespace dlsys::kvcache {

const std::vector<GpuSpec>& gpu_specs() {
  // Dense peaks: NVIDIA's Hopper datasheets print the BF16 figure with 2:4 sparsity (1,979 TFLOPS) and mark it so;
  // the dense rate is half. The A100 datasheet prints the dense 312 TFLOPS beside the sparse 624. The RTX 4090's
  // dense FP16 rate with FP32 accumulation (what training and inference frameworks use) is in the Ada whitepaper.
  static const std::vector<GpuSpec> specs = {
      {"h100-sxm", "H100 SXM", 80, 989.5, 3.35,
       "NVIDIA H100 Tensor Core GPU datasheet: 80 GB HBM3, 3.35 TB/s, BF16 1,979 TFLOPS with sparsity, half of it "
       "dense"},
      {"h200", "H200 SXM", 141, 989.5, 4.8,
       "NVIDIA H200 Tensor Core GPU datasheet: 141 GB HBM3e, 4.8 TB/s, BF16 1,979 TFLOPS with sparsity, half of it "
       "dense"},
      {"a100-80gb", "A100 80GB SXM", 80, 312, 2.039,
       "NVIDIA A100 Tensor Core GPU datasheet: 80 GB HBM2e, 2,039 GB/s, BF16 312 TFLOPS dense"},
      {"a100-40gb", "A100 40GB", 40, 312, 1.555,
       "NVIDIA A100 Tensor Core GPU datasheet: 40 GB HBM2, 1,555 GB/s, BF16 312 TFLOPS dense"},
      {"rtx-4090", "GeForce RTX 4090", 24, 165.2, 1.008,
       "NVIDIA Ada Lovelace architecture whitepaper: 24 GB GDDR6X, 1,008 GB/s, FP16 with FP32 accumulation 165.2 "
       "TFLOPS dense"},
  };
  return specs;
}

std::vector<std::string> gpu_choice_names() {
  std::vector<std::string> names;
  for (const GpuSpec& spec : gpu_specs()) names.push_back(spec.id);
  names.emplace_back(kThisMachine);
  return names;
}

const GpuSpec* find_gpu_spec(const std::string& id) {
  for (const GpuSpec& spec : gpu_specs())
    if (spec.id == id) return &spec;
  if (id == kThisMachine) return nullptr;
  std::string known;
  for (const std::string& name : gpu_choice_names()) known += (known.empty() ? "" : ", ") + name;
  throw BadInput(fmt::format("parameter 'gpu': unknown GPU '{}'; allowed: {}", id, known));
}

}  // namespace dlsys::kvcache
