#pragma once
// What the mesh lesson's steps draw before a run: the closed forms, which hold every rank's coordinates and costs.
#include <memory>
#include <string>

#include "engine/run_result.h"
#include "kernels/mesh/planner.h"
#include "lessons/common/step_data.h"
#include "lessons/mesh/mesh_params.h"
#include "lessons/mesh/mesh_values.h"

namespace dlsys::mesh_lesson {

struct MeshSteps final : StepData {
  MeshTheory theory;
  Timeline simulated;           // simulated_timeline(): what the timeline step shows before a run
  mesh::PlannerResult planner;  // every plan for the parameters' model and cluster
};

// The closed forms of a run with these parameters (the parameters already checked), and the planner's summary: of
// `planned` where the caller has planned already, else planned here.
MeshTheory mesh_theory(const MeshParams& params, const mesh::PlannerResult* planned = nullptr);

// Every rank's step simulated in cost units, before a run: stage p's 1F1B ops (F 1, a full backward 2) on each rank
// of stage p, then its dp buckets (1/2 each) and the optimizer (1/4). The measured timeline has the same lanes.
Timeline simulated_timeline(const MeshParams& params);
// "rank 3 (1,1,0)": a lane's name, the rank and its (d, t, p).
std::string lane_name(int rank, int d, int t, int p);

// The check's bound: fp32 sums reordered by the split (micro-batches, tp partial sums, the dp ring) move a weight's
// update by a few units in the last place of the largest; 1e-4 of the largest update leaves room for that and
// catches a gradient that is missing or counted twice (an error of order 1). On --backend cuda the same bound holds:
// cuBLAS's sgemm without TF32 rounds every product and sum to fp32 as OpenBLAS does, only in another order, which is
// the reordering this bound already allows for (the CPU's quick run lands near 1e-6, two orders below it).
inline constexpr double kUpdateTolerance = 1e-4;

}  // namespace dlsys::mesh_lesson
