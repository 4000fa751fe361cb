// The mesh lesson's run: the stack trained on the mesh's rank threads and on one device, every rank's last step as a
// timeline, its bytes and ledger beside the closed forms, and the weights' updates compared. The ranks' block products
// run on the device the run picks once (products_for): OpenBLAS on the rank threads, or cuBLAS on GPUs with
// --backend cuda; everything else stays on the rank threads.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine/backend.h"
#include "engine/measure.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/mesh/mesh_gemms_cuda.h"
#include "kernels/mesh/mesh_trainer.h"
#include "lessons/common/run_plan.h"
#include "lessons/mesh/mesh_lesson.h"

namespace dlsys {

using mesh_lesson::MeshMeasured;
using mesh_lesson::MeshParams;
using mesh_lesson::MeshTheory;
using mesh_lesson::RankMeasured;

namespace {

// Each rank times its forward layer and its all-reduces this many times before the first step, for the planner's
// inputs: a median that one descheduled call does not move, at the cost of a few layers' work, little beside a step's.
constexpr int kProbeRepeats = 32;

// max |a - b| / max |b - start|: the mesh's updates against one device's (the weights themselves barely move, so
// comparing them would hide a wrong gradient under the starting values).
double update_max_rel_err(const std::vector<float>& start, const std::vector<float>& mesh,
                          const std::vector<float>& one) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < start.size(); ++i) {
    diff = std::max(diff, std::fabs(double(mesh[i]) - double(one[i])));
    scale = std::max(scale, std::fabs(double(one[i]) - double(start[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

RankMeasured measured_rank(const mesh::MeshRankReport& r) {
  return {.rank = r.rank,
          .d = r.coord.d,
          .t = r.coord.t,
          .p = r.coord.p,
          .tp_all_reduces = r.tp_all_reduces,
          .dp_buckets = r.dp_buckets,
          .pp_messages = r.pp_messages,
          .tp_bytes = r.tp_bytes,
          .dp_bytes = r.dp_bytes,
          .pp_bytes = r.pp_bytes,
          .compute_us = r.compute_us,
          .tp_us = r.tp_us,
          .dp_us = r.dp_us,
          .step_us = r.step_us,
          .weight_bytes = r.weight_bytes,
          .gradient_bytes = r.gradient_bytes,
          .peak_activation_bytes = r.peak_activation_bytes,
          .scratch_bytes = r.scratch_bytes,
          .peak_message_bytes = r.peak_message_bytes,
          .total_bytes = r.weight_bytes + r.gradient_bytes + r.peak_activation_bytes + r.scratch_bytes};
}

// Bytes and ledger of every rank against the closed forms; the group totals as theory counts them (group 0).
void compare_with_theory(const MeshTheory& t, MeshMeasured& m) {
  m.bytes_match = m.rank_runs.size() == t.rank_costs.size();
  m.memory_match = m.bytes_match;
  double comm_us = 0, step_us = 0;
  for (std::size_t i = 0; i < m.rank_runs.size() && i < t.rank_costs.size(); ++i) {
    const RankMeasured& r = m.rank_runs[i];
    const mesh_lesson::RankTheory& k = t.rank_costs[i];
    m.bytes_match = m.bytes_match && r.tp_bytes == k.tp_bytes && r.dp_bytes == k.dp_bytes && r.pp_bytes == k.pp_bytes &&
                    r.tp_all_reduces == k.tp_all_reduces && r.dp_buckets == k.dp_buckets &&
                    r.pp_messages == k.pp_messages;
    m.memory_match = m.memory_match && r.weight_bytes == k.weight_bytes && r.gradient_bytes == k.gradient_bytes &&
                     r.peak_activation_bytes == k.activation_bytes && r.scratch_bytes == k.scratch_bytes;
    if (r.d == 0 && r.p == 0) m.tp_group_bytes += r.tp_bytes;
    if (r.t == 0 && r.p == 0) m.dp_group_bytes += r.dp_bytes;
    m.pp_bytes += r.pp_bytes;
    m.busiest_tp_bytes = std::max(m.busiest_tp_bytes, r.tp_bytes);
    m.busiest_pp_bytes = std::max(m.busiest_pp_bytes, r.pp_bytes);
    m.busiest_dp_bytes = std::max(m.busiest_dp_bytes, r.dp_bytes);
    m.largest_weight_bytes = std::max(m.largest_weight_bytes, r.weight_bytes);
    comm_us += r.tp_us + r.dp_us;
    step_us += r.step_us;
  }
  m.comm_share = step_us > 0 ? comm_us / step_us : 0;
}

Timeline measured_timeline(const MeshTheory& t, const std::vector<mesh::MeshSpan>& spans) {
  Timeline tl{.name = fmt::format("every rank's last step, measured ({} x {} x {})", t.dp, t.tp, t.pp),
              .source = "measured",
              .mode = "concurrent",
              .time_unit = "us",
              .lanes = {},
              .spans = {}};
  for (const mesh_lesson::RankTheory& r : t.rank_costs)
    tl.lanes.push_back(mesh_lesson::lane_name(r.rank, r.d, r.t, r.p));
  for (const mesh::MeshSpan& s : spans)
    tl.spans.push_back({.lane = s.rank,
                        .start = s.start_us,
                        .end = s.end_us,
                        .kind = s.kind,
                        .micro_batch = s.micro_batch,
                        .label = s.label});
  return tl;
}

// The ranks' block products, picked once: none (OpenBLAS on each rank's thread) on the CPU; with --backend cuda,
// cuBLAS on a GPU of each rank's own where this machine has one for every rank, else on GPU 0 for all of them.
struct RankProducts {
  std::unique_ptr<mesh::RankGemms> gemms;
  int gpus = 0;  // 1: every rank on GPU 0; else rank r on GPU r
};
RankProducts products_for(BackendKind backend, const mesh::MeshModel& model) {
  if (backend != BackendKind::Cuda) return {};
  const int ranks = model.mesh.ranks();
  const int gpus = collectives::cuda::place_ranks(ranks).emulated ? 1 : ranks;
  return {mesh::cuda::make_gpu_rank_gemms(ranks, model.shard_elements(), model.largest_product_elements(), gpus), gpus};
}

std::vector<std::string> run_notes(const MeshTheory& t, int gpus) {
  const int hardware = describe_cpu().threads;
  std::vector<std::string> notes;
  if (gpus > 0) {
    const bool shared = gpus < t.ranks;
    notes.push_back(
        shared
            ? fmt::format("ranks emulated: the {} ranks share GPU 0; all-reduces between rank threads in host memory "
                          "(the lab's ring), pipeline messages real copies through a mailbox, not over NCCL",
                          t.ranks)
            : fmt::format("each of the {} ranks has a GPU of its own (rank r on GPU r) for its products; the ranks are "
                          "threads of one process, their all-reduces in host memory (the lab's ring) and pipeline "
                          "messages real copies through a mailbox, not over NCCL",
                          t.ranks));
    notes.push_back(fmt::format(
        "on {}: every product of each rank's MLP blocks (forward, input gradient, weight gradient), cuBLAS sgemm in "
        "fp32 (no TF32), each rank on its own stream; each rank's weight shard held there, uploaded at the start and "
        "again after each optimizer step; every other operand uploaded and each result downloaded in the same call. On "
        "the rank threads: the ReLU and its mask, the residual, the loss, the all-reduces, the messages, the SGD step "
        "and the memory ledger (host memory)",
        shared ? "GPU 0" : "each rank's GPU"));
    notes.push_back(shared ? "timed with steady_clock around each layer on its rank's thread, uploads and downloads "
                             "included: CUDA events on the shared default stream cannot bracket one rank's work alone "
                             "while the other rank threads use the GPU"
                           : "timed with steady_clock around each layer on its rank's thread, uploads and downloads "
                             "included, as on the CPU");
  } else {
    notes.push_back(
        "ranks are CPU threads of one process, one OpenBLAS thread each (as one GPU each); tp and dp all-reduces are "
        "the lab's ring through shared memory, pipeline messages real copies through a mailbox");
  }
  if (t.ranks > hardware)
    notes.push_back(fmt::format(
        "{} ranks time-share {} hardware threads: every rank's timeline includes waiting for a core, so its gaps are "
        "not all pipeline bubble",
        t.ranks, hardware));
  notes.push_back(
      "checked against the same steps on one device over the whole batch: the updates agree within the stated "
      "tolerance (sums reordered), not bit for bit");
  return notes;
}

}  // namespace

RunResult MeshLesson::run_with(const MeshParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const MeshTheory theory = theory_of(p);
  RunPlan plan(ctx.control, 2);
  plan.start(fmt::format("training on {} x {} x {} rank threads, {} steps", p.dp, p.tp, p.pp, p.steps));
  const RankProducts products = products_for(ctx.backend, p.mesh_model());
  const mesh::MeshTrainConfig config{
      .model = p.mesh_model(), .steps = p.steps, .gemms = products.gemms.get(), .probe_repeats = kProbeRepeats};
  const bool every_rank_has_a_core = theory.ranks <= describe_cpu().threads;
  const mesh::MeshTrainResult trained = mesh::train_on_mesh(
      config, ctx.ledger, [&] { ctx.control.check_cancelled(); }, every_rank_has_a_core);
  plan.start("the same steps on one device");
  const mesh::SingleDeviceResult one = mesh::train_on_one_device(config);  // on the CPU whatever the backend

  MeshMeasured m;
  // The first step warms the caches and the threads up; the median is of the others where there are any.
  std::vector<double> timed(trained.step_us.begin() + (trained.step_us.size() > 1 ? 1 : 0), trained.step_us.end());
  m.step = spread_of(summarize_us(std::move(timed), "steady_clock"));
  m.losses = trained.losses;
  m.reference_losses = one.losses;
  for (std::size_t s = 0; s < one.losses.size(); ++s)
    m.loss_max_rel_err = std::max(m.loss_max_rel_err, std::fabs(trained.losses[s] - one.losses[s]) / one.losses[s]);
  m.update_max_rel_err = update_max_rel_err(trained.initial_weights, trained.weights, one.weights);
  m.within_tolerance = m.update_max_rel_err < theory.update_tolerance;
  m.replicas_identical = trained.replicas_identical;
  m.gemms_on_gpu = products.gemms != nullptr;
  m.gpu_bytes = products.gemms ? double(products.gemms->device_bytes()) : 0.0;
  m.gpus = products.gpus;
  for (const mesh::MeshRankReport& r : trained.ranks) m.rank_runs.push_back(measured_rank(r));
  compare_with_theory(theory, m);
  m.prediction = mesh_lesson::predict_run(p, trained.probe, describe_cpu().threads);
  m.step_over_prediction = m.step.us / m.prediction.step_us;

  result.timelines.push_back(measured_timeline(theory, trained.last_step_spans));
  result.backend.emulated = true;
  result.backend.repeats = int(timed.size());
  result.backend.notes = run_notes(theory, products.gpus);
  Series loss{.id = "loss_mesh", .name = "loss, mesh", .role = "measured", .x_label = "step", .y_label = "loss"};
  Series loss_one{
      .id = "loss_one_device", .name = "loss, one device", .role = "measured", .x_label = "step", .y_label = "loss"};
  for (std::size_t s = 0; s < m.losses.size(); ++s) {
    loss.points.push_back({double(s), m.losses[s], m.losses[s], m.losses[s]});
    loss_one.points.push_back({double(s), m.reference_losses[s], m.reference_losses[s], m.reference_losses[s]});
  }
  result.series = {loss, loss_one};
  result.measured = make_values(std::move(m));
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
