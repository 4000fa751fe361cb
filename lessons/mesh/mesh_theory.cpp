// The mesh lesson's closed forms, from the model's own (kernels/mesh/mesh_model.h), and its simulated timeline.
#include <fmt/format.h>

#include "kernels/pipeline/schedule.h"
#include "kernels/pipeline/simulate.h"
#include "lessons/mesh/mesh_planner.h"
#include "lessons/mesh/mesh_steps.h"

namespace dlsys::mesh_lesson {

std::string lane_name(int rank, int d, int t, int p) { return fmt::format("rank {} ({},{},{})", rank, d, t, p); }

MeshTheory mesh_theory(const MeshParams& p, const mesh::PlannerResult* planned) {
  const mesh::MeshModel model = p.mesh_model();
  MeshTheory t;
  t.dp = p.dp;
  t.tp = p.tp;
  t.pp = p.pp;
  t.ranks = p.dp * p.tp * p.pp;
  t.layers = p.layers;
  t.hidden = p.hidden;
  t.expansion = MeshParams::kExpansion;
  t.batch = p.batch;
  t.micro_batches = p.micro_batches;
  t.steps = p.steps;
  t.layers_per_stage = model.layers_per_stage();
  t.rows_per_micro_batch = model.rows_per_micro_batch();
  t.inner_per_rank = model.inner_per_rank();
  t.activation_bytes = 4 * std::int64_t(t.rows_per_micro_batch) * p.hidden;
  t.shard_gradient_bytes = 4 * model.shard_elements();
  t.tp_ring_factor = 2.0 * (p.tp - 1) / p.tp;
  t.dp_ring_factor = 2.0 * (p.dp - 1) / p.dp;
  t.bubble_fraction = double(p.pp - 1) / double(p.micro_batches + p.pp - 1);
  t.update_tolerance = kUpdateTolerance;
  t.planner = planner_summary(planned ? *planned : mesh::plan_all(planner_input(p)));
  t.seven_b_zero1_bytes = seven_b_zero1_states_bytes();
  for (int r = 0; r < t.ranks; ++r) {
    const mesh::MeshCoord c = mesh::coord_of(model.mesh, r);
    const mesh::RankCosts k = mesh::rank_costs(model, c);
    RankTheory rt{.rank = r,
                  .d = c.d,
                  .t = c.t,
                  .p = c.p,
                  .tp_all_reduces = k.tp_all_reduces,
                  .tp_bytes = k.tp_bytes,
                  .dp_buckets = k.dp_buckets,
                  .dp_bytes = k.dp_bytes,
                  .pp_messages = k.pp_messages,
                  .pp_bytes = k.pp_bytes,
                  .weight_bytes = k.weight_bytes,
                  .gradient_bytes = k.gradient_bytes,
                  .in_flight = k.micro_batches_in_flight,
                  .stash_bytes = k.stash_bytes,
                  .activation_bytes = k.activation_bytes,
                  .scratch_bytes = k.scratch_bytes,
                  .total_bytes = k.weight_bytes + k.gradient_bytes + k.activation_bytes + k.scratch_bytes};
    // Group 0 of each kind: the tp group of replica 0, stage 0; the dp group of tp rank 0, stage 0.
    if (c.d == 0 && c.p == 0) t.tp_group_bytes += rt.tp_bytes;
    if (c.t == 0 && c.p == 0) t.dp_group_bytes += rt.dp_bytes;
    t.pp_bytes += rt.pp_bytes;
    t.rank_costs.push_back(rt);
  }
  return t;
}

Timeline simulated_timeline(const MeshParams& p) {
  const pipeline::Schedule schedule = pipeline::make_schedule(
      {.kind = pipeline::ScheduleKind::OneFOneB, .devices = p.pp, .micro_batches = p.micro_batches});
  const pipeline::Timing timing = pipeline::simulate(schedule, pipeline::OpCosts{.f = 1, .b = 1, .w = 1});
  const mesh::MeshShape shape{p.dp, p.tp, p.pp};
  const int layers_per_stage = p.layers / p.pp;
  Timeline tl{.name = "every rank's step (theory: F 1, B 2, a dp bucket 1/2, SGD 1/4)",
              .source = "theory",
              .mode = "simulated",
              .time_unit = "cost units",
              .lanes = {},
              .spans = {}};
  for (int r = 0; r < shape.ranks(); ++r) {
    const mesh::MeshCoord c = mesh::coord_of(shape, r);
    tl.lanes.push_back(lane_name(r, c.d, c.t, c.p));
    double end = 0;
    for (const pipeline::TimedOp& op : timing.device_ops[std::size_t(c.p)]) {
      const bool forward = op.op.kind == pipeline::OpKind::F;
      tl.spans.push_back({.lane = r,
                          .start = op.start,
                          .end = op.end,
                          .kind = forward ? "F" : "B",
                          .micro_batch = op.op.micro_batch,
                          .label = fmt::format("{}{}", forward ? 'F' : 'B', op.op.micro_batch)});
      end = op.end;
    }
    // After its last backward, a rank all-reduces its buckets over its dp group, then steps.
    for (int k = 0; k < layers_per_stage && p.dp > 1; ++k, end += 0.5)
      tl.spans.push_back({.lane = r, .start = end, .end = end + 0.5, .kind = "dp_all_reduce", .label = "dp"});
    tl.spans.push_back({.lane = r, .start = end, .end = end + 0.25, .kind = "optimizer", .label = "SGD"});
  }
  return tl;
}

}  // namespace dlsys::mesh_lesson
