// The mixture-of-experts kernels: capacity and all-to-all volume against their closed forms (DeepEP's published
// dispatch size among them), the experts' GEMMs against a double reference, routing's capacity and drops, the
// balance loss at its extremes and falling as the router trains on it, and the expert-parallel layer over 1, 2 and 4
// rank threads equal to the single-rank reference with the same drops, in sequence and overlapped; fp32's rounding
// bound for two evaluations of an expert's MLP, and the check that holds a device's outputs to it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/ledger.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/moe/expert_devices.h"
#include "kernels/moe/moe_layer.h"
#include "kernels/moe/overlap.h"
#include "tests/support/moe_ranks.h"

using namespace dlsys::moe;
namespace co = dlsys::collectives;

namespace {

MoeShape small_shape(int ranks) {
  return {.tokens = 40, .hidden = 24, .ffn = 32, .experts = 8, .top_k = 2, .capacity_factor = 1.0, .ranks = ranks};
}

using dlsys::testing::moe_inputs_of;

}  // namespace

TEST_CASE("moe: capacity is ceil(capacity factor x tokens x k / E)") {
  MoeShape s{.tokens = 512, .hidden = 1, .ffn = 1, .experts = 8, .top_k = 2, .capacity_factor = 1.25, .ranks = 1};
  CHECK(expert_capacity(s) == 160);
  s = {.tokens = 10, .hidden = 1, .ffn = 1, .experts = 3, .top_k = 1, .capacity_factor = 1.0, .ranks = 1};
  CHECK(expert_capacity(s) == 4);  // 3.33 up
  s = {.tokens = 10, .hidden = 1, .ffn = 1, .experts = 1, .top_k = 1, .capacity_factor = 1.1, .ranks = 1};
  CHECK(expert_capacity(s) == 11);  // 11.000000000000002 in doubles, still 11
}

TEST_CASE("moe: all-to-all volume: DeepEP's low-latency dispatch, fp32 tokens, the off-rank share and the factors") {
  // DeepEP's README: 128 tokens, top-8, hidden 7168 in FP8 with an fp32 scale per 128 channels.
  CHECK(dispatch_bytes_per_rank(128, 8, 7168, 1, 128) == 7569408);
  CHECK(dispatch_bytes_per_rank(512, 2, 256, 4) == 512 * 2 * 256 * 4);
  CHECK(off_rank_share(1) == 0.0);
  CHECK(off_rank_share(4) == 0.75);
  const MoeShape s{.tokens = 1, .hidden = 256, .ffn = 512, .experts = 8, .top_k = 2, .capacity_factor = 1, .ranks = 1};
  CHECK(expert_parameters(s) == 8 * 2 * 256 * 512);
  CHECK(dense_parameters(s) == 2 * 256 * 1024);
  CHECK(router_parameters(s) == 256 * 8 + 8);
  CHECK(mlp_flop_per_row(256, 512) == 4.0 * 256 * 512);
}

TEST_CASE("moe: an expert's two OpenBLAS GEMMs equal the double reference") {
  const Experts experts = make_experts(2, 24, 40, 5);
  std::vector<float> x(7 * 24), mid(7 * 40), y(7 * 24);
  fill_uniform(x.data(), std::int64_t(x.size()), 9);
  mlp_forward(experts.w1_of(1), experts.w2_of(1), 24, 40, x.data(), 7, mid.data(), y.data());
  const std::vector<double> ref = mlp_reference(experts.w1_of(1), experts.w2_of(1), 24, 40, x.data(), 7);
  double err = 0;
  for (std::size_t i = 0; i < y.size(); ++i) err = std::max(err, std::fabs(y[i] - ref[i]));
  CHECK(err < 1e-5);
}

TEST_CASE("moe: fp32's rounding bound for two evaluations of relu(x W1) W2, in closed form") {
  const double u = std::ldexp(1.0, -24);
  const auto gamma = [u](double n) { return n * u / (1 - n * u); };
  // One row through H = 1, F = 1: each product one rounding, twice over.
  CHECK(mlp_rounding_factor(1, 1) == 2 * (gamma(1) * (1 + gamma(1)) + gamma(1)));
  CHECK(mlp_rounding_factor(256, 512) == 2 * (gamma(512) * (1 + gamma(256)) + gamma(256)));
  // To first order 2 (H + F) u; the second-order term only adds.
  CHECK(mlp_rounding_factor(256, 512) > 2 * (256 + 512) * u);
  CHECK(mlp_rounding_factor(256, 512) == doctest::Approx(2 * (256 + 512) * u).epsilon(1e-4));
  CHECK(mlp_rounding_factor(512, 256) > mlp_rounding_factor(256, 256));
  static_assert(cuda::gpu_experts_bytes(8, 256, 512, 4, 640) == 4 * (8 * 2 * 256 * 512 + 4 * 640 * (2 * 256 + 512)));
}

