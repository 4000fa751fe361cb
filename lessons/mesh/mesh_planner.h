#pragma once
// The mesh lesson's use of the 3-D parallelism planner (kernels/mesh/planner.h): a real model on a GPU cluster, planned
// whole (every mesh, ZeRO stage, micro-batch count and checkpointing choice), and the lesson's own small stack on this
// machine's rank threads, costed in the planner's terms for the mesh the run trains, so the run can be set beside
// the planner's prediction.
#include "kernels/mesh/planner.h"
#include "lessons/mesh/mesh_params.h"
#include "lessons/mesh/mesh_values.h"

namespace dlsys::mesh_lesson {

// The parameters' model (a preset, or config.json) on their cluster, at their global batch and sequence length,
// trained with mixed-precision Adam (16 B a parameter). Throws BadInput naming the parameter.
mesh::PlannerInput planner_input(const MeshParams& params);

// The lesson's stack in the planner's terms: one MLP block a layer (one tp all-reduce each way), fp32 weights,
// gradients and activations, plain SGD (8 B a parameter), one dp bucket a layer of a stage; the "cluster" is the run's
// ranks on one node of this machine, each with its share of the cores (`hardware_threads`) at the lab's OpenBLAS
// rate, and links at kRankLink. The choice is the run's own mesh, pipeline outermost as the run numbers its ranks.
mesh::PlannerInput stack_input(const MeshParams& params, int hardware_threads);
mesh::PlanChoice run_choice(const MeshParams& params);

// The planner's result in a few words and numbers, for the theory's JSON and the report.
PlannerTheory planner_summary(const mesh::PlannerResult& result);

// What the planner predicts for the run, per GPU (rank) and step.
RunPrediction predict_run(const MeshParams& params, int hardware_threads);

// The course's worked check: 7B parameters at 16 B each on t = p = d = 2 with ZeRO-1 keep 4 Psi / 4 + 12 Psi / 8 =
// 7.0 + 10.5 GB of model states per GPU, activations aside.
double seven_b_zero1_states_bytes();

// The rank threads' links as the planner's alpha-beta model sees them: a copy through shared memory and a handshake.
inline constexpr mesh::Link kRankLink{.bandwidth_gbps = 5, .latency_us = 10};

}  // namespace dlsys::mesh_lesson
