// The mesh lesson's planner inputs: a real model on a cluster, and the lesson's own stack on this machine.
#include "lessons/mesh/mesh_planner.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/errors.h"
#include "lessons/common/run_time_limit.h"
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

mesh::PlannerInput stack_input(const MeshParams& p, int hardware_threads) {
  const int ranks = p.dp * p.tp * p.pp;
  const double share = std::min(1.0, double(hardware_threads) / ranks);  // of one core, per rank
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
                .peak_tflops = kBlasGflopsPerThread * share / 1e3,
                .intra_node = kRankLink,
                .inter_node = kRankLink,
                .source = "OpenBLAS's rate per thread, the cores shared by the ranks"};
  in.workload.global_batch = p.batch;
  in.workload.seq = 1;  // a row is a token
  in.workload.bytes_per_parameter = {4, 4, 0};
  in.workload.activation_bytes = 4;
  in.workload.efficiency = 1;
  in.workload.dp_buckets = p.layers / p.pp;
  in.workload.dp_overlaps_backward = false;  // the run all-reduces its buckets after the last backward
  return in;
}

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

RunPrediction predict_run(const MeshParams& p, int hardware_threads) {
  const mesh::Plan plan = mesh::evaluate_plan(stack_input(p, hardware_threads), run_choice(p));
  return {.tp_bytes = plan.tp.bytes_sent,
          .pp_bytes = plan.pp.bytes_sent,
          .dp_bytes = plan.dp.bytes_sent,
          .weight_bytes = plan.memory.weights,
          .gradient_bytes = plan.memory.gradients,
          .bubble = plan.bubble,
          .compute_us = plan.compute_s * 1e6,
          .exposed_comm_us = plan.exposed_comm_s * 1e6,
          .step_us = plan.step_s * 1e6,
          .hardware_threads = hardware_threads};
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