TEST_CASE("moe: the check holds an MLP's outputs within the bound and catches a difference beyond it") {
  const std::int64_t h = 19, f = 33, rows = 11;
  const Experts experts = make_experts(2, h, f, 8);
  std::vector<float> x(std::size_t(rows * h)), mid(std::size_t(rows * f)), y(std::size_t(rows * h));
  fill_uniform(x.data(), rows * h, 4);
  mlp_forward(experts.w1_of(0), experts.w2_of(0), h, f, x.data(), rows, mid.data(), y.data());
  // The double reference rounded to fp32: another evaluation of the same sums, within the bound.
  const std::vector<double> exact = mlp_reference(experts.w1_of(0), experts.w2_of(0), h, f, x.data(), rows);
  std::vector<float> other(exact.begin(), exact.end());
  const MlpCheck near =
      check_mlp_outputs(experts.w1_of(0), experts.w2_of(0), h, f, x.data(), rows, y.data(), other.data());
  CHECK(near.agrees());
  CHECK(near.largest_bound > 0);
  CHECK(near.max_abs_diff <= near.largest_bound);
  // One output moved by twice the largest bound is outside its own.
  other[5] = float(double(y[5]) + 2 * near.largest_bound);
  const MlpCheck far =
      check_mlp_outputs(experts.w1_of(0), experts.w2_of(0), h, f, x.data(), rows, y.data(), other.data());
  CHECK_FALSE(far.agrees());
  CHECK(far.worst_share_of_bound >= 2 * (1 - 1e-6));
  other[5] = std::nanf("");
  CHECK_FALSE(
      check_mlp_outputs(experts.w1_of(0), experts.w2_of(0), h, f, x.data(), rows, y.data(), other.data()).agrees());
  // No rows, nothing to check.
  const MlpCheck none = check_mlp_outputs(experts.w1_of(0), experts.w2_of(0), h, f, x.data(), 0, y.data(), y.data());
  CHECK(none.worst_share_of_bound == 0);
  CHECK(none.largest_bound == 0);
}

TEST_CASE("moe: the checked MLPs pass a device's calls through and check them only while checking is on") {
  const std::int64_t h = 16, f = 24, rows = 9;
  const Experts experts = make_experts(3, h, f, 2);
  std::vector<float> x(std::size_t(rows * h)), y(std::size_t(rows * h)), alone(std::size_t(rows * h));
  fill_uniform(x.data(), rows * h, 12);
  CpuExpertMlps device(experts, 2);
  ExpertsCheckedOnCpu checked(device, experts, 2);
  checked.forward(1, 2, x.data(), rows, y.data());
  checked.forward(0, 1, x.data(), 0, y.data());  // an expert with no rows
  device.forward(0, 2, x.data(), rows, alone.data());
  CHECK(y == alone);
  const MlpCheck first = checked.check();
  CHECK(first.agrees());
  CHECK(first.max_abs_diff == 0);  // the same OpenBLAS calls on the same rows
  CHECK(first.largest_bound > 0);
  checked.set_checking(false);
  checked.forward(0, 0, x.data(), rows, y.data());
  CHECK(checked.check().largest_bound == first.largest_bound);
}

