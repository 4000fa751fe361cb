// The 3-D parallelism planner: memory per GPU against ZeRO's formulas on a t x p share, the bubble, the bytes per
// link class, the frontier, the rules of thumb and bad input.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine/errors.h"
#include "kernels/mesh/planner.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/zero/zero_memory.h"
#include "lessons/kvcache/model_config.h"
#include "lessons/kvcache/parameter_count.h"
#include "lessons/mesh/planner_inputs.h"

namespace dlsys {
namespace {

using mesh::LinkClass;
using mesh::PlanChoice;
using mesh::PlannerInput;

// 7e9 parameters in Llama-2-7B's shape (32 layers, hidden 4096, 32 heads) on one node of eight 80 GB GPUs.
PlannerInput seven_billion(int gpus = 8, int gpus_per_node = 8) {
  PlannerInput in;
  in.model = {.name = "7B", .parameters = 7e9, .layers = 32, .hidden = 4096, .heads = 32, .source = "7e9"};
  in.cluster.name = "test";
  in.cluster.gpus = gpus;
  in.cluster.gpus_per_node = gpus_per_node;
  in.cluster.gpu_memory_bytes = 80e9;
  in.cluster.peak_tflops = 989.5;
  in.cluster.intra_node = {450, 2};
  in.cluster.inter_node = {50, 5};
  in.workload.global_batch = 16;
  in.workload.seq = 4096;
  return in;
}

PlanChoice cube(int zero_stage, int micro_batches = 4) {
  PlanChoice c;
  c.dp = c.tp = c.pp = 2;
  c.zero_stage = zero_stage;
  c.micro_batches = micro_batches;
  return c;
}

}  // namespace

TEST_CASE("mesh planner: 7B at 16 B/param on t = p = d = 2 keeps ZeRO's model states of a quarter of the model") {
  const PlannerInput in = seven_billion();
  // ZeRO-1: (2 + 2) Psi / (t p) + 12 Psi / (t p d) = 7.0 + 10.5 GB per GPU, activations aside.
  const mesh::Plan z1 = mesh::evaluate_plan(in, cube(1));
  CHECK(z1.memory.weights + z1.memory.gradients == 7.0e9);
  CHECK(z1.memory.optimizer == 10.5e9);
  CHECK(z1.memory.model_states() == 17.5e9);
  // ZeRO-0: 16 Psi / 4 = 28 GB; ZeRO-2: 2 Psi / 4 + 14 Psi / 8 = 3.5 + 12.25 GB; ZeRO-3: 16 Psi / 8 = 14 GB.
  CHECK(mesh::evaluate_plan(in, cube(0)).memory.model_states() == 28e9);
  const mesh::Plan z2 = mesh::evaluate_plan(in, cube(2));
  CHECK(z2.memory.weights == 3.5e9);
  CHECK(z2.memory.gradients + z2.memory.optimizer == 12.25e9);
  const mesh::Plan z3 = mesh::evaluate_plan(in, cube(3));
  CHECK(z3.memory.model_states() == 14e9);
  CHECK(z3.memory.weights == 1.75e9);
}

TEST_CASE("mesh planner: activations are the first stage's 1F1B micro-batches in flight, by Korthikanti's formula") {
  const PlannerInput in = seven_billion();
  const mesh::Plan p = mesh::evaluate_plan(in, cube(1));
  // b = 16 / (d m) = 2 sequences, 32 / p = 16 layers per stage, min(p, m) = 2 micro-batches in flight.
  CHECK(p.micro_batch_sequences == 2);
  CHECK(p.layers_per_stage == 16);
  CHECK(p.micro_batches_in_flight == 2);
  // Tensor parallelism t = 2: s b h (10 + 24/t + 5 a s / (h t)) per layer, 5 a s / h = 160: 102 s b h.
  const double sbh = 4096.0 * 2 * 4096;
  CHECK(p.memory.activations == 2 * 16 * 102 * sbh);
  // Full recompute: each layer keeps its 16-bit input, and one layer is rebuilt whole.
  PlanChoice c = cube(1);
  c.checkpointing = true;
  CHECK(mesh::evaluate_plan(in, c).memory.activations == 2 * 16 * 2 * sbh + 102 * sbh);
  // Sequence parallelism splits the 10 s b h that tensor parallelism leaves whole: s b h (34/t + 5 a s / (h t)).
  PlannerInput sp = in;
  sp.workload.sequence_parallel = true;
  CHECK(mesh::evaluate_plan(sp, cube(1)).memory.activations == 2 * 16 * (17 + 80) * sbh);
  sp.workload.seq = 4095;  // not a multiple of t = 2
  CHECK_THROWS_WITH_AS(mesh::evaluate_plan(sp, cube(1, 1)), doctest::Contains("workload.seq 4095"), BadInput);
  // The one formula, extended to t ranks: t = 1 is the unsplit layer; selective recompute drops the scores' part.
  tensor::LayerShape shape{.batch = 2, .seq = 4096, .hidden = 4096, .heads = 32};
  CHECK(tensor::model_activation_bytes(shape, 1, tensor::Recompute::None) == (34 + 160) * sbh);
  shape.ranks = 2;
  CHECK(tensor::model_activation_bytes(shape, 1, tensor::Recompute::Selective) == 22 * sbh);
  shape.sequence_parallel = true;
  CHECK(tensor::model_activation_bytes(shape, 1, tensor::Recompute::None) == (17 + 80) * sbh);
  CHECK(tensor::model_activation_bytes(shape, 3, tensor::Recompute::Full) == 3 * sbh + (17 + 80) * sbh);
}

TEST_CASE("mesh planner: the bubble is (p-1)/(m+p-1)") {
  const PlannerInput in = seven_billion();
  CHECK(mesh::evaluate_plan(in, cube(0, 1)).bubble == doctest::Approx(0.5));
  CHECK(mesh::evaluate_plan(in, cube(0, 4)).bubble == doctest::Approx(0.2));
  PlanChoice flat;
  flat.dp = 8;
  flat.micro_batches = 2;
  CHECK(mesh::evaluate_plan(in, flat).bubble == 0);
  PlanChoice deep;
  deep.pp = 8;
  deep.micro_batches = 16;
  CHECK(mesh::evaluate_plan(in, deep).bubble == doctest::Approx(7.0 / 23.0));
}

TEST_CASE("mesh planner: bytes per step per dimension and per link class, and the step time, in closed form") {
  // Two nodes of four: tp groups {0,1}, pp pairs {0,2} inside a node; dp pairs {0,4} across.
  const PlannerInput in = seven_billion(8, 4);
  const mesh::Plan p = mesh::evaluate_plan(in, cube(1));
  const double S = 2.0 * 2 * 4096 * 4096;  // one activation: 16-bit, b s h
  // tp: 4 all-reduces per layer, 16 layers, 4 micro-batches; a ring of 2 sends 2(t-1)/t S = S each.
  CHECK(p.tp.link == LinkClass::IntraNode);
  CHECK(p.tp.messages == 256);
  CHECK(p.tp.bytes_sent == 256 * S);
  CHECK(p.tp.time_s == doctest::Approx(256 * (2 * 2e-6 + S / 450e9)));
  // pp: an activation forward and a gradient back per micro-batch; with two stages each sends one of the two.
  CHECK(p.pp.link == LinkClass::IntraNode);
  CHECK(p.pp.messages == 4);
  CHECK(p.pp.bytes_sent == 4 * S);
  CHECK(p.pp.time_s == doctest::Approx(4 * (2e-6 + S / 450e9)));
  // dp, ZeRO-1: the 16-bit gradients of Psi / 4, all-reduced by a ring of 2: 2(d-1)/d x 3.5e9 B, ZeRO's count.
  CHECK(p.dp.link == LinkClass::InterNode);
  CHECK(p.dp.bytes_sent == 3.5e9);
  CHECK(p.dp.bytes_sent == 2 * zero::ring_comm_elements_per_step(1, 7e9 / 4, 2));
  CHECK(p.dp.time_s == doctest::Approx(2 * 5e-6 + 3.5e9 / 50e9));
  CHECK(p.bytes_intra_node == 260 * S);
  CHECK(p.bytes_inter_node == 3.5e9);
  // Pipeline outermost (Megatron-LM's rank order t + tp (d + dp p)): dp pairs {0,2} inside a node, pp pairs {0,4}
  // across; the same bytes on the other links.
  PlanChoice megatron = cube(1);
  megatron.outermost = mesh::Outermost::Pipeline;
  const mesh::Plan q = mesh::evaluate_plan(in, megatron);
  CHECK(q.dp.link == LinkClass::IntraNode);
  CHECK(q.pp.link == LinkClass::InterNode);
  CHECK(q.bytes_intra_node == 256 * S + 3.5e9);
  CHECK(q.bytes_inter_node == 4 * S);
  CHECK(q.pp.time_s == doctest::Approx(4 * (5e-6 + S / 50e9)));
  CHECK(mesh::plan_short_label(megatron) == "2x2x2 pp-out Z1 m4");
  CHECK(mesh::plan_label(megatron) == "dp 2 x tp 2 x pp 2, pp outermost, ZeRO-1, 4 micro-batches");
  CHECK(mesh::group_strides(megatron).pp == 4);
  CHECK(mesh::group_strides(megatron).dp == 2);
  CHECK(mesh::group_strides(cube(1)).pp == 2);
  CHECK(mesh::group_strides(cube(1)).dp == 4);
}

TEST_CASE("mesh planner: data-parallel bytes by ZeRO stage and micro-batches, and what hides them") {
  const PlannerInput in = seven_billion(8, 4);
  // One micro-batch is ZeRO's count: 2 Psi for stages 0-2, 3 Psi for stage 3 (1.5 times the all-reduce).
  for (int stage = 0; stage <= 3; ++stage)
    CHECK(mesh::evaluate_plan(in, cube(stage, 1)).dp.bytes_sent ==
          2 * zero::ring_comm_elements_per_step(stage, 7e9 / 4, 2));
  CHECK(mesh::evaluate_plan(in, cube(3, 1)).dp.bytes_sent == 1.5 * 3.5e9);
  // Accumulating m = 4 micro-batches: stage 1 still once; stage 2 reduce-scatters every micro-batch's gradients
  // (m + 1 halves); stage 3 also gathers the weights twice per micro-batch (3 m halves).
  const double half = 3.5e9 / 2;  // (d-1)/d G
  CHECK(mesh::evaluate_plan(in, cube(2)).dp.bytes_sent == 5 * half);
  CHECK(mesh::evaluate_plan(in, cube(3)).dp.bytes_sent == 12 * half);
  CHECK(mesh::evaluate_plan(in, cube(3)).dp.messages == 3 * 4 * 16);  // a layer at a time: 16 layers a stage
  CHECK(mesh::evaluate_plan(in, cube(3)).dp.time_s == doctest::Approx(4 * 16 * 3 * (1 * 5e-6 + 3.5e9 / 16 / 2 / 50e9)));
  // What hides them: stage 2's reduce-scatters run during every backward pass, stage 3's collectives during all the
  // compute (prefetched).
  const mesh::Plan z2 = mesh::evaluate_plan(in, cube(2)), z3 = mesh::evaluate_plan(in, cube(3));
  CHECK(z2.dp.exposed_s == doctest::Approx(std::max(0.0, z2.dp.time_s - z2.compute_s * 4 / 6)));
  CHECK(z3.dp.exposed_s == doctest::Approx(std::max(0.0, z3.dp.time_s - z3.compute_s)));
}

TEST_CASE("mesh planner: the step time from compute, bubble and exposed communication, and what changes it") {
  const PlannerInput in = seven_billion(8, 4);
  const mesh::Plan p = mesh::evaluate_plan(in, cube(1));
  // Step: (6 Psi B s / (G peak efficiency) + tp) / (1 - bubble) + pp + what of dp outlasts a micro-batch's backward.
  const double compute = 6 * 7e9 * 16 * 4096 / (8 * 989.5e12 * 0.5);
  CHECK(p.compute_s == doctest::Approx(compute));
  const double dp_exposed = std::max(0.0, p.dp.time_s - compute / 4 * 4 / 6);
  CHECK(p.dp.exposed_s == doctest::Approx(dp_exposed));
  CHECK(p.step_s == doctest::Approx((compute + p.tp.time_s) / 0.8 + p.pp.time_s + dp_exposed));
  CHECK(p.bubble_s == doctest::Approx((compute + p.tp.time_s) * 0.25));
  CHECK(p.step_s == doctest::Approx(p.compute_s + p.bubble_s + p.exposed_comm_s));
  CHECK(p.tokens_per_s == doctest::Approx(16 * 4096 / p.step_s));
  // A mixture of experts computes with its active parameters only.
  PlannerInput sparse = in;
  sparse.model.active_parameters = 7e9 / 4;
  CHECK(mesh::evaluate_plan(sparse, cube(1)).compute_s == doctest::Approx(compute / 4));
  CHECK(mesh::evaluate_plan(sparse, cube(1)).memory.model_states() == p.memory.model_states());
  // Sequence parallelism: the same tp bytes in twice the collectives, a stage sends its half of the positions.
  PlannerInput sp = in;
  sp.workload.sequence_parallel = true;
  const mesh::Plan s = mesh::evaluate_plan(sp, cube(1));
  CHECK(s.tp.messages == 512);
  CHECK(s.tp.bytes_sent == p.tp.bytes_sent);
  CHECK(s.tp.time_s == doctest::Approx(p.tp.time_s));
  CHECK(s.pp.bytes_sent == p.pp.bytes_sent / 2);
  // Checkpointing recomputes the forward pass: 8 instead of 6 FLOP per parameter and token, 2 more all-reduces.
  PlanChoice c = cube(1);
  c.checkpointing = true;
  const mesh::Plan r = mesh::evaluate_plan(in, c);
  CHECK(r.compute_s == doctest::Approx(compute * 8 / 6));
  CHECK(r.tp.messages == 384);
  // fp32 activations (the lab's own stack) send twice the bytes.
  PlannerInput fp32 = in;
  fp32.workload.activation_bytes = 4;
  const mesh::Plan wide = mesh::evaluate_plan(fp32, cube(1));
  CHECK(wide.tp.bytes_sent == 2 * p.tp.bytes_sent);
  CHECK(wide.pp.bytes_sent == 2 * p.pp.bytes_sent);
  CHECK(wide.dp.bytes_sent == p.dp.bytes_sent);
}

TEST_CASE("mesh planner: the mesh lesson's stack, an MLP block a layer in fp32 with SGD, in the planner's terms") {
  // 2 x 2 x 2 ranks, 4 layers of W1 (64, 256) and W2 (256, 64), 32 rows in 2 micro-batches: 8 rows of h = 64 each.
  PlannerInput in = seven_billion(8, 8);
  in.model = {.name = "stack",
              .parameters = 4.0 * 2 * 64 * 256,
              .layers = 4,
              .hidden = 64,
              .heads = 64,
              .source = "the mesh lesson's defaults",
              .tp_all_reduces_per_pass = 1};
  in.workload.global_batch = 32;
  in.workload.seq = 1;
  in.workload.activation_bytes = 4;
  in.workload.bytes_per_parameter = {4, 4, 0};  // fp32 weights and gradients, plain SGD
  in.workload.dp_buckets = 2;                   // one a layer of the stage
  const mesh::Plan p = mesh::evaluate_plan(in, cube(0, 2));
  const double rows_h_4 = 8.0 * 64 * 4;
  CHECK(p.tp.messages == 8);  // one all-reduce forward and one backward, per layer of the stage and micro-batch
  CHECK(p.tp.bytes_sent == 8 * rows_h_4);
  CHECK(p.pp.messages == 2);  // two stages: each sends its m activations or m gradients
  CHECK(p.pp.bytes_sent == 2 * rows_h_4);
  CHECK(p.dp.messages == 2);
  CHECK(p.dp.bytes_sent == 4.0 * 2 * 2 * 64 * 128);  // the shard's fp32 gradients, 2(d-1)/d = 1
  CHECK(p.memory.weights == 4.0 * 2 * 2 * 64 * 128);
  CHECK(p.memory.optimizer == 0);
  // A deeper pipeline's middle stages send both ways.
  PlanChoice deep;
  deep.pp = 4;
  deep.dp = 2;
  deep.micro_batches = 2;
  CHECK(mesh::evaluate_plan(in, deep).pp.messages == 4);
}

TEST_CASE("mesh planner: which link a group crosses, with tensor parallelism innermost") {
  CHECK(mesh::group_link(16, 8, 1, 8) == LinkClass::IntraNode);
  CHECK(mesh::group_link(16, 8, 1, 16) == LinkClass::InterNode);
  CHECK(mesh::group_link(16, 8, 2, 4) == LinkClass::IntraNode);  // pp of 4 over tp of 2: ranks 0, 2, 4, 6
  CHECK(mesh::group_link(16, 8, 4, 4) == LinkClass::InterNode);  // 0, 4, 8, 12
  CHECK(mesh::group_link(16, 8, 8, 2) == LinkClass::InterNode);  // dp over a node-sized replica
  CHECK(mesh::group_link(12, 4, 1, 3) == LinkClass::InterNode);  // 3 ranks do not tile nodes of 4
  CHECK(mesh::group_link(1 << 14, 8, 1, 8) == LinkClass::IntraNode);
  CHECK(mesh::group_link(1 << 14, 8, 1 << 12, 4) == LinkClass::InterNode);
}

TEST_CASE("mesh planner: a large cluster is planned whole") {
  PlannerInput in = seven_billion(1024, 8);
  in.model = {.name = "70B", .parameters = 70e9, .layers = 80, .hidden = 8192, .heads = 64, .source = "70e9"};
  in.workload.global_batch = 1024;
  const mesh::PlannerResult r = mesh::plan_all(in);
  REQUIRE(r.best >= 0);
  const mesh::Plan& best = r.plans[r.best];
  CHECK(best.choice.dp * best.choice.tp * best.choice.pp == 1024);
  CHECK(best.fits);
  CHECK(best.tp.link == LinkClass::IntraNode);
  // pp stages never outnumber the layers; tp always divides the heads.
  for (const mesh::Plan& p : r.plans) {
    CHECK(p.choice.pp <= 80);
    CHECK(64 % p.choice.tp == 0);
  }
  CHECK(r.meshes_skipped > 0);
  // Micro-batch counts are listed up to kMostListedMicroBatches; a plan with more is still evaluated on request.
  in.workload.global_batch = 1 << 14;
  const mesh::PlannerResult many = mesh::plan_all(in);
  int most = 0;
  for (const mesh::Plan& p : many.plans) most = std::max(most, p.choice.micro_batches);
  CHECK(most == mesh::kMostListedMicroBatches);
  PlanChoice wide;
  wide.dp = 1024;
  wide.micro_batches = 16;
  CHECK(mesh::evaluate_plan(in, wide).micro_batch_sequences == 1);
}

TEST_CASE("mesh planner: the frontier holds the best plan and no plan that another beats in memory and time") {
  PlannerInput in = seven_billion(16, 8);
  in.workload.global_batch = 64;
  const mesh::PlannerResult r = mesh::plan_all(in);
  REQUIRE(r.best >= 0);
  REQUIRE(!r.frontier.empty());
  CHECK(std::find(r.frontier.begin(), r.frontier.end(), r.best) != r.frontier.end());
  CHECK(r.frontier.front() == r.best);
  CHECK(mesh::find_plan(r, r.plans[r.best].choice) == r.best);
  PlanChoice unlisted;
  unlisted.dp = 16;
  unlisted.micro_batches = 3;  // does not divide the 4 sequences of a replica
  CHECK(mesh::find_plan(r, unlisted) == -1);
  CHECK(r.top.front() == r.best);
  const auto dominates = [](const mesh::Plan& a, const mesh::Plan& b) {
    const bool no_worse = a.memory.total() <= b.memory.total() && a.step_s <= b.step_s;
    return no_worse && (a.memory.total() < b.memory.total() || a.step_s < b.step_s);
  };
  int fitting = 0;
  for (const mesh::Plan& plan : r.plans) {
    if (!plan.fits || !plan.allowed) {
      CHECK(!plan.on_frontier);
      continue;
    }
    ++fitting;
    CHECK(plan.step_s >= r.plans[r.best].step_s);
    bool dominated = false;
    for (const mesh::Plan& other : r.plans)
      dominated = dominated || (other.fits && other.allowed && dominates(other, plan));
    if (plan.on_frontier) CHECK(!dominated);
    // A plan left off the frontier is beaten, or equalled, by one on it.
    bool covered = plan.on_frontier;
    for (int i : r.frontier)
      covered = covered || (r.plans[i].memory.total() <= plan.memory.total() && r.plans[i].step_s <= plan.step_s);
    CHECK(covered);
  }
  CHECK(fitting > int(r.frontier.size()));
  CHECK(int(r.top.size()) == std::min(fitting, mesh::kTopPlans));
  for (std::size_t i = 1; i < r.top.size(); ++i) CHECK(r.plans[r.top[i - 1]].step_s <= r.plans[r.top[i]].step_s);
  // Every plan is a mesh of the cluster's GPUs; those whose tp crosses nodes are costed but not allowed, and never
  // the best, on the frontier or in the table.
  int across = 0;
  for (const mesh::Plan& plan : r.plans) {
    CHECK(plan.choice.dp * plan.choice.tp * plan.choice.pp == 16);
    // The second order only where it is another mesh.
    if (plan.choice.outermost == mesh::Outermost::Pipeline) CHECK((plan.choice.dp > 1 && plan.choice.pp > 1));
    CHECK(plan.allowed == (plan.tp.link == LinkClass::IntraNode));
    across += plan.allowed ? 0 : 1;
    if (!plan.allowed) CHECK(!plan.on_frontier);
  }
  CHECK(across > 0);
  for (int i : r.top) CHECK(r.plans[i].allowed);
}

TEST_CASE("mesh planner: the rules of thumb as verdicts against the plans that fit") {
  PlannerInput in = seven_billion(16, 8);
  in.workload.global_batch = 64;
  in.workload.allow_tp_across_nodes = true;
  const mesh::PlannerResult r = mesh::plan_all(in);
  REQUIRE(r.rules.size() == 4);
  CHECK(r.rules[3].rule == mesh::Rule::PipelineOutermost);
  CHECK(r.rules[3].verdict != mesh::Verdict::NotTested);
  CHECK(r.plans[r.rules[3].best_keeping].choice.outermost == mesh::Outermost::Pipeline);
  CHECK(r.plans[r.rules[3].best_keeping].choice.pp > 1);
  CHECK(r.plans[r.rules[3].best_breaking].choice.dp > 1);
  // Tensor parallelism over InfiniBand (50 GB/s) loses to keeping it on NVLink (450 GB/s).
  CHECK(r.rules[0].rule == mesh::Rule::TensorInsideNode);
  CHECK(r.rules[0].verdict == mesh::Verdict::Agrees);
  CHECK(r.rules[0].keeping_step_s < r.rules[0].breaking_step_s);
  CHECK(r.rules[0].keeping_over_breaking == doctest::Approx(r.rules[0].keeping_step_s / r.rules[0].breaking_step_s));
  CHECK(r.plans[r.rules[0].best_breaking].tp.link == LinkClass::InterNode);
  // Not allowing tp across nodes leaves the verdict as it was: those plans are still costed for it.
  PlannerInput kept_inside = in;
  kept_inside.workload.allow_tp_across_nodes = false;
  const mesh::PlannerResult inside = mesh::plan_all(kept_inside);
  CHECK(inside.rules[0].verdict == mesh::Verdict::Agrees);
  CHECK(!inside.plans[inside.rules[0].best_breaking].allowed);
  CHECK(inside.best == r.best);
  // With nothing hidden behind compute, a higher stage only sends more (ZeRO-1 what DDP sends, ZeRO-2 a reduce-scatter
  // per micro-batch, ZeRO-3 also the weights twice per micro-batch): the least stage that fits is never slower.
  CHECK(r.rules[2].rule == mesh::Rule::ZeroOnlyWhenShort);
  PlannerInput exposed = in;
  exposed.workload.dp_overlaps_backward = false;
  CHECK(mesh::plan_all(exposed).rules[2].verdict == mesh::Verdict::Agrees);
  // A 7B model on 16 GPUs: tp = 8 all-reduces activations 4 times a layer; data parallelism does better.
  CHECK(r.rules[1].rule == mesh::Rule::TensorFillsNode);
  CHECK(r.rules[1].verdict == mesh::Verdict::Disagrees);
  // On one node nothing crosses nodes: the first rule has no plan that breaks it.
  const mesh::PlannerResult one_node = mesh::plan_all(seven_billion());
  CHECK(one_node.rules[0].verdict == mesh::Verdict::NotTested);
  CHECK(std::string(mesh::verdict_name(mesh::Verdict::Disagrees)) == "disagrees");
}

TEST_CASE("mesh planner: a model too big for the cluster has no plan that fits") {
  PlannerInput in = seven_billion(8, 8);
  in.model.parameters = 1e12;
  const mesh::PlannerResult r = mesh::plan_all(in);
  CHECK(!r.plans.empty());
  CHECK(r.best == -1);
  CHECK(r.frontier.empty());
  CHECK(r.top.empty());
  for (const mesh::RuleCheck& rule : r.rules) CHECK(rule.verdict == mesh::Verdict::NotTested);
}

TEST_CASE("mesh planner: bad input is refused naming the parameter") {
  PlannerInput in = seven_billion();
  in.cluster.gpus = 0;
  CHECK_THROWS_WITH_AS(mesh::plan_all(in), doctest::Contains("cluster.gpus: 0"), BadInput);
  in.cluster.gpus = mesh::kMostGpus * 2;
  CHECK_THROWS_WITH_AS(mesh::plan_all(in), doctest::Contains("allowed: 1 to 65536"), BadInput);
  in = seven_billion(12, 8);
  CHECK_THROWS_WITH_AS(mesh::plan_all(in), doctest::Contains("cluster.gpus: 12"), BadInput);
  in = seven_billion();
  PlanChoice c = cube(1);
  c.pp = 3;  // 2 x 2 x 3 = 12 on 8 GPUs
  CHECK_THROWS_WITH_AS(mesh::evaluate_plan(in, c), doctest::Contains("dp x tp x pp = 2 x 2 x 3 = 12 GPUs"), BadInput);
  CHECK_THROWS_WITH_AS(mesh::evaluate_plan(in, cube(4)), doctest::Contains("plan.zero_stage: 4"), BadInput);
  CHECK_THROWS_WITH_AS(mesh::evaluate_plan(in, cube(1, 3)), doctest::Contains("plan.micro_batches: 3"), BadInput);
  c = cube(1);
  c.dp = 0;
  CHECK_THROWS_WITH_AS(mesh::evaluate_plan(in, c), doctest::Contains("plan.dp: 0"), BadInput);
  in.model.heads = 3000;
  CHECK_THROWS_WITH_AS(mesh::plan_all(in), doctest::Contains("model.heads"), BadInput);
  in = seven_billion();
  in.workload.efficiency = 1.5;
  CHECK_THROWS_WITH_AS(mesh::plan_all(in), doctest::Contains("workload.efficiency"), BadInput);
  in = seven_billion();
  in.model.tp_all_reduces_per_pass = 0;
  CHECK_THROWS_WITH_AS(mesh::plan_all(in), doctest::Contains("model.tp_all_reduces_per_pass"), BadInput);
  in = seven_billion();
  in.workload.dp_buckets = 0;
  CHECK_THROWS_WITH_AS(mesh::plan_all(in), doctest::Contains("workload.dp_buckets"), BadInput);
  in = seven_billion();
  in.cluster.inter_node.bandwidth_gbps = 0;
  CHECK_THROWS_WITH_AS(mesh::plan_all(in), doctest::Contains("cluster.inter_node.bandwidth_gbps"), BadInput);
  in = seven_billion(16, 8);
  c.dp = 1;
  c.tp = 16;
  c.pp = 1;
  c.micro_batches = 1;
  CHECK_THROWS_WITH_AS(mesh::evaluate_plan(in, c), doctest::Contains("workload.allow_tp_across_nodes"), BadInput);
}

TEST_CASE("mesh planner: models from the presets' reader and clusters from the datasheet table") {
  const mesh::PlannerModel llama = mesh::planner_model("llama-2-7b");
  CHECK(llama.parameters == double(kvcache::parameter_count(kvcache::load_preset("llama-2-7b"))));
  CHECK(llama.layers == 32);
  CHECK(llama.hidden == 4096);
  CHECK(llama.heads == 32);
  const mesh::Cluster h100 = mesh::cluster_preset("dgx-h100", 2);
  CHECK(h100.gpus == 16);
  CHECK(h100.gpus_per_node == 8);
  CHECK(h100.gpu_memory_bytes == 80e9);
  CHECK(h100.intra_node.bandwidth_gbps == 450);
  CHECK(h100.inter_node.bandwidth_gbps == 50);
  CHECK_THROWS_WITH_AS(mesh::cluster_preset("tpu", 1), doctest::Contains("dgx-h100"), BadInput);
  CHECK_THROWS_WITH_AS(mesh::cluster_preset("dgx-h100", 0), doctest::Contains("nodes: 0"), BadInput);
  CHECK_THROWS_AS(mesh::planner_model("no-such-model"), BadInput);
  // A mixture of experts: memory holds every expert, FLOPs count the active parameters (Mixtral's "13B" of 47B).
  const mesh::PlannerModel mixtral = mesh::planner_model("mixtral-8x7b");
  const auto count = kvcache::count_parameters(kvcache::load_preset("mixtral-8x7b"));
  REQUIRE(count.has_value());
  CHECK(mixtral.parameters == double(count->total));
  CHECK(mixtral.active_parameters == double(count->active));
  CHECK(mixtral.active_parameters < mixtral.parameters / 3);
  CHECK(llama.active_parameters == 0);
  // The whole planner on a preset: Llama-2-7B on two DGX H100s at 1M tokens a step has plans that fit.
  PlannerInput in;
  in.model = llama;
  in.cluster = h100;
  in.workload.global_batch = 256;
  in.workload.seq = 4096;
  const mesh::PlannerResult r = mesh::plan_all(in);
  REQUIRE(r.best >= 0);
  // Each verdict follows from its two step times; here ZeRO-2 beats the least stage that fits by well under 5%:
  // its reduce-scatters hide behind every backward pass, the all-reduce only behind the last.
  for (const mesh::RuleCheck& rule : r.rules) {
    if (rule.verdict == mesh::Verdict::NotTested) continue;
    const double ratio = rule.keeping_over_breaking;
    CHECK(rule.verdict == (ratio <= 1 + 1e-9               ? mesh::Verdict::Agrees
                           : ratio < 1 + mesh::kCloseShare ? mesh::Verdict::Close
                                                           : mesh::Verdict::Disagrees));
  }
  const mesh::RuleCheck& zero_rule = r.rules[2];
  CHECK(zero_rule.verdict == mesh::Verdict::Close);
  CHECK(r.plans[zero_rule.best_breaking].choice.zero_stage == 2);
}

}  // namespace dlsys
