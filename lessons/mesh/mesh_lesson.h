#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/mesh/mesh_params.h"
#include "lessons/mesh/mesh_planner.h"
#include "lessons/mesh/mesh_steps.h"
#include "lessons/mesh/mesh_values.h"

namespace dlsys {

// Lesson `mesh` (N-D parallelism): data x tensor x pipeline parallelism together. A residual MLP stack trained for
// real on dp x tp x pp CPU rank threads (1F1B over micro-batches between stages, Megatron's MLP shards with a tp
// all-reduce per layer, the dp ring over each layer's gradient shard): the mesh and its groups, every rank's measured
// timeline, bytes per group and memory per rank against their closed forms, and the weights against one device's.
// With --backend cuda the ranks' GEMMs run on cuBLAS, on a GPU per rank where there is one for every rank, else
// all on GPU 0 (mesh_run.cpp).
class MeshLesson final : public TypedLesson<mesh_lesson::MeshParams, mesh_lesson::MeshTheory, mesh_lesson::MeshMeasured,
                                            mesh_lesson::MeshSteps> {
 public:
  std::string id() const override { return "mesh"; }
  std::string chapter() const override { return "Distributed training"; }
  std::vector<std::string> quick_params() const override { return {"hidden=128", "batch=64", "steps=4"}; }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
  // On --backend cuda every rank's block products run on cuBLAS (a GPU per rank, or all on GPU 0, emulated); the
  // rank threads, the all-reduces, the pipeline's messages, the optimizer and the planner stay on the CPU.
  bool runs_on_cuda() const override { return true; }
  bool has_timeline() const override { return true; }
  std::vector<Timeline> theory_timelines(const ParamValues& values) const override;
};

}  // namespace dlsys