TEST_CASE("moe: routing keeps at most C a group per expert, first choices first, and counts what it drops") {
  const MoeShape s = small_shape(1);
  const Router router = make_router(s.hidden, s.experts, 1.0, 3);
  const std::vector<float> x = moe_inputs_of(s, 0);
  const Routing r = route_tokens(router, x.data(), s.tokens, s);
  const std::int64_t capacity = expert_capacity(s);
  CHECK(capacity == 10);
  std::int64_t dropped = 0, assignments = 0;
  for (int e = 0; e < s.experts; ++e) {
    CHECK(r.kept[std::size_t(e)] == std::min(r.wanted[std::size_t(e)], capacity));
    dropped += r.wanted[std::size_t(e)] - r.kept[std::size_t(e)];
    assignments += r.wanted[std::size_t(e)];
  }
  CHECK(assignments == s.tokens * s.top_k);
  CHECK(r.dropped == dropped);
  CHECK(r.dropped > 0);  // the skew overloads the first experts
  for (std::int64_t t = 0; t < s.tokens; ++t) {
    CHECK(r.expert[std::size_t(2 * t)] != r.expert[std::size_t(2 * t + 1)]);
    CHECK(r.gate[std::size_t(2 * t)] >= r.gate[std::size_t(2 * t + 1)]);
  }
  // A first choice is dropped only when its expert is full of first choices.
  for (std::int64_t t = 0; t < s.tokens; ++t)
    if (r.slot[std::size_t(2 * t)] < 0) CHECK(r.kept[std::size_t(r.expert[std::size_t(2 * t)])] == capacity);
}

TEST_CASE("moe: the balance loss is 1 when even and E when one expert takes all, and training on it evens the load") {
  Routing even;
  even.tokens = 8;
  even.top_k = 1;
  even.wanted = {2, 2, 2, 2};
  even.mean_probability = {0.25, 0.25, 0.25, 0.25};
  CHECK(balance_loss(even) == doctest::Approx(1.0));
  Routing one = even;
  one.wanted = {8, 0, 0, 0};
  one.mean_probability = {1, 0, 0, 0};
  CHECK(balance_loss(one) == doctest::Approx(4.0));

  MoeShape s = small_shape(1);
  s.tokens = 256;
  Router router = make_router(s.hidden, s.experts, 1.5, 4);
  std::vector<float> x(std::size_t(s.tokens * s.hidden));
  fill_uniform(x.data(), std::int64_t(x.size()), 12);
  const std::int64_t dropped_before = route_tokens(router, x.data(), s.tokens, s).dropped;
  const std::vector<double> losses = train_for_balance(router, x.data(), s.tokens, s, 100, 2.0);
  CHECK(losses.size() == 101);
  CHECK(losses.front() > 1.3);
  CHECK(losses.back() < 1.1);
  CHECK(route_tokens(router, x.data(), s.tokens, s).dropped < dropped_before);
}

TEST_CASE("moe: the expert-parallel layer over rank threads equals the single-rank reference, drops included") {
  for (const int n : {1, 2, 4}) {
    CAPTURE(n);
    const MoeShape s = small_shape(n);
    const Router router = make_router(s.hidden, s.experts, 1.0, 3);
    const Experts experts = make_experts(s.experts, s.hidden, s.ffn, 6);
    dlsys::testing::MoeRanks ranks = dlsys::testing::moe_ranks_with_reference(s, router, experts);
    const std::vector<std::vector<float>>&x = ranks.x, &y_ref = ranks.reference;
    std::vector<std::vector<float>>& y = ranks.y;
    const std::vector<Routing>& routings = ranks.routings;
    dlsys::MemoryLedger ledger;
    const auto group = co::make_thread_group(n, ledger, co::CommOptions{.full_mesh = true});
    ExpertParallelLayer layer(s, router, experts, *group);
    group->run_on_ranks([&](int r) { layer.forward(r, x[std::size_t(r)].data(), y[std::size_t(r)].data()); });
    std::int64_t dropped = 0;
    for (int r = 0; r < n; ++r) {
      CHECK(layer.routing(r).slot == routings[std::size_t(r)].slot);
      CHECK(y[std::size_t(r)] == y_ref[std::size_t(r)]);
      dropped += routings[std::size_t(r)].dropped;
    }
    CHECK(dropped > 0);
    // Bytes: the counts (E/N floats to each peer), the rows to other ranks' experts, and the outputs of the rows
    // other ranks sent here.
    const int per_rank = s.experts_per_rank();
    for (int r = 0; r < n; ++r) {
      std::int64_t floats = std::int64_t(n - 1) * per_rank;
      for (int q = 0; q < n; ++q)
        if (q != r) floats += layer.dispatch_floats(r, q) + layer.dispatch_floats(q, r);
      std::int64_t routed_away = 0;
      for (int e = 0; e < s.experts; ++e)
        if (s.rank_of_expert(e) != r) routed_away += routings[std::size_t(r)].kept[std::size_t(e)];
      std::int64_t to_others = 0;
      for (int q = 0; q < n; ++q)
        if (q != r) to_others += layer.dispatch_floats(r, q);
      CHECK(to_others == routed_away * s.hidden);
      CHECK(group->bytes_sent_by(r) == 4 * floats);
    }
  }
}

