// The mesh lesson's parameters, the one place it refuses them, its budget and its report.
#include "lessons/mesh/mesh_lesson.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "engine/units.h"
#include "kernels/collectives/communicator.h"
#include "kernels/mesh/mesh_gemms_cuda.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/kvcache/model_config.h"

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
      {.key = "model",
       .label = "planner: model",
       .type = ParamType::Choice,
       .default_text = "llama-2-7b",
       .choices = kvcache::preset_names(),
       .help = "the real model the planner plans, trained with mixed-precision Adam (16 B a parameter)"},
      {.key = "config",
       .label = "planner: config.json (overrides model)",
       .type = ParamType::File,
       .default_text = "",
       .help = "a Hugging Face config.json: layers, hidden size, heads and the sizes that count the parameters"},
      {.key = "gpus",
       .label = "planner: GPUs",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = 4096,
       .help = "the cluster's GPUs, whole nodes"},
      {.key = "gpus_per_node",
       .label = "planner: GPUs a node",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 64},
      {.key = "gpu_memory_gb",
       .label = "planner: GPU memory",
       .type = ParamType::Real,
       .default_text = "80",
       .min = 1,
       .max = 1024,
       .unit = "GB",
       .help = "per GPU, 1e9 bytes (H100 SXM: 80)"},
      {.key = "peak_tflops",
       .label = "planner: GPU peak",
       .type = ParamType::Real,
       .default_text = "989.5",
       .min = 1,
       .max = 100000,
       .unit = "TFLOP/s",
       .help = "dense 16-bit on tensor cores (H100 SXM datasheet: 989.5)"},
      {.key = "intra_node_gbps",
       .label = "planner: link inside a node",
       .type = ParamType::Real,
       .default_text = "450",
       .min = 0.1,
       .max = 100000,
       .unit = "GB/s",
       .help = "per GPU and direction (NVLink 4: 450)"},
      {.key = "inter_node_gbps",
       .label = "planner: link across nodes",
       .type = ParamType::Real,
       .default_text = "50",
       .min = 0.1,
       .max = 100000,
       .unit = "GB/s",
       .help = "per GPU and direction (400 Gb/s InfiniBand: 50)"},
      {.key = "global_batch",
       .label = "planner: global batch",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 1,
       .max = 1 << 20,
       .unit = "sequences"},
      {.key = "seq",
       .label = "planner: sequence length",
       .type = ParamType::Integer,
       .default_text = "4096",
       .min = 1,
       .max = 1 << 20,
       .unit = "tokens"},
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
          .model = values.text("model"),
          .config = values.text("config"),
          .gpus = int(values.integer("gpus")),
          .gpus_per_node = int(values.integer("gpus_per_node")),
          .gpu_memory_gb = values.real("gpu_memory_gb"),
          .peak_tflops = values.real("peak_tflops"),
          .intra_node_gbps = values.real("intra_node_gbps"),
          .inter_node_gbps = values.real("inter_node_gbps"),
          .global_batch = values.integer("global_batch"),
          .seq = values.integer("seq"),
          .max_minutes = values.real("max_minutes")};
}

void MeshLesson::check_params(const MeshParams& p, BackendKind) const {
  if (p.dp * p.tp * p.pp > kMostRanks)
    throw BadInput(fmt::format(
        "parameters 'dp', 'tp', 'pp': {} x {} x {} = {} ranks; allowed: at most {} (each rank is a thread with its own "
        "OpenBLAS buffer)",
        p.dp, p.tp, p.pp, p.dp * p.tp * p.pp, kMostRanks));
  if (const std::string problem = mesh::model_problem(p.mesh_model()); !problem.empty()) throw BadInput(problem);
  if (p.gpus > p.gpus_per_node && p.gpus % p.gpus_per_node != 0)
    throw BadInput(fmt::format(
        "parameter 'gpus': value '{}' is not whole nodes of gpus_per_node = {}; allowed: a multiple of {}, or fewer "
        "GPUs than a node",
        p.gpus, p.gpus_per_node, p.gpus_per_node));
  mesh_lesson::planner_input(p);  // the planner's model and cluster: a preset or config.json it can size
}

RunBudget MeshLesson::budget_of(const MeshParams& p, BackendKind backend) const {
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
  if (backend == BackendKind::Cuda) {
    // GPU 0 holds every rank's weight shard and operand buffers, and a cuBLAS handle a rank; with a GPU per rank each
    // holds one rank's share, so this is the most any GPU is asked for.
    const mesh::MeshModel model = p.mesh_model();
    budget.device_bytes = double(mesh::cuda::gpu_rank_gemms_bytes(model.mesh.ranks(), model.shard_elements(),
                                                                  model.largest_product_elements())) +
                          model.mesh.ranks() * kCublasHandleBytes;
  }
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
  steps->planner = mesh::plan_all(mesh_lesson::planner_input(p));
  steps->theory = mesh_lesson::mesh_theory(p, &steps->planner);
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
  const mesh_lesson::PlannerTheory& pl = t->planner;
  out += fmt::format("\nPlanner: {} ({} parameters) on {} GPUs, {} a node, {} sequences of {} tokens: {} plans, {} fit",
                     pl.model, format_number(pl.parameters, 4), pl.gpus, pl.gpus_per_node, pl.global_batch, pl.seq,
                     pl.plans, pl.fitting);
  out += pl.best.empty() ? "; none fits\n"
                         : fmt::format("; fastest: {}, {} s a step, {} per GPU\n", pl.best,
                                       format_number(pl.best_step_s, 4), format_bytes_both(pl.best_memory_bytes));
  for (const std::string& rule : pl.rules) out += "  " + rule + "\n";
  out += fmt::format("  7B, 16 B a parameter, t = p = d = 2, ZeRO-1: {} of model states per GPU\n",
                     format_bytes_both(t->seven_b_zero1_bytes));
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
      format_duration_us(m->step.us), m->losses.size() > 1 ? m->losses.size() - 1 : 1,
      format_number(100 * m->comm_share, 3) + " %",
      m->bytes_match ? "equal to the closed forms" : "DIFFER from the closed forms",
      m->memory_match ? "equal to the formula" : "DIFFERS from the formula", format_number(m->update_max_rel_err, 3),
      m->within_tolerance ? "below" : "NOT below", format_number(t->update_tolerance, 3),
      m->replicas_identical ? "bit-identical" : "DIFFER");
  const mesh_lesson::RunPrediction& pr = m->prediction;
  out += fmt::format(
      "planner on this run's mesh: tp {} B, pipeline {} B, dp {} B, weights {} B per busiest rank (measured {}, {}, "
      "{}, {}); step {} estimated, {} measured ({}x)\n",
      format_number(pr.tp_bytes, 8), format_number(pr.pp_bytes, 8), format_number(pr.dp_bytes, 8),
      format_number(pr.weight_bytes, 8), m->busiest_tp_bytes, m->busiest_pp_bytes, m->busiest_dp_bytes,
      m->largest_weight_bytes, format_duration_us(pr.step_us), format_duration_us(m->step.us),
      format_number(m->step_over_prediction, 3));
  out += "  " + mesh_lesson::prediction_inputs_text(pr, t->ranks) + "\n";
  return out;
}

}  // namespace dlsys
