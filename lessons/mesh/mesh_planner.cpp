// The mesh lesson's planner inputs: a real model on a cluster, and the lesson's own stack on this machine.
#include "lessons/mesh/mesh_planner.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/errors.h"
#include "engine/units.h"
#include "kernels/collectives/cost_model.h"
#include "lessons/kvcache/model_config.h"
#include "lessons/kvcache/parameter_count.h"

namespace dlsys::mesh_lesson {

mesh::PlannerInput planner_input(const MeshParams& p) {
  const kvcache::ModelConfig model =
      p.config.empty() ? kvcache::load_preset(p.model) : kvcache::load_model_config_file(p.config);
  const char* key = p.config.empty() ? "model" : "config";
  if (model.hidden <= 0 || model.heads <= 0 || model.layers <= 0)
    throw BadInput(fmt::format(
        "parameter '{}': {} does not give hidden_size, num_attention_heads and num_hidden_layers, which the planner "
        "sizes activations and stages from",
        key, model.name));
  mesh::PlannerInput in;
  in.model = {.name = model.name,
              .parameters = double(kvcache::parameter_count(model)),  // throws BadInput naming what the file lacks
              .layers = model.layers,
              .hidden = model.hidden,
              .heads = model.heads,
              .source = model.source};
  in.cluster = {.name = fmt::format("{} GPUs of {} GB, {} a node", p.gpus, p.gpu_memory_gb, p.gpus_per_node),
                .gpus = p.gpus,
                .gpus_per_node = p.gpus_per_node,
                .gpu_memory_bytes = p.gpu_memory_gb * 1e9,
                .peak_tflops = p.peak_tflops,
                .intra_node = {.bandwidth_gbps = p.intra_node_gbps, .latency_us = 2},
                .inter_node = {.bandwidth_gbps = p.inter_node_gbps, .latency_us = 5},
                .source = "the parameters"};
  in.workload.global_batch = p.global_batch;
  in.workload.seq = p.seq;
  mesh::check_input(in);  // BadInput naming the field: the cluster's GPUs in whole nodes, ...
  return in;
}

ProbedLink probed_link(const MeshParams& p, const mesh::MeshCostProbe& probe) {
  using collectives::Algorithm;
  using collectives::Op;
  const mesh::MeshModel model = p.mesh_model();
  std::vector<collectives::CollectiveCost> costs;
  std::vector<double> times_us;
  if (p.tp > 1) {
    costs.push_back(collectives::collective_cost(Op::AllReduce, Algorithm::Ring, p.tp,
                                                 4.0 * model.rows_per_micro_batch() * model.hidden));
    times_us.push_back(probe.tp_all_reduce_us);
  }
  if (p.dp > 1) {
    costs.push_back(
        collectives::collective_cost(Op::AllReduce, Algorithm::Ring, p.dp, 4.0 * double(model.layer_shard_elements())));
    times_us.push_back(probe.dp_all_reduce_us);
  }
  const collectives::AlphaBetaFit fit = collectives::fit_alpha_beta(costs, times_us);
  if (fit.valid) return {{.bandwidth_gbps = fit.beta_gbps, .latency_us = fit.alpha_us}, true};
  if (costs.empty()) return {kRankLink, false};
  // The larger message came back as fast or faster (waiting for a core outweighed the bytes): beta as kRankLink's,
  // alpha what is left of the probed times, per step.
  mesh::Link link{.bandwidth_gbps = kRankLink.bandwidth_gbps, .latency_us = 0};
  for (std::size_t i = 0; i < costs.size(); ++i)
    link.latency_us += std::max(0.0, times_us[i] - costs[i].model_bytes / (link.bandwidth_gbps * 1e3)) /
                       costs[i].steps / double(costs.size());
  return {link, false};
}

namespace {

// A layer's forward and backward FLOP over their probed time, FLOP per us -> GFLOP/s.
double probed_rank_gflops(const mesh::MeshCostProbe& probe) {
  return (probe.forward_layer_flop + probe.backward_layer_flop) / (probe.forward_layer_us + probe.backward_layer_us) *
         1e-3;
}

mesh::PlannerInput stack_input(const MeshParams& p, const mesh::MeshCostProbe& probe, const mesh::Link& link) {
  const int ranks = p.dp * p.tp * p.pp;
  mesh::PlannerInput in;
  in.model = {.name = "the lesson's stack",
              .parameters = double(p.layers) * 2 * p.hidden * MeshParams::kExpansion * p.hidden,
              .layers = p.layers,
              .hidden = p.hidden,
              .heads = p.hidden,  // nothing but the hidden width limits tp here
              .source = "the run's parameters",
              .tp_all_reduces_per_pass = 1};
  in.cluster = {.name = "this machine's rank threads",
                .gpus = ranks,
                .gpus_per_node = ranks,
                .gpu_memory_bytes = 1e12,
                .peak_tflops = probed_rank_gflops(probe) * 1e-3,
                .intra_node = link,
                .inter_node = link,
                .source = "measured on the run's ranks before its first step"};
  in.workload.global_batch = p.batch;
  in.workload.seq = 1;  // a row is a token
  in.workload.bytes_per_parameter = {4, 4, 0};
  in.workload.activation_bytes = 4;
  in.workload.efficiency = 1;
  in.workload.dp_buckets = p.layers / p.pp;
  in.workload.dp_overlaps_backward = false;  // the run all-reduces its buckets after the last backward
  return in;
}

}  // namespace

mesh::PlanChoice run_choice(const MeshParams& p) {
  return {.dp = p.dp,
          .tp = p.tp,
          .pp = p.pp,
          .outermost = mesh::Outermost::Pipeline,
          .zero_stage = 0,
          .micro_batches = p.micro_batches,
          .checkpointing = false};
}

PlannerTheory planner_summary(const mesh::PlannerResult& r) {
  PlannerTheory t{.model = r.input.model.name,
                  .parameters = r.input.model.parameters,
                  .gpus = r.input.cluster.gpus,
                  .gpus_per_node = r.input.cluster.gpus_per_node,
                  .global_batch = r.input.workload.global_batch,
                  .seq = r.input.workload.seq,
                  .plans = int(r.plans.size())};
  for (const mesh::Plan& plan : r.plans) t.fitting += plan.fits && plan.allowed ? 1 : 0;
  if (r.best >= 0) {
    const mesh::Plan& best = r.plans[std::size_t(r.best)];
    t.best = mesh::plan_label(best.choice);
    t.best_step_s = best.step_s;
    t.best_memory_bytes = best.memory.total();
    t.best_tokens_per_s = best.tokens_per_s;
  }
  for (const mesh::RuleCheck& rule : r.rules)
    t.rules.push_back(fmt::format("{}: {}", mesh::rule_statement(rule.rule), mesh::verdict_name(rule.verdict)));
  return t;
}

RunPrediction predict_run(const MeshParams& p, const mesh::MeshCostProbe& probe, int hardware_threads) {
  const ProbedLink link = probed_link(p, probe);
  const mesh::Plan plan = mesh::evaluate_plan(stack_input(p, probe, link.link), run_choice(p));
  return {.tp_bytes = plan.tp.bytes_sent,
          .pp_bytes = plan.pp.bytes_sent,
          .dp_bytes = plan.dp.bytes_sent,
          .weight_bytes = plan.memory.weights,
          .gradient_bytes = plan.memory.gradients,
          .bubble = plan.bubble,
          .compute_us = plan.compute_s * 1e6,
          .exposed_comm_us = plan.exposed_comm_s * 1e6,
          .step_us = plan.step_s * 1e6,
          .hardware_threads = hardware_threads,
          .probe_forward_us = probe.forward_layer_us,
          .probe_backward_us = probe.backward_layer_us,
          .probe_tp_all_reduce_us = probe.tp_all_reduce_us,
          .probe_dp_all_reduce_us = probe.dp_all_reduce_us,
          .rank_gflops = probed_rank_gflops(probe),
          .link_alpha_us = link.link.latency_us,
          .link_beta_gbps = link.link.bandwidth_gbps,
          .link_probed = link.probed};
}

std::string prediction_inputs_text(const RunPrediction& pr, int ranks) {
  const std::string stack =
      "The planner costs the run's own stack (8 B a parameter, fp32 messages, one MLP all-reduce "
      "each way); bytes and memory are exact, the time is an estimate";
  if (pr.rank_gflops <= 0)
    return stack + fmt::format(
                       ". This run was recorded before the planner's inputs were measured: compute at OpenBLAS's rate "
                       "for each rank's share of a core, links at {:g} GB/s and {:g} us a step, both assumed.",
                       kRankLink.bandwidth_gbps, kRankLink.latency_us);
  std::string all_reduces;
  if (pr.probe_tp_all_reduce_us > 0)
    all_reduces += fmt::format("{} over a tp group", format_duration_us(pr.probe_tp_all_reduce_us));
  if (pr.probe_dp_all_reduce_us > 0)
    all_reduces += fmt::format("{}{} over a dp group", all_reduces.empty() ? "" : ", ",
                               format_duration_us(pr.probe_dp_all_reduce_us));
  std::string text =
      stack + fmt::format(
                  ", from inputs measured on the run's {} ranks at once before its first step: a layer's "
                  "forward and backward took {} and {} (means), {} GFLOP/s a rank",
                  ranks, format_duration_us(pr.probe_forward_us), format_duration_us(pr.probe_backward_us),
                  format_number(pr.rank_gflops, 3));
  if (all_reduces.empty())
    text += fmt::format("; no tp or dp group to time, so the link is assumed: {:g} us and {:g} GB/s", pr.link_alpha_us,
                        pr.link_beta_gbps);
  else
    text += fmt::format("; all-reduces {}, a link of alpha {} us{} and beta {} GB/s{}", all_reduces,
                        format_number(pr.link_alpha_us, 3), pr.link_probed ? "" : " (fitted)",
                        format_number(pr.link_beta_gbps, 3), pr.link_probed ? "" : " (assumed)");
  text += ".";
  if (ranks > pr.hardware_threads)
    text += fmt::format(
        " {} ranks share {} hardware threads: every call includes waiting for a core, and the cores are not shared "
        "alike in the probe and in the steps, so the estimate moves from run to run.",
        ranks, pr.hardware_threads);
  return text;
}

double seven_b_zero1_states_bytes() {
  mesh::PlannerInput in;
  in.model = {.name = "7B", .parameters = 7e9, .layers = 32, .hidden = 4096, .heads = 32, .source = "7e9"};
  in.cluster = {.name = "one node of 8 H100",
                .gpus = 8,
                .gpus_per_node = 8,
                .gpu_memory_bytes = 80e9,
                .peak_tflops = 989.5,
                .intra_node = {450, 2},
                .inter_node = {50, 5},
                .source = "datasheet"};
  in.workload.global_batch = 16;
  in.workload.seq = 4096;
  const mesh::Plan plan = mesh::evaluate_plan(in, {.dp = 2, .tp = 2, .pp = 2, .zero_stage = 1, .micro_batches = 4});
  return plan.memory.model_states();
}

}  // namespace dlsys::mesh_lesson
