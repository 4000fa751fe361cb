#pragma once
// One plan's costs, for the planner (planner.h): memory per GPU, the traffic of each dimension and the link class it
// crosses, the bubble and the step time, for a choice already checked. planner.cpp checks, lists and compares plans.
#include <cstdint>

#include "kernels/mesh/planner.h"

namespace dlsys::mesh {

// Whether the choice's tensor-parallel groups stay inside a node, or the workload allows them across.
bool tp_allowed(const PlannerInput& in, const PlanChoice& c);
// Model states and activations per GPU, with b sequences per micro-batch, the first stage's layers and its
// micro-batches in flight.
MemoryPerGpu memory_per_gpu(const PlannerInput& in, const PlanChoice& c, std::int64_t micro_batch,
                            std::int64_t layers_per_stage, int in_flight);
// Everything about one plan but whether it is on the frontier.
Plan cost_plan(const PlannerInput& in, const PlanChoice& c);

}  // namespace dlsys::mesh
