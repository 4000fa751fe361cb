// The 3-D parallelism planner (see planner.h).
#include "kernels/mesh/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/errors.h"
#include "kernels/mesh/planner_costs.h"

namespace dlsys::mesh {

namespace {

bool order_matters(const PlanChoice& c) { return c.dp > 1 && c.pp > 1; }

constexpr double kSameTime = 1e-9;                      // step times this close (relative) are a tie
constexpr std::int64_t kMostSequences = 1'000'000'000;  // micro-batch counts stay ints

void require(bool ok, const std::string& message) {
  if (!ok) throw BadInput(message);
}

void require_positive(double value, const char* name, const char* allowed = "a number above 0") {
  require(value > 0 && std::isfinite(value), fmt::format("{}: {} is not allowed; allowed: {}", name, value, allowed));
}

void check_link(const Link& link, const char* bandwidth_name, const char* latency_name) {
  require_positive(link.bandwidth_gbps, bandwidth_name, "GB/s above 0");
  require(link.latency_us >= 0 && std::isfinite(link.latency_us),
          fmt::format("{}: {} is not allowed; allowed: microseconds, 0 or more", latency_name, link.latency_us));
}

// What a choice asks of the mesh itself, apart from the GPU count: an empty string when it is fine.
std::string mesh_problem(const PlannerInput& in, const PlanChoice& c) {
  const std::int64_t batch = in.workload.global_batch;
  if (in.model.heads % c.tp != 0)
    return fmt::format("plan.tp: {} does not divide the model's {} heads; allowed: a divisor of the heads", c.tp,
                       in.model.heads);
  if (in.workload.sequence_parallel && in.workload.seq % c.tp != 0)
    return fmt::format(
        "plan.tp: {} does not divide workload.seq {}; allowed with sequence parallelism: a divisor of "
        "the sequence",
        c.tp, in.workload.seq);
  if (c.pp > in.model.layers)
    return fmt::format("plan.pp: {} stages for {} layers; allowed: at most one stage per layer", c.pp, in.model.layers);
  if (batch % c.dp != 0)
    return fmt::format("plan.dp: {} replicas do not divide workload.global_batch {}; allowed: a divisor of the batch",
                       c.dp, batch);
  return {};
}

void check_choice(const PlannerInput& in, const PlanChoice& c) {
  require(c.dp >= 1, fmt::format("plan.dp: {} is not allowed; allowed: at least 1", c.dp));
  require(c.tp >= 1, fmt::format("plan.tp: {} is not allowed; allowed: at least 1", c.tp));
  require(c.pp >= 1, fmt::format("plan.pp: {} is not allowed; allowed: at least 1", c.pp));
  require(std::int64_t(c.dp) * c.tp * c.pp == in.cluster.gpus,
          fmt::format("plan: dp x tp x pp = {} x {} x {} = {} GPUs, but cluster.gpus is {}; allowed: three factors "
                      "whose product is the cluster's GPUs",
                      c.dp, c.tp, c.pp, std::int64_t(c.dp) * c.tp * c.pp, in.cluster.gpus));
  require(c.zero_stage >= 0 && c.zero_stage <= zero::kMaxStage,
          fmt::format("plan.zero_stage: {} is not allowed; allowed: 0, 1, 2 or 3", c.zero_stage));
  const std::string problem = mesh_problem(in, c);
  require(problem.empty(), problem);
  require(tp_allowed(in, c),
          fmt::format("plan.tp: a tensor-parallel group of {} crosses nodes of {} GPUs; allowed: groups inside a node "
                      "(or set workload.allow_tp_across_nodes)",
                      c.tp, in.cluster.gpus_per_node));
  const std::int64_t replica_batch = in.workload.global_batch / c.dp;
  require(c.micro_batches >= 1 && replica_batch % c.micro_batches == 0,
          fmt::format("plan.micro_batches: {} is not allowed; allowed: a divisor of the {} sequences each of the {} "
                      "replicas takes",
                      c.micro_batches, replica_batch, c.dp));
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> low, high;
  for (std::int64_t k = 1; k * k <= n; ++k) {
    if (n % k != 0) continue;
    low.push_back(k);
    if (k != n / k) high.push_back(n / k);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

bool faster(const Plan& a, const Plan& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  return a.memory.total() < b.memory.total();
}

// The frontier: sweep the plans that fit by memory, keeping each that is faster than every plan with less memory.
std::vector<int> pareto_frontier(const std::vector<Plan>& plans) {
  std::vector<int> fitting;
  for (int i = 0; i < int(plans.size()); ++i)
    if (plans[i].fits && plans[i].allowed) fitting.push_back(i);
  std::sort(fitting.begin(), fitting.end(), [&](int a, int b) {
    const double ma = plans[a].memory.total(), mb = plans[b].memory.total();
    return ma != mb ? ma < mb : plans[a].step_s < plans[b].step_s;
  });
  std::vector<int> frontier;
  for (int i : fitting)
    if (frontier.empty() || plans[i].step_s < plans[frontier.back()].step_s) frontier.push_back(i);
  std::sort(frontier.begin(), frontier.end(), [&](int a, int b) { return faster(plans[a], plans[b]); });
  return frontier;
}

// Whether a rule says anything about a plan: the order of dp and pp matters only where both are above 1.
bool rule_applies(const Plan& p, Rule rule) {
  return rule != Rule::PipelineOutermost || (p.choice.dp > 1 && p.choice.pp > 1);
}

bool keeps_rule(const PlannerInput& in, const Plan& p, Rule rule) {
  const PlanChoice& c = p.choice;
  switch (rule) {
    case Rule::TensorInsideNode:
      return p.tp.link == LinkClass::IntraNode;
    case Rule::TensorFillsNode:
      return c.tp == std::min(in.cluster.gpus_per_node, in.cluster.gpus);
    case Rule::PipelineOutermost:
      return c.outermost == Outermost::Pipeline;
    case Rule::ZeroOnlyWhenShort:
      for (int stage = 0; stage < c.zero_stage; ++stage) {
        PlanChoice lower = c;
        lower.zero_stage = stage;
        const MemoryPerGpu m =
            memory_per_gpu(in, lower, p.micro_batch_sequences, p.layers_per_stage, p.micro_batches_in_flight);
        if (m.total() <= in.cluster.gpu_memory_bytes) return false;
      }
      return true;
  }
  return false;
}

RuleCheck check_rule(const PlannerInput& in, const std::vector<Plan>& plans, Rule rule) {
  RuleCheck r;
  r.rule = rule;
  for (int i = 0; i < int(plans.size()); ++i) {
    if (!plans[i].fits || !rule_applies(plans[i], rule)) continue;
    int& best = keeps_rule(in, plans[i], rule) ? r.best_keeping : r.best_breaking;
    if (best < 0 || faster(plans[i], plans[best])) best = i;
  }
  if (r.best_keeping >= 0) r.keeping_step_s = plans[r.best_keeping].step_s;
  if (r.best_breaking >= 0) r.breaking_step_s = plans[r.best_breaking].step_s;
  if (r.best_keeping < 0 || r.best_breaking < 0) {
    r.verdict = Verdict::NotTested;
    return r;
  }
  r.keeping_over_breaking = r.keeping_step_s / r.breaking_step_s;
  r.verdict = r.keeping_over_breaking <= 1 + kSameTime    ? Verdict::Agrees
              : r.keeping_over_breaking < 1 + kCloseShare ? Verdict::Close
                                                          : Verdict::Disagrees;
  return r;
}

}  // namespace

std::string plan_label(const PlanChoice& c) {
  const char* order = !order_matters(c) ? "" : c.outermost == Outermost::Pipeline ? ", pp outermost" : ", dp outermost";
  return fmt::format("dp {} x tp {} x pp {}{}, ZeRO-{}, {} micro-batch{}{}", c.dp, c.tp, c.pp, order, c.zero_stage,
                     c.micro_batches, c.micro_batches == 1 ? "" : "es", c.checkpointing ? ", checkpointing" : "");
}

std::string plan_short_label(const PlanChoice& c) {
  const char* order = !order_matters(c) ? "" : c.outermost == Outermost::Pipeline ? " pp-out" : " dp-out";
  return fmt::format("{}x{}x{}{} Z{} m{}{}", c.dp, c.tp, c.pp, order, c.zero_stage, c.micro_batches,
                     c.checkpointing ? " ckpt" : "");
}

GroupStrides group_strides(const PlanChoice& c) {
  if (c.outermost == Outermost::Pipeline) return {1, c.tp * c.dp, c.tp};
  return {1, c.tp, c.tp * c.pp};
}

const char* link_class_name(LinkClass link) { return link == LinkClass::IntraNode ? "inside a node" : "across nodes"; }

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Agrees:
      return "agrees";
    case Verdict::Close:
      return "close";
    case Verdict::Disagrees:
      return "disagrees";
    case Verdict::NotTested:
      return "not tested";
  }
  return "";
}

const char* rule_statement(Rule rule) {
  switch (rule) {
    case Rule::TensorInsideNode:
      return "tensor parallelism inside a node";
    case Rule::TensorFillsNode:
      return "tensor parallelism fills the node; pipeline and data parallelism go across nodes";
    case Rule::ZeroOnlyWhenShort:
      return "ZeRO only when still short of memory (the least stage that fits)";
    case Rule::PipelineOutermost:
      return "pipeline stages across nodes before data-parallel replicas (where the mesh has both)";
  }
  return "";
}

LinkClass group_link(int gpus, int gpus_per_node, int stride, int size) {
  // The pattern of groups and nodes repeats every lcm(stride x size, gpus_per_node) ranks.
  const std::int64_t period = std::lcm(std::int64_t(stride) * size, std::int64_t(gpus_per_node));
  const int checked = int(std::min<std::int64_t>(gpus, period));
  for (int first = 0; first < checked; ++first) {
    if ((first / stride) % size != 0) continue;  // not the group's first rank
    const int last = first + (size - 1) * stride;
    if (first / gpus_per_node != last / gpus_per_node) return LinkClass::InterNode;
  }
  return LinkClass::IntraNode;
}

void check_input(const PlannerInput& in) {
  const PlannerModel& m = in.model;
  require_positive(m.parameters, "model.parameters");
  require(m.active_parameters >= 0 && m.active_parameters <= m.parameters,
          fmt::format("model.active_parameters: {} is not allowed; allowed: 0 (all of them) up to model.parameters",
                      m.active_parameters));
  require(m.layers >= 1, fmt::format("model.layers: {} is not allowed; allowed: at least 1", m.layers));
  require(m.hidden >= 1, fmt::format("model.hidden: {} is not allowed; allowed: at least 1", m.hidden));
  require(m.heads >= 1 && m.hidden % m.heads == 0,
          fmt::format("model.heads: {} is not allowed; allowed: a divisor of model.hidden ({})", m.heads, m.hidden));
  require(
      m.tp_all_reduces_per_pass >= 1,
      fmt::format("model.tp_all_reduces_per_pass: {} is not allowed; allowed: at least 1 (2 for a transformer layer)",
                  m.tp_all_reduces_per_pass));
  const Cluster& c = in.cluster;
  require(c.gpus >= 1 && c.gpus <= kMostGpus,
          fmt::format("cluster.gpus: {} is not allowed; allowed: 1 to {}", c.gpus, kMostGpus));
  require(c.gpus_per_node >= 1,
          fmt::format("cluster.gpus_per_node: {} is not allowed; allowed: at least 1", c.gpus_per_node));
  require(c.gpus <= c.gpus_per_node || c.gpus % c.gpus_per_node == 0,
          fmt::format("cluster.gpus: {} is not allowed; allowed: whole nodes of cluster.gpus_per_node = {} (or fewer "
                      "GPUs than one node)",
                      c.gpus, c.gpus_per_node));
  require_positive(c.gpu_memory_bytes, "cluster.gpu_memory_bytes", "bytes above 0");
  require_positive(c.peak_tflops, "cluster.peak_tflops", "TFLOP/s above 0");
  check_link(c.intra_node, "cluster.intra_node.bandwidth_gbps", "cluster.intra_node.latency_us");
  check_link(c.inter_node, "cluster.inter_node.bandwidth_gbps", "cluster.inter_node.latency_us");
  const Workload& w = in.workload;
  require(w.global_batch >= 1 && w.global_batch <= kMostSequences,
          fmt::format("workload.global_batch: {} is not allowed; allowed: 1 to {} sequences", w.global_batch,
                      kMostSequences));
  require(w.seq >= 1, fmt::format("workload.seq: {} is not allowed; allowed: at least 1 token", w.seq));
  require(w.efficiency > 0 && w.efficiency <= 1,
          fmt::format("workload.efficiency: {} is not allowed; allowed: above 0, at most 1", w.efficiency));
  require_positive(w.activation_bytes, "workload.activation_bytes", "bytes per element above 0");
  require(w.dp_buckets >= 1, fmt::format("workload.dp_buckets: {} is not allowed; allowed: at least 1", w.dp_buckets));
  const zero::BytesPerParameter& b = w.bytes_per_parameter;
  require(b.weights >= 0 && b.gradients >= 0 && b.optimizer >= 0 && b.total() > 0,
          "workload.bytes_per_parameter: each part must be 0 or more and their sum above 0");
}

Plan evaluate_plan(const PlannerInput& in, const PlanChoice& choice) {
  check_input(in);
  check_choice(in, choice);
  return cost_plan(in, choice);
}

int find_plan(const PlannerResult& r, const PlanChoice& c) {
  for (int i = 0; i < int(r.plans.size()); ++i) {
    const PlanChoice& p = r.plans[i].choice;
    const bool same_order = p.outermost == c.outermost || !order_matters(c);
    if (p.dp == c.dp && p.tp == c.tp && p.pp == c.pp && same_order && p.zero_stage == c.zero_stage &&
        p.micro_batches == c.micro_batches && p.checkpointing == c.checkpointing)
      return i;
  }
  return -1;
}

PlannerResult plan_all(const PlannerInput& in) {
  check_input(in);
  PlannerResult r;
  r.input = in;
  const int gpus = in.cluster.gpus;
  for (std::int64_t dp : divisors(gpus)) {
    for (std::int64_t tp : divisors(gpus / dp)) {
      PlanChoice c;
      c.dp = int(dp);
      c.tp = int(tp);
      c.pp = int(gpus / dp / tp);
      if (!mesh_problem(in, c).empty()) {
        ++r.meshes_skipped;
        continue;
      }
      const int stages = dp == 1 ? 0 : zero::kMaxStage;  // one replica: every stage is stage 0
      for (Outermost outermost : {Outermost::Data, Outermost::Pipeline}) {
        c.outermost = outermost;
        if (outermost == Outermost::Pipeline && !order_matters(c)) continue;  // the same mesh again
        for (std::int64_t m : divisors(in.workload.global_batch / dp)) {
          if (m > kMostListedMicroBatches) break;  // divisors come in increasing order
          for (int stage = 0; stage <= stages; ++stage)
            for (bool checkpointing : {false, true}) {
              c.micro_batches = int(m);
              c.zero_stage = stage;
              c.checkpointing = checkpointing;
              r.plans.push_back(cost_plan(in, c));
            }
        }
      }
    }
  }
  r.frontier = pareto_frontier(r.plans);
  for (int i : r.frontier) r.plans[i].on_frontier = true;
  if (!r.frontier.empty()) r.best = r.frontier.front();

  for (int i = 0; i < int(r.plans.size()); ++i)
    if (r.plans[i].fits && r.plans[i].allowed) r.top.push_back(i);
  std::sort(r.top.begin(), r.top.end(), [&](int a, int b) { return faster(r.plans[a], r.plans[b]); });
  if (r.top.size() > std::size_t(kTopPlans)) r.top.resize(kTopPlans);

  for (Rule rule : {Rule::TensorInsideNode, Rule::TensorFillsNode, Rule::ZeroOnlyWhenShort, Rule::PipelineOutermost})
    r.rules.push_back(check_rule(in, r.plans, rule));
  return r;
}

}  // namespace dlsys::mesh
