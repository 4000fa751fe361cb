// The mesh lesson's parameters, the one place it refuses them, its budget and its report.
#include "lessons/mesh/mesh_lesson.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "engine/units.h"
#include "kernels/collectives/communicator.h"
#include "lessons/common/run_time_limit.h"

namespace dlsys {

using mesh_lesson::kMostRanks;
using mesh_lesson::MeshParams;

namespace {

ParamSpec mesh_side(const char* key, const char* label, const char* help) {
  return {.key = key,
          .label = label,
          .type = ParamType::Integer,
          .default_text = "2",
          .min = 1,
          .max = kMostRanks,
          .unit = "ranks",
          .help = help};
}

// Seconds of CPU work a run costs at OpenBLAS's rate: the mesh's steps and one device's, each 6 B L (2 h 4h) FLOP a
// step (forward 2, backward 4 per weight and row), plus about 20 us for each op and collective of each rank, which
// at these sizes costs more than the arithmetic.
double run_seconds(const MeshParams& p) {
  const double weights = double(p.layers) * 2 * p.hidden * MeshParams::kExpansion * p.hidden;
  const double flop = 2.0 * p.steps * 6.0 * p.batch * weights;
  const int ranks = p.dp * p.tp * p.pp;
  const double ops_per_rank = 4.0 * p.micro_batches * p.layers / p.pp + p.layers;
  return estimated_seconds(flop, kBlasGflopsPerThread, 1) + 20e-6 * p.steps * ranks * ops_per_rank;
}

}  // namespace

std::vector<ParamSpec> MeshLesson::params() const {
  return {
      mesh_side("dp", "data-parallel dp", "replicas, each on its own share of the batch; dp x tp x pp <= 8"),
      mesh_side("tp", "tensor-parallel tp", "ranks sharing every layer (Megatron's MLP); must divide hidden"),
      mesh_side("pp", "pipeline stages pp", "stages of L / pp layers each; must divide layers"),
      {.key = "micro_batches",
       .label = "micro-batches m",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 64,
       .help = "per replica and step, run 1F1B between the stages; dp x m must divide batch"},
      {.key = "hidden",
       .label = "hidden h",
       .type = ParamType::Integer,
       .default_text = "256",
       .min = 8,
       .max = 2048,
       .help = "the stack's width; each block is h -> 4h -> h, a transformer's MLP"},
      {.key = "layers",
       .label = "layers L",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 64,
       .help = "residual MLP blocks; a multiple of pp"},
      {.key = "batch",
       .label = "batch B",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = 4096,
       .unit = "rows",
       .help = "rows (tokens) per optimizer step, every replica together"},
      {.key = "steps",
       .label = "training steps",
       .type = ParamType::Integer,
       .default_text = "3",
       .min = 1,
       .max = 50,
       .help = "SGD steps, each on fresh rows; the timeline is the last one's"},
      max_minutes_param(),
  };
}

MeshParams MeshLesson::read_params(const ParamValues& values) const {
  return {.dp = int(values.integer("dp")),
          .tp = int(values.integer("tp")),
          .pp = int(values.integer("pp")),
          .micro_batches = int(values.integer("micro_batches")),
          .hidden = int(values.integer("hidden")),
          .layers = int(values.integer("layers")),
          .batch = int(values.integer("batch")),
          .steps = int(values.integer("steps")),
          .max_minutes = values.real("max_minutes")};
}

void MeshLesson::check_params(const MeshParams& p, BackendKind) const {
  if (p.dp * p.tp * p.pp > kMostRanks)
    throw BadInput(fmt::format(
        "parameters 'dp', 'tp', 'pp': {} x {} x {} = {} ranks; allowed: at most {} (each rank is a thread with its own "
        "OpenBLAS buffer)",
        p.dp, p.tp, p.pp, p.dp * p.tp * p.pp, kMostRanks));
  if (const std::string problem = mesh::model_problem(p.model()); !problem.empty()) throw BadInput(problem);
}

RunBudget MeshLesson::budget_of(const MeshParams& p, BackendKind) const {
  const mesh_lesson::MeshTheory t = mesh_lesson::mesh_theory(p);
  double rank_bytes = 0;
  for (const mesh_lesson::RankTheory& r : t.rank_costs) rank_bytes += double(r.total_bytes);
  const double weights = double(p.layers) * 2 * p.hidden * MeshParams::kExpansion * p.hidden * 4;
  const double data = 2.0 * p.steps * p.batch * p.hidden * 4;
  // One device's weights, gradients and activations ((L + 1) B h + L B 4h); the mesh's messages, at most every
  // micro-batch's activation and gradient at once; the links of every group.
  const double single = 3 * weights + 4.0 * p.batch * p.hidden * (p.layers * (1 + MeshParams::kExpansion) + 1);
  const double messages = 2.0 * p.dp * p.tp * p.pp * p.micro_batches * double(t.activation_bytes);
  const double links = double(t.dp * t.pp) * double(collectives::Communicator::link_bytes(p.tp, {})) +
                       double(t.tp * t.pp) * double(collectives::Communicator::link_bytes(p.dp, {}));
  RunBudget budget;
  budget.host_bytes = rank_bytes + data + single + messages + links + weights;
  budget.cpu_seconds = run_seconds(p);
  budget.max_minutes = p.max_minutes;
  budget.sizes = fmt::format("parameters 'hidden' = {}, 'layers' = {}, 'batch' = {}", p.hidden, p.layers, p.batch);
  budget.cpu_work = fmt::format(
      "{} steps on the mesh and on one device, 48 B L h^2 FLOP a step at {:g} GFLOP/s, and 20 us for each op of "
      "each rank",
      p.steps, kBlasGflopsPerThread);
  budget.smaller = "hidden, layers, batch, steps or micro_batches";
  return budget;
}

mesh_lesson::MeshTheory MeshLesson::theory_of(const MeshParams& p) const { return mesh_lesson::mesh_theory(p); }

std::shared_ptr<const mesh_lesson::MeshSteps> MeshLesson::step_data_of(const MeshParams& p) const {
  check_params(p, BackendKind::Cpu);  // a mesh that cannot be cut cannot be drawn either
  auto steps = std::make_shared<mesh_lesson::MeshSteps>();
  steps->theory = mesh_lesson::mesh_theory(p);
  steps->simulated = mesh_lesson::simulated_timeline(p);
  return steps;
}

std::vector<Timeline> MeshLesson::theory_timelines(const ParamValues& values) const {
  const MeshParams p = read_params(values);
  check_params(p, BackendKind::Cpu);
  return {mesh_lesson::simulated_timeline(p)};
}

std::string MeshLesson::text_report(const RunResult& result) const {
  const auto* t = result.theory_as<mesh_lesson::MeshTheory>();
  if (t == nullptr) return {};
  std::string out = fmt::format(
      "\nMesh dp x tp x pp = {} x {} x {} = {} ranks; L = {} ({} a stage), h = {}, B = {}, m = {} micro-batches of {} "
      "rows\n",
      t->dp, t->tp, t->pp, t->ranks, t->layers, t->layers_per_stage, t->hidden, t->batch, t->micro_batches,
      t->rows_per_micro_batch);
  out += fmt::format(
      "  per step: a tp group sends {} B (2(t-1)/t = {} of each {} B activation, {} all-reduces a rank), a dp group "
      "{} B (2(d-1)/d = {} of each rank's {} B gradient shard), the pipeline {} B; 1F1B bubble (p-1)/(m+p-1) = {}\n",
      t->tp_group_bytes, format_number(t->tp_ring_factor, 4), t->activation_bytes,
      t->rank_costs.empty() ? 0 : t->rank_costs.front().tp_all_reduces, t->dp_group_bytes,
      format_number(t->dp_ring_factor, 4), t->shard_gradient_bytes, t->pp_bytes,
      format_number(100 * t->bubble_fraction, 3) + " %");
  const auto* m = result.measured_as<mesh_lesson::MeshMeasured>();
  if (m == nullptr) return out;
  out += "\nMeasured per rank (last step; memory from the ledger), closed form in brackets:\n";
  out += "  rank (d,t,p)      tp bytes            dp bytes              pp bytes          memory\n";
  for (std::size_t i = 0; i < m->rank_runs.size() && i < t->rank_costs.size(); ++i) {
    const mesh_lesson::RankMeasured& r = m->rank_runs[i];
    const mesh_lesson::RankTheory& k = t->rank_costs[i];
    out += fmt::format("  {:>4} ({},{},{})  {:>8} [{:>8}]  {:>9} [{:>9}]  {:>7} [{:>7}]  {:>9} [{:>9}]\n", r.rank, r.d,
                       r.t, r.p, r.tp_bytes, k.tp_bytes, r.dp_bytes, k.dp_bytes, r.pp_bytes, k.pp_bytes, r.total_bytes,
                       k.total_bytes);
  }
  out += fmt::format(
      "benchmark: step {} (median of {} timed), all-reduces {} of the ranks' time; bytes {}, memory {}; weights "
      "against one "
      "device: max |dW - dW_one| / max |dW_one| = {} ({} {}), replicas {}\n",
      format_duration_us(m->step_us), m->losses.size() > 1 ? m->losses.size() - 1 : 1,
      format_number(100 * m->comm_share, 3) + " %",
      m->bytes_match ? "equal to the closed forms" : "DIFFER from the closed forms",
      m->memory_match ? "equal to the formula" : "DIFFERS from the formula", format_number(m->update_max_rel_err, 3),
      m->within_tolerance ? "below" : "NOT below", format_number(t->update_tolerance, 3),
      m->replicas_identical ? "bit-identical" : "DIFFER");
  return out;
}

}  // namespace dlsys
