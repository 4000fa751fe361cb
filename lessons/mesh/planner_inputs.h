#pragma once
// What the 3-D parallelism planner (kernels/mesh/planner.h) is given, from the lab's own tables: a model from a preset
// or a config.json (the KV-cache lesson's reader and exact parameter count, as the ZeRO calculator uses them) and a
// cluster from the datasheet GPUs (lessons/kvcache/gpu_specs.h) with the links of the hardware lesson's table
// (kernels/hardware/hardware_math.h).
#include <string>
#include <vector>

#include "kernels/mesh/planner.h"

namespace dlsys::mesh {

// The model named by a preset (assets/models/<name>.json) or, when `config_path` is not empty, a config.json. Throws
// BadInput for an unknown preset, a malformed file or one that lacks what the parameter count needs.
PlannerModel planner_model(const std::string& preset, const std::string& config_path = "");

// Clusters of whole nodes: "dgx-h100", "dgx-a100", "pcie-rtx4090".
std::vector<std::string> cluster_preset_names();
// `nodes` nodes of the preset. Throws BadInput listing the presets for an unknown name, or for nodes below 1.
Cluster cluster_preset(const std::string& name, int nodes);

// Latency per message step, assumed rather than from a datasheet: a few microseconds is the order NCCL's own cost
// model charges per ring step (its src/graph/tuning.cc); the allreduce lesson fits alpha on this machine.
inline constexpr double kAssumedIntraNodeLatencyUs = 3;
inline constexpr double kAssumedInterNodeLatencyUs = 5;

}  // namespace dlsys::mesh
