#pragma once
// A planner for 3-D parallelism: for a model, a cluster, a global batch and a sequence length, every way of training
// it on the cluster's G GPUs as dp x tp x pp = G (data, tensor, pipeline parallelism), with ZeRO stage 0-3 over the
// data-parallel ranks, m micro-batches and activation checkpointing on or off; for each, the memory per GPU, the
// bytes each link class carries per step, the pipeline bubble and a step time estimated from alpha-beta link costs.
// Then the plans that fit, the frontier of memory against step time, the fastest plan, and the course's rules of
// thumb checked against them.
//
// Ranks are placed tensor-parallel innermost, then one of the other two: for coordinates (d, t, p), global rank
//   g = t + tp (p + pp d)      data parallelism outermost (pipeline groups fill nodes first)
//   g = t + tp (d + dp p)      pipeline outermost: Megatron-LM's order, and the mesh lesson's
//   (kernels/mesh/mesh_shape.h)
// and GPUs fill nodes in order (node = g / gpus_per_node). A group whose ranks lie in more than one node crosses the
// slower link between nodes; a collective runs at the speed of its slowest link. Where dp or pp is 1 the two orders
// are the same mesh, and only the first is listed.
//
// Per GPU (Psi parameters split evenly over the t p ranks of a model replica, b = B / (d m) sequences per
// micro-batch of s tokens, h hidden, L layers, 16-bit activations):
//   model states  ZeRO's formulas for Psi / (t p) over d ranks (kernels/zero/zero_memory.h), 2 + 2 + 12 B/param
//   activations   the first stage under 1F1B keeps min(p, m) micro-batches in flight of ceil(L / p) layers each:
//                 tensor::model_activation_bytes (Korthikanti et al. 2023) with t ranks, no or full recompute
//   tp            Megatron-LM: 2 all-reduces of b s h x 2 bytes per layer forward and 2 backward, 2 more with
//                 recompute (the forward runs twice), each a ring: 2(t-1)/t of the message sent per rank (with
//                 sequence parallelism each is a reduce-scatter and an all-gather, the same bytes)
//   pp            one activation forward and one gradient back per micro-batch and stage boundary: the busiest stage
//                 sends 2 m messages of b s h x 2 bytes (m where p = 2: each stage has one neighbour); no
//                 scatter-gather over the tp ranks
//   dp            with m micro-batches of gradient accumulation (ZeRO's per-step counts are m = 1), G = 2 Psi/(t p)
//                 bytes of 16-bit gradients (and of weights):
//                   stages 0-1  gradients accumulate whole; one all-reduce, 2(d-1)/d G sent
//                   stage 2     the gradient shard is all a rank keeps: a reduce-scatter per micro-batch and one
//                               all-gather of the updated weights, (m + 1)(d-1)/d G
//                   stage 3     each layer's weights gathered for each micro-batch's forward and backward, its
//                               gradients reduce-scattered per micro-batch: 3 m (d-1)/d G in 3 m L/p collectives
//   bubble        (p-1)/(m+p-1), the share of a 1F1B or GPipe step a stage is idle (kernels/pipeline/bubble_theory.h)
//   step time     (compute + tp) / (1 - bubble) + pp + exposed dp, compute = k Psi B s / (G x peak x efficiency)
//                 with k = 6 (forward 2, backward 4 FLOP per parameter and token), 8 with full recompute, and Psi the
//                 parameters a token multiplies by (a mixture of experts' active ones; memory counts all); tp and pp
//                 messages are all exposed (they sit between the layers' matmuls), and a stage's tp all-reduces are
//                 part of its time per micro-batch, so the bubble stretches them as it stretches its compute
//                 ([EXT] Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
//                 Using Megatron-LM": the bubble is (p - 1) times a micro-batch's forward and backward); the dp
//                 collectives hide behind
//                 the compute they are issued during (stages 0-1: the last micro-batch's backward pass; stage 2: every
//                 backward pass; stage 3: all the compute, prefetching) and only what is longer shows.
// Each collective costs steps x alpha + bytes / beta (kernels/collectives/cost_model.h), alpha and beta of the link
// class its group crosses. The estimate leaves out kernels other than matmuls, memory fragmentation, ZeRO-3's
// gathered layer and the collectives' buffers, embeddings' uneven split, expert parallelism (a mixture of experts is
// split like a dense model), and overlap that frameworks add (tp with compute, pp sends with the next micro-batch).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/zero/zero_memory.h"