TEST_CASE("moe: the layer on given MLPs equals the reference, also with an expert that receives no rows") {
  // A strong lean to the first experts with k = 1: the last expert gets none of the rows (what a GPU's experts must
  // also survive: tests/cuda/test_moe_cuda.cpp runs the same layer there).
  const int n = 2;
  MoeShape s = small_shape(n);
  s.top_k = 1;
  const Router router = make_router(s.hidden, s.experts, 4.0, 3);
  const Experts experts = make_experts(s.experts, s.hidden, s.ffn, 6);
  dlsys::testing::MoeRanks ranks = dlsys::testing::moe_ranks_with_reference(s, router, experts);
  std::int64_t last_expert_rows = 0;
  for (const Routing& r : ranks.routings) last_expert_rows += r.kept.back();
  REQUIRE(last_expert_rows == 0);
  dlsys::MemoryLedger ledger;
  const auto group = co::make_thread_group(n, ledger, co::CommOptions{.full_mesh = true});
  CpuExpertMlps mlps(experts, n);
  ExpertParallelLayer layer(s, router, experts, *group, &mlps);
  group->run_on_ranks([&](int r) { layer.forward(r, ranks.x[std::size_t(r)].data(), ranks.y[std::size_t(r)].data()); });
  CHECK(ranks.y == ranks.reference);
}

TEST_CASE("moe: two micro-batches give the same outputs in sequence and overlapped") {
  const int n = 2;
  const MoeShape s = small_shape(n);
  const Router router = make_router(s.hidden, s.experts, 0.5, 3);
  const Experts experts = make_experts(s.experts, s.hidden, s.ffn, 6);
  dlsys::MemoryLedger ledger;
  const auto comm = co::make_thread_group(n, ledger, co::CommOptions{.full_mesh = true});
  const auto compute = co::make_thread_group(n, ledger);
  ExpertParallelLayer a(s, router, experts, *comm), b(s, router, experts, *comm);
  std::vector<std::vector<float>> x, y_seq, y_over;
  MicroBatches seq, over;
  seq.layers = over.layers = {&a, &b};
  for (int m = 0; m < 2; ++m)
    for (int r = 0; r < n; ++r) {
      x.push_back(moe_inputs_of(s, r, m));
      y_seq.emplace_back(x.back().size());
      y_over.emplace_back(x.back().size());
    }
  for (int m = 0; m < 2; ++m)
    for (int r = 0; r < n; ++r) {
      const auto i = std::size_t(m * n + r);
      seq.inputs[std::size_t(m)].push_back(x[i].data());
      over.inputs[std::size_t(m)].push_back(x[i].data());
      seq.outputs[std::size_t(m)].push_back(y_seq[i].data());
      over.outputs[std::size_t(m)].push_back(y_over[i].data());
    }
  std::vector<PhaseSpan> seq_spans, over_spans;
  run_in_sequence(seq, *comm, &seq_spans);
  run_overlapped(over, *compute, *comm, &over_spans);
  CHECK(y_seq == y_over);
  CHECK(seq_spans.size() == std::size_t(2 * n * kPhases));
  CHECK(over_spans.size() == std::size_t(2 * n * kPhases));
  for (const PhaseSpan& span : over_spans) CHECK(span.end_us >= span.start_us);
}

TEST_CASE("moe: the ideal overlapped time: no communication leaves the compute, and it never exceeds the sequence") {
  CHECK(ideal_overlapped_us(1, 0, 10, 0, 1) == doctest::Approx(24.0));
  CHECK(ideal_overlapped_us(1, 10, 1, 10, 1) == doctest::Approx(42.0));
  CHECK(ideal_overlapped_us(1, 10, 1, 10, 1) <= 2 * (1 + 10 + 1 + 10 + 1));
  CHECK(ideal_overlapped_us(1, 3, 5, 3, 1) <= 2 * (1 + 3 + 5 + 3 + 1));
}
