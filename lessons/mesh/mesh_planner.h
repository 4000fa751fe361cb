#pragma once
// The mesh lesson's use of the 3-D parallelism planner (kernels/mesh/planner.h): a real model on a GPU cluster, planned
// whole (every mesh, ZeRO stage, micro-batch count and checkpointing choice), and the lesson's own small stack on this
// machine's rank threads, costed in the planner's terms for the mesh the run trains, so the run can be set beside
// the planner's prediction.
#include <string>

#include "kernels/mesh/mesh_trainer.h"
#include "kernels/mesh/planner.h"
#include "lessons/mesh/mesh_params.h"
#include "lessons/mesh/mesh_values.h"

namespace dlsys::mesh_lesson {

// The parameters' model (a preset, or config.json) on their cluster, at their global batch and sequence length,
// trained with mixed-precision Adam (16 B a parameter). Throws BadInput naming the parameter.
mesh::PlannerInput planner_input(const MeshParams& params);

// The rank threads' link from the run's probe (mesh::MeshCostProbe): alpha and beta fitted to its two all-reduces (an
// activation over the tp group, a layer's gradient shard over the dp group); beta alone (alpha 0) where only one group
// has more than one rank. Where the fit finds no beta (the larger message was as fast), beta is kRankLink's and alpha
// what is left of the probed times; with neither group, kRankLink. `probed`: both from the probe.
struct ProbedLink {
  mesh::Link link;
  bool probed = false;
};
ProbedLink probed_link(const MeshParams& params, const mesh::MeshCostProbe& probe);
// The run's own mesh, pipeline outermost as the run numbers its ranks.
mesh::PlanChoice run_choice(const MeshParams& params);

// The planner's result in a few words and numbers, for the theory's JSON and the report.
PlannerTheory planner_summary(const mesh::PlannerResult& result);

// What the planner predicts for the run, per GPU (rank) and step. The model is the lesson's stack in the planner's
// terms: one MLP block a layer (one tp all-reduce each way), fp32 weights, gradients and activations, plain SGD (8 B a
// parameter), one dp bucket a layer of a stage. The "cluster" is the run's ranks on one node of this machine as the
// probe measured them: each rank computes at the rate its layer's forward and backward ran, over probed_link.
RunPrediction predict_run(const MeshParams& params, const mesh::MeshCostProbe& probe, int hardware_threads);

// What the prediction was made from, in a sentence for the screen and the report: the probe's measured inputs, or,
// for a run recorded before the probe, the assumed ones.
std::string prediction_inputs_text(const RunPrediction& prediction, int ranks);

// The course's worked check: 7B parameters at 16 B each on t = p = d = 2 with ZeRO-1 keep 4 Psi / 4 + 12 Psi / 8 =
// 7.0 + 10.5 GB of model states per GPU, activations aside.
double seven_b_zero1_states_bytes();

// The rank threads' link where the run has no collective to probe it by (tp = dp = 1: only the pipeline's messages):
// a copy through shared memory and a handshake, assumed.
inline constexpr mesh::Link kRankLink{.bandwidth_gbps = 5, .latency_us = 10};

}  // namespace dlsys::mesh_lesson
