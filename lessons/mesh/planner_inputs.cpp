// The planner's model and cluster from the lab's tables (see planner_inputs.h).
#include "lessons/mesh/planner_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include "engine/errors.h"
#include "kernels/hardware/hardware_math.h"
#include "lessons/kvcache/gpu_specs.h"
#include "lessons/kvcache/model_config.h"
#include "lessons/kvcache/parameter_count.h"

namespace dlsys::mesh {

namespace {

struct NodeKind {
  const char* name;
  const char* gpu;  // a kvcache::gpu_specs() id
  int gpus_per_node;
  double intra_gbps, inter_gbps;  // per GPU, per direction
  const char* links;
};

const std::vector<NodeKind>& node_kinds() {
  using namespace hardware;
  static const std::vector<NodeKind> kinds = {
      {"dgx-h100", "h100-sxm", kGpusPerDgx, kNvlink4Gbps, gbit_to_gbyte(kInfinibandNdrGbit),
       "NVLink 4, 450 GB/s per direction per GPU (18 links x 25 GB/s); one InfiniBand NDR 400 Gb/s port per GPU, "
       "50 GB/s (NVIDIA DGX H100 datasheet)"},
      {"dgx-a100", "a100-80gb", kGpusPerDgx, kNvlink3Gbps, gbit_to_gbyte(kInfinibandHdrGbit),
       "NVLink 3, 300 GB/s per direction per GPU (12 links x 25 GB/s); one InfiniBand HDR 200 Gb/s port per GPU, "
       "25 GB/s (NVIDIA DGX A100 datasheet)"},
      {"pcie-rtx4090", "rtx-4090", kGpusPerDgx, kPcieGen4x16Gbps, gbit_to_gbyte(kEthernet100Gbit),
       "no NVLink: PCIe Gen4 x16, 32 GB/s per direction; one 100 Gb/s Ethernet port per GPU, 12.5 GB/s"},
  };
  return kinds;
}

}  // namespace

PlannerModel planner_model(const std::string& preset, const std::string& config_path) {
  const kvcache::ModelConfig config =
      config_path.empty() ? kvcache::load_preset(preset) : kvcache::load_model_config_file(config_path);
  PlannerModel model;
  model.name = config.name;
  model.parameters = double(kvcache::parameter_count(config));  // throws BadInput naming what the file lacks
  const std::optional<kvcache::ParameterCount> count = kvcache::count_parameters(config);
  if (config.experts.any() && count && count->active_known) model.active_parameters = double(count->active);
  model.layers = config.layers;
  model.hidden = config.hidden;
  model.heads = config.heads;
  if (model.hidden <= 0)
    throw BadInput(fmt::format("config '{}': key 'hidden_size' is needed to size activations", config.name));
  model.source = fmt::format("{} {}: {} parameters, counted from its shape{}",
                             config_path.empty() ? "preset" : "config", config.name, kvcache::parameter_count(config),
                             config.source.empty() ? "" : fmt::format(" ({})", config.source));
  return model;
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const NodeKind& kind : node_kinds()) names.emplace_back(kind.name);
  return names;
}

Cluster cluster_preset(const std::string& name, int nodes) {
  if (nodes < 1) throw BadInput(fmt::format("cluster nodes: {} is not allowed; allowed: at least 1", nodes));
  for (const NodeKind& kind : node_kinds()) {
    if (name != kind.name) continue;
    const kvcache::GpuSpec* gpu = kvcache::find_gpu_spec(kind.gpu);
    Cluster c;
    c.name = fmt::format("{} x {} nodes", kind.name, nodes);
    c.gpus_per_node = kind.gpus_per_node;
    c.gpus = nodes * kind.gpus_per_node;
    c.gpu_memory_bytes = gpu->memory_gb * 1e9;
    c.peak_tflops = gpu->peak_tflops;
    c.intra_node = {kind.intra_gbps, kAssumedIntraNodeLatencyUs};
    c.inter_node = {kind.inter_gbps, kAssumedInterNodeLatencyUs};
    c.source = fmt::format("{}: {}; {}; latencies assumed ({} us inside a node, {} us across)", gpu->name, gpu->source,
                           kind.links, kAssumedIntraNodeLatencyUs, kAssumedInterNodeLatencyUs);
    return c;
  }
  throw BadInput(
      fmt::format("cluster '{}' is not a preset; allowed: {}", name, fmt::join(cluster_preset_names(), ", ")));
}

}  // namespace dlsys::mesh
