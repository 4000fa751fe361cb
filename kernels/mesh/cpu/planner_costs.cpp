// One plan's costs (see planner_costs.h).
#include "kernels/mesh/planner_costs.h"

#include <algorithm>

#include "kernels/collectives/cost_model.h"
#include "kernels/pipeline/bubble_theory.h"
#include "kernels/tensor/activation_memory.h"

namespace dlsys::mesh {

namespace {

// FLOP per parameter and token: forward 2, backward 4; full recompute runs the forward again.
double flop_per_parameter_token(bool checkpointing) { return checkpointing ? 8 : 6; }
// The share of one micro-batch's compute that is its backward pass (with the recomputed forward).
double backward_share(bool checkpointing) { return checkpointing ? 6.0 / 8.0 : 4.0 / 6.0; }

double collective_time_s(collectives::Op op, int ranks, double bytes, const Link& link) {
  const collectives::CollectiveCost cost = collectives::collective_cost(op, collectives::Algorithm::Ring, ranks, bytes);
  return collectives::model_time_us(cost, link.latency_us, link.bandwidth_gbps) * 1e-6;
}

double bytes_sent(collectives::Op op, int ranks, double bytes) {
  return collectives::collective_cost(op, collectives::Algorithm::Ring, ranks, bytes).bytes_sent_per_rank;
}

const Link& link_of(const Cluster& cluster, LinkClass link) {
  return link == LinkClass::IntraNode ? cluster.intra_node : cluster.inter_node;
}

bool sequence_parallel(const PlannerInput& in, const PlanChoice& c) {
  return in.workload.sequence_parallel && c.tp > 1;
}

DimensionComm tensor_comm(const PlannerInput& in, const Plan& p, double activation_message) {
  DimensionComm d;
  d.group_size = p.choice.tp;
  d.link = group_link(in.cluster.gpus, in.cluster.gpus_per_node, 1, p.choice.tp);
  if (p.choice.tp == 1) return d;
  // Forward, backward, and the forward again when it is recomputed.
  const int per_layer = in.model.tp_all_reduces_per_pass * (p.choice.checkpointing ? 3 : 2);
  const int collectives_each = sequence_parallel(in, p.choice) ? 2 : 1;  // reduce-scatter + all-gather
  d.messages = collectives_each * per_layer * int(p.layers_per_stage) * p.choice.micro_batches;
  d.message_bytes = activation_message;
  // A ring all-reduce is a reduce-scatter and an all-gather: the same bytes and time either way.
  const int all_reduces = d.messages / collectives_each;
  d.bytes_sent = all_reduces * bytes_sent(collectives::Op::AllReduce, p.choice.tp, activation_message);
  d.time_s = all_reduces * collective_time_s(collectives::Op::AllReduce, p.choice.tp, activation_message,
                                             link_of(in.cluster, d.link));
  d.exposed_s = d.time_s;
  return d;
}

DimensionComm pipeline_comm(const PlannerInput& in, const Plan& p, double activation_message) {
  DimensionComm d;
  d.group_size = p.choice.pp;
  d.link = group_link(in.cluster.gpus, in.cluster.gpus_per_node, group_strides(p.choice).pp, p.choice.pp);
  if (p.choice.pp == 1) return d;
  const Link& link = link_of(in.cluster, d.link);
  const int neighbours = p.choice.pp == 2 ? 1 : 2;  // the busiest stage's: m activations or m gradients to each
  d.messages = neighbours * p.choice.micro_batches;
  // With sequence parallelism each tp rank holds, and sends, s / t of the positions.
  d.message_bytes = activation_message / (sequence_parallel(in, p.choice) ? p.choice.tp : 1);
  d.bytes_sent = d.messages * d.message_bytes;
  d.time_s = d.messages * (link.latency_us * 1e-6 + d.message_bytes / (link.bandwidth_gbps * 1e9));
  d.exposed_s = d.time_s;
  return d;
}

DimensionComm data_comm(const PlannerInput& in, const Plan& p) {
  DimensionComm d;
  const PlanChoice& c = p.choice;
  d.group_size = c.dp;
  d.link = group_link(in.cluster.gpus, in.cluster.gpus_per_node, group_strides(c).dp, c.dp);
  if (c.dp == 1) return d;
  const Link& link = link_of(in.cluster, d.link);
  const double psi_per_gpu = in.model.parameters / double(c.tp * c.pp);
  const zero::BytesPerParameter& bytes = in.workload.bytes_per_parameter;
  const double gradients = bytes.gradients * psi_per_gpu, weights = bytes.weights * psi_per_gpu;
  using collectives::Op;
  const int m = c.micro_batches;
  double hidden_s = 0;  // the compute the collectives are issued during
  switch (c.zero_stage) {
    case 0:
    case 1:
      // Gradients accumulate whole over the micro-batches; then one all-reduce (stage 1: its two halves, a
      // reduce-scatter of the gradients and an all-gather of the updated weights: the same bytes and steps with
      // 16-bit weights and gradients), during the last micro-batch's backward pass.
      d.messages = in.workload.dp_buckets;
      d.message_bytes = gradients / d.messages;
      d.bytes_sent = d.messages * bytes_sent(Op::AllReduce, c.dp, d.message_bytes);
      d.time_s = d.messages * collective_time_s(Op::AllReduce, c.dp, d.message_bytes, link);
      hidden_s = backward_share(c.checkpointing) * p.compute_s / m;
      break;
    case 2:
      // A rank keeps only its shard of the gradients, so every micro-batch's are reduce-scattered during its
      // backward pass; the updated weights are all-gathered once.
      d.messages = m + 1;
      d.message_bytes = gradients;
      d.bytes_sent = m * bytes_sent(Op::ReduceScatter, c.dp, gradients) + bytes_sent(Op::AllGather, c.dp, weights);
      d.time_s = m * collective_time_s(Op::ReduceScatter, c.dp, gradients, link) +
                 collective_time_s(Op::AllGather, c.dp, weights, link);
      hidden_s = backward_share(c.checkpointing) * p.compute_s;
      break;
    default: {
      // Weights too are sharded: each layer's are gathered for every micro-batch's forward pass and again for its
      // backward pass (prefetched during the layer before), and its gradients reduce-scattered: 3 collectives a layer
      // and micro-batch, each paying its latency.
      const double layers = double(p.layers_per_stage);
      d.messages = 3 * m * int(p.layers_per_stage);
      d.message_bytes = weights / layers;
      d.bytes_sent =
          m * (2 * bytes_sent(Op::AllGather, c.dp, weights) + bytes_sent(Op::ReduceScatter, c.dp, gradients));
      d.time_s = m * layers *
                 (2 * collective_time_s(Op::AllGather, c.dp, weights / layers, link) +
                  collective_time_s(Op::ReduceScatter, c.dp, gradients / layers, link));
      hidden_s = p.compute_s;
      break;
    }
  }
  if (!in.workload.dp_overlaps_backward) hidden_s = 0;
  d.exposed_s = std::max(0.0, d.time_s - hidden_s);
  return d;
}

}  // namespace

bool tp_allowed(const PlannerInput& in, const PlanChoice& c) {
  return in.workload.allow_tp_across_nodes ||
         group_link(in.cluster.gpus, in.cluster.gpus_per_node, 1, c.tp) == LinkClass::IntraNode;
}

MemoryPerGpu memory_per_gpu(const PlannerInput& in, const PlanChoice& c, std::int64_t micro_batch,
                            std::int64_t layers_per_stage, int in_flight) {
  const double psi_per_gpu = in.model.parameters / double(c.tp * c.pp);
  const zero::ModelStateBytes states =
      zero::model_state_bytes(c.zero_stage, psi_per_gpu, c.dp, in.workload.bytes_per_parameter);
  const tensor::LayerShape shape{.batch = micro_batch,
                                 .seq = in.workload.seq,
                                 .hidden = in.model.hidden,
                                 .heads = in.model.heads,
                                 .ranks = c.tp,
                                 .sequence_parallel = sequence_parallel(in, c)};
  MemoryPerGpu m;
  m.weights = states.weights;
  m.gradients = states.gradients;
  m.optimizer = states.optimizer;
  m.activations = tensor::model_activation_bytes(shape, layers_per_stage * in_flight,
                                                 c.checkpointing ? tensor::Recompute::Full : tensor::Recompute::None);
  return m;
}

Plan cost_plan(const PlannerInput& in, const PlanChoice& c) {
  Plan p;
  p.choice = c;
  p.allowed = tp_allowed(in, c);
  const Cluster& cluster = in.cluster;
  p.micro_batch_sequences = in.workload.global_batch / (std::int64_t(c.dp) * c.micro_batches);
  p.layers_per_stage = (in.model.layers + c.pp - 1) / c.pp;
  p.micro_batches_in_flight = pipeline::theory::peak_inflight_1f1b(c.pp, c.micro_batches, 0);
  p.memory = memory_per_gpu(in, c, p.micro_batch_sequences, p.layers_per_stage, p.micro_batches_in_flight);
  p.fits = p.memory.total() <= cluster.gpu_memory_bytes;

  const double tokens = double(in.workload.global_batch) * double(in.workload.seq);
  const double active = in.model.active_parameters > 0 ? in.model.active_parameters : in.model.parameters;
  p.compute_flop = flop_per_parameter_token(c.checkpointing) * active * tokens;
  p.compute_s = p.compute_flop / (double(cluster.gpus) * cluster.peak_tflops * 1e12 * in.workload.efficiency);
  p.bubble = pipeline::theory::fill_drain_idle_fraction(c.pp, c.micro_batches);

  const double activation_message = in.workload.activation_bytes * double(p.micro_batch_sequences) *
                                    double(in.workload.seq) * double(in.model.hidden);
  p.tp = tensor_comm(in, p, activation_message);
  p.pp = pipeline_comm(in, p, activation_message);
  p.dp = data_comm(in, p);
  for (const DimensionComm* d : {&p.tp, &p.pp, &p.dp})
    (d->link == LinkClass::IntraNode ? p.bytes_intra_node : p.bytes_inter_node) += d->bytes_sent;
  p.exposed_comm_s = p.tp.exposed_s + p.pp.exposed_s + p.dp.exposed_s;
  p.bubble_s = (p.compute_s + p.tp.exposed_s) * p.bubble / (1 - p.bubble);
  p.step_s = p.compute_s + p.bubble_s + p.exposed_comm_s;
  p.tokens_per_s = tokens / p.step_s;
  return p;
}

}  // namespace dlsys::mesh