namespace dlsys::mesh {

// The model as the planner needs it: its parameter count and the shape that sizes activations and pipeline stages.
struct PlannerModel {
  std::string name;
  double parameters = 0;         // Psi: every weight, for memory and the data-parallel collectives
  double active_parameters = 0;  // the weights one token multiplies by, for FLOPs; 0: all of them (a dense model)
  std::int64_t layers = 0, hidden = 0, heads = 0;
  std::string source;  // where the numbers come from
  // Tensor-parallel all-reduces per layer in each direction: 2 for a transformer layer (after the attention's output
  // projection and after the MLP, and their mirrors backward), 1 for an MLP block alone (the mesh lesson's stack:
  // set heads = hidden there, as nothing else limits tp; the activation formula stays a transformer layer's).
  int tp_all_reduces_per_pass = 2;
};

// A link class as the alpha-beta model sees it: per GPU, per direction.
struct Link {
  double bandwidth_gbps = 0;  // beta, GB/s (1e9 bytes per second)
  double latency_us = 0;      // alpha, per message step
};

struct Cluster {
  std::string name;
  int gpus = 0;
  int gpus_per_node = 0;
  double gpu_memory_bytes = 0;
  double peak_tflops = 0;  // per GPU, dense 16-bit on tensor cores
  Link intra_node;         // NVLink, PCIe
  Link inter_node;         // InfiniBand, Ethernet
  std::string source;
  int nodes() const { return gpus_per_node > 0 ? (gpus + gpus_per_node - 1) / gpus_per_node : 0; }
};

struct Workload {
  std::int64_t global_batch = 0;  // B, sequences per optimizer step
  std::int64_t seq = 0;           // s, tokens per sequence
  zero::BytesPerParameter bytes_per_parameter;
  // The share of peak the model's FLOPs run at while nothing waits, assumed. Whole runs, waits included, report
  // 0.38-0.46 as "model FLOPs utilisation" (PaLM 540B 46.2%, Chowdhery et al. 2022; Llama 3 405B 38-43%, the
  // Llama 3 report, 2024), so the default sits a little above.
  double efficiency = 0.5;
  double activation_bytes = 2;  // per element of an activation sent (tp, pp): 16-bit; the lab's fp32 stack 4
  // Plans whose tensor-parallel groups cross nodes may be the best plan; when not, they are still costed (marked
  // not allowed) so the rule "tensor parallelism inside a node" is tested against them.
  bool allow_tp_across_nodes = false;
  bool dp_overlaps_backward = true;  // dp collectives hide behind the compute they are issued during
  // Sequence parallelism beside tp > 1 (Korthikanti et al. 2023, section 4.2.2): the layer norms and dropouts work on
  // s / t positions each, so no activation stays whole; each tp all-reduce becomes a reduce-scatter and an all-gather
  // (the same ring bytes and steps, twice the collectives), and a stage sends its s / t positions to the next.
  bool sequence_parallel = false;
  int dp_buckets = 1;  // ZeRO 0-1: the gradients all-reduced in this many equal buckets (each costs its latency)
};

struct PlannerInput {
  PlannerModel model;
  Cluster cluster;
  Workload workload;
};

// One way to train: the mesh and the choices on top of it.
// Which of data and pipeline parallelism has the larger stride, so that its groups are the first to cross nodes.
enum class Outermost { Data, Pipeline };

struct PlanChoice {
  int dp = 1, tp = 1, pp = 1;
  Outermost outermost = Outermost::Data;
  int zero_stage = 0;
  int micro_batches = 1;  // m per step, on every data-parallel replica
  bool checkpointing = false;
};

// "dp 2 x tp 2 x pp 2, pp outermost, ZeRO-1, 4 micro-batches, checkpointing"; short: "2x2x2 pp-out Z1 m4 ckpt"
// (dp x tp x pp; the order named only where dp and pp are both above 1).
std::string plan_label(const PlanChoice& choice);
std::string plan_short_label(const PlanChoice& choice);

enum class LinkClass { IntraNode, InterNode };
const char* link_class_name(LinkClass link);  // "inside a node", "across nodes"

// Model states and activations, bytes per GPU.
struct MemoryPerGpu {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double model_states() const { return weights + gradients + optimizer; }
  double total() const { return model_states() + activations; }
};

// One parallel dimension's traffic per GPU per optimizer step.
struct DimensionComm {
  int group_size = 1;
  LinkClass link = LinkClass::IntraNode;  // the slowest link its groups cross
  int messages = 0;                       // collectives or point-to-point sends per step
  double message_bytes = 0;               // one collective's buffer or one send
  double bytes_sent = 0;                  // by one GPU per step
  double time_s = 0;                      // alpha-beta time of all of it
  double exposed_s = 0;                   // what adds to the step time
};

struct Plan {
  PlanChoice choice;
  std::int64_t micro_batch_sequences = 0;  // b = B / (d m)
  std::int64_t layers_per_stage = 0;       // ceil(L / p): the first stage's
  int micro_batches_in_flight = 0;         // min(p, m) on the first stage under 1F1B
  MemoryPerGpu memory;
  bool fits = false;
  DimensionComm tp, pp, dp;
  double bytes_intra_node = 0;  // sent by one GPU per step, by link class
  double bytes_inter_node = 0;
  double bubble = 0;        // (p-1)/(m+p-1)
  double bubble_s = 0;      // the idle time it adds: (compute_s + tp.exposed_s) x bubble / (1 - bubble)
  double compute_flop = 0;  // per step, whole cluster
  double compute_s = 0;     // without the bubble
  double exposed_comm_s = 0;
  double step_s = 0;
  double tokens_per_s = 0;
  bool allowed = true;  // false: tp crosses nodes and the workload does not allow it
  bool on_frontier = false;
};

// A rule of thumb against the plans that fit (allowed or not): the fastest plan that keeps it against the fastest that
// breaks it.
enum class Verdict {
  Agrees,     // the fastest plan that keeps the rule is as fast as any that breaks it
  Close,      // a plan that breaks it is faster, by less than kCloseShare: more than this estimate can tell apart
  Disagrees,  // a plan that breaks the rule is faster by kCloseShare or more
  NotTested,  // no plan that fits keeps it, or none breaks it
};
const char* verdict_name(Verdict verdict);  // "agrees", "close", "disagrees", "not tested"
// The step-time gap below which a broken rule is called close: the estimate leaves out more than this.
inline constexpr double kCloseShare = 0.05;

enum class Rule {
  TensorInsideNode,   // tensor-parallel groups inside a node
  TensorFillsNode,    // tp = GPUs per node, so pipeline and data-parallel groups are the ones across nodes
  ZeroOnlyWhenShort,  // the least ZeRO stage that fits for the mesh, micro-batches and checkpointing
  PipelineOutermost,  // where both dp and pp are above 1: pipeline groups cross nodes before data-parallel ones
};
const char* rule_statement(Rule rule);

struct RuleCheck {
  Rule rule = Rule::TensorInsideNode;
  Verdict verdict = Verdict::NotTested;
  int best_keeping = -1;  // index into PlannerResult::plans, -1 when none fits (plans the rule does not apply to,
                          // such as those without a pipeline for PipelineOutermost, count on neither side)
  int best_breaking = -1;
  double keeping_step_s = 0, breaking_step_s = 0;  // 0 where the plan is missing
  double keeping_over_breaking = 0;                // keeping_step_s / breaking_step_s, 0 where either is missing
};

struct PlannerResult {
  PlannerInput input;
  std::vector<Plan> plans;  // every plan enumerated: those that do not fit and those not allowed too
  // The frontier, the best plan and the top plans are taken from the plans that fit and are allowed ("candidates").
  std::vector<int> frontier;  // indices of the candidates no other candidate beats in both memory and time, fastest
                              // first
  int best = -1;              // the fastest candidate (less memory on a tie), -1 when there is none
  std::vector<int> top;       // the fastest candidates, best first (at most kTopPlans)
  std::vector<RuleCheck> rules;
  int meshes_skipped = 0;  // (dp, tp, pp) left out: tp not dividing the heads, pp above the layers, dp not
                           // dividing the batch
};
inline constexpr int kTopPlans = 10;
// Bounds that keep the list of plans to a few hundred thousand at most: the GPUs of a cluster, and the micro-batch
// counts plan_all lists (those dividing the replica's batch, up to this many; evaluate_plan takes any).
inline constexpr int kMostGpus = 65536;
inline constexpr int kMostListedMicroBatches = 1024;

// Throws BadInput naming the first bad field of the model, cluster or workload.
void check_input(const PlannerInput& input);
// One plan. Throws BadInput naming the choice's bad field (dp x tp x pp against the cluster's GPUs, a stage outside
// 0-3, micro-batches not dividing the replica's batch, tp not dividing the heads, pp above the layers).
Plan evaluate_plan(const PlannerInput& input, const PlanChoice& choice);
// Every plan, the frontier, the best plan and the rules.
PlannerResult plan_all(const PlannerInput& input);
// The index in result.plans of the plan with this choice, -1 when plan_all did not list it (a mesh it skipped, a
// micro-batch count above kMostListedMicroBatches, the second order where it is the same mesh).
int find_plan(const PlannerResult& result, const PlanChoice& choice);

// The stride between neighbours of each group: tp 1; pp and dp tp and tp x pp, or tp x dp and tp, by the order.
struct GroupStrides {
  int tp = 1, pp = 1, dp = 1;
};
GroupStrides group_strides(const PlanChoice& choice);

// Which link class the groups of one dimension cross: ranks g0, g0 + stride, ..., g0 + (size - 1) stride for every
// g0 whose coordinate in that dimension is 0.
LinkClass group_link(int gpus, int gpus_per_node, int stride, int size);

}  // namespace dlsys::mesh
