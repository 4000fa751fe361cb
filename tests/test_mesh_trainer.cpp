// The device mesh: rank coordinates and groups, shards that tile the model, and the real dp x tp x pp training against
// single-device training, its bytes against the ring's closed forms and its ledger against the memory formula.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <set>
#include <thread>

#include "engine/errors.h"
#include "engine/ledger.h"
#include "kernels/collectives/channel.h"
#include "kernels/mesh/mesh_model.h"
#include "kernels/mesh/mesh_trainer.h"
#include "kernels/pipeline/mlp_block.h"
#include "kernels/tensor/tp_group.h"

using namespace dlsys;
using namespace dlsys::mesh;

namespace {

MeshTrainConfig config_of(int dp, int tp, int pp, int micro_batches) {
  MeshTrainConfig c;
  c.model = {
      .mesh = {dp, tp, pp}, .layers = 4, .hidden = 16, .expansion = 4, .batch = 16, .micro_batches = micro_batches};
  c.steps = 2;
  return c;
}

// max |a - b| / max |b| over the weights' changes from their start: what training did, not what it started from.
double update_rel_err(const std::vector<float>& start, const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < start.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i]) - double(start[i])));
  }
  return diff / scale;
}

}  // namespace

TEST_CASE("mesh coordinates: Megatron's order, every rank in one tp group and one dp group") {
  const MeshShape m{2, 2, 2};
  CHECK(coord_of(m, 0).t == 0);
  CHECK(coord_of(m, 1).t == 1);  // tp ranks adjacent
  CHECK(coord_of(m, 2).d == 1);  // then data
  CHECK(coord_of(m, 4).p == 1);  // then pipeline
  std::set<std::pair<int, int>> tp_slots, dp_slots;
  for (int r = 0; r < m.ranks(); ++r) {
    const MeshCoord c = coord_of(m, r);
    CHECK(rank_of(m, c) == r);
    tp_slots.insert({tp_group_of(m, c), c.t});
    dp_slots.insert({dp_group_of(m, c), c.d});
  }
  CHECK(int(tp_slots.size()) == m.ranks());  // no two ranks share a place in a group
  CHECK(int(dp_slots.size()) == m.ranks());
  CHECK(tp_group_count(m) * m.tp == m.ranks());
  CHECK(dp_group_count(m) * m.dp == m.ranks());
}

TEST_CASE("mesh shards: the tp x pp shards tile the model exactly once") {
  const MeshModel m{.mesh = {1, 4, 2}, .layers = 4, .hidden = 8, .expansion = 4, .batch = 8, .micro_batches = 2};
  std::vector<float> full(std::size_t(training::parameter_count(m.stack())));
  for (std::size_t i = 0; i < full.size(); ++i) full[i] = float(i);
  std::vector<float> back(full.size(), -1.0f);
  for (int r = 0; r < m.mesh.ranks(); ++r) {
    const std::vector<float> shard = shard_of(m, coord_of(m.mesh, r), full);
    CHECK(std::int64_t(shard.size()) * m.mesh.tp * m.mesh.pp == std::int64_t(full.size()));
    place_shard(m, coord_of(m.mesh, r), shard.data(), back);
  }
  CHECK(back == full);
}

TEST_CASE("mesh model: what cannot be cut is refused, naming the parameter") {
  MeshModel m{.mesh = {2, 2, 2}, .layers = 3, .hidden = 16, .expansion = 4, .batch = 16, .micro_batches = 2};
  CHECK(model_problem(m).find("'layers'") != std::string::npos);
  m.layers = 4;
  m.hidden = 15;
  CHECK(model_problem(m).find("'hidden'") != std::string::npos);
  m.hidden = 16;
  m.batch = 10;
  CHECK(model_problem(m).find("'batch'") != std::string::npos);
  m.batch = 16;
  CHECK(model_problem(m).empty());
}

TEST_CASE("mesh 1 x 1 x 1, one micro-batch: the same sums as one device, bit for bit") {
  const MeshTrainConfig c = config_of(1, 1, 1, 1);
  MemoryLedger ledger;
  const MeshTrainResult mesh = train_on_mesh(
      c, ledger, [] {}, false);
  const SingleDeviceResult one = train_on_one_device(c);
  CHECK(mesh.weights == one.weights);
  CHECK(mesh.losses == one.losses);
}

TEST_CASE("mesh training: every shape of up to 8 ranks learns what one device learns") {
  for (const auto& shape : std::vector<std::tuple<int, int, int, int>>{
           {2, 2, 2, 4}, {1, 2, 4, 4}, {4, 2, 1, 2}, {2, 1, 4, 2}, {1, 8, 1, 1}, {2, 4, 1, 2}, {1, 1, 2, 1}}) {
    // Not a structured binding: under clang (ThreadSanitizer's build) INFO's lambda cannot capture one.
    const int dp = std::get<0>(shape), tp = std::get<1>(shape), pp = std::get<2>(shape), m = std::get<3>(shape);
    INFO("dp " << dp << " tp " << tp << " pp " << pp << " m " << m);
    const MeshTrainConfig c = config_of(dp, tp, pp, m);
    MemoryLedger ledger;
    const MeshTrainResult mesh = train_on_mesh(
        c, ledger, [] {}, false);
    const SingleDeviceResult one = train_on_one_device(c);
    CHECK(mesh.replicas_identical);
    for (const MeshRankReport& r : mesh.ranks) {  // counts and bytes as the closed forms say, one-rank groups too
      const RankCosts k = rank_costs(c.model, r.coord);
      CHECK(r.tp_all_reduces == k.tp_all_reduces);
      CHECK(r.dp_buckets == k.dp_buckets);
      CHECK(r.pp_messages == k.pp_messages);
      CHECK(r.tp_bytes + r.dp_bytes + r.pp_bytes == k.tp_bytes + k.dp_bytes + k.pp_bytes);
      CHECK(r.peak_activation_bytes == k.activation_bytes);
    }
    CHECK(update_rel_err(mesh.initial_weights, mesh.weights, one.weights) < 1e-4);
    REQUIRE(mesh.losses.size() == one.losses.size());
    for (std::size_t s = 0; s < one.losses.size(); ++s)
      CHECK(mesh.losses[s] == doctest::Approx(one.losses[s]).epsilon(1e-5));
  }
}

TEST_CASE("mesh 2 x 2 x 2: bytes per group and memory per rank equal their closed forms exactly") {
  const MeshTrainConfig c = config_of(2, 2, 2, 4);
  MemoryLedger ledger;
  const MeshTrainResult mesh = train_on_mesh(
      c, ledger, [] {}, false);
  REQUIRE(mesh.ranks.size() == 8);
  for (const MeshRankReport& r : mesh.ranks) {
    INFO("rank " << r.rank);
    const RankCosts k = rank_costs(c.model, r.coord);
    CHECK(r.tp_all_reduces == k.tp_all_reduces);
    CHECK(r.tp_bytes == k.tp_bytes);
    CHECK(r.dp_buckets == k.dp_buckets);
    CHECK(r.dp_bytes == k.dp_bytes);
    CHECK(r.pp_messages == k.pp_messages);
    CHECK(r.pp_bytes == k.pp_bytes);
    CHECK(r.weight_bytes == k.weight_bytes);
    CHECK(r.gradient_bytes == k.gradient_bytes);
    CHECK(r.peak_activation_bytes == k.activation_bytes);
    CHECK(r.scratch_bytes == k.scratch_bytes);
  }
  // The closed forms themselves, for rank 0 (stage 0 of 2, rows = 16 / (2 x 4) = 2, h = 16, f / tp = 32):
  const RankCosts k0 = rank_costs(c.model, {0, 0, 0});
  CHECK(k0.tp_all_reduces == 2 * 2 * 4);                      // 2 a layer, 2 layers, 4 micro-batches
  CHECK(k0.tp_bytes == 16 * (2 * 1 * 2 * 16 * 4 / 2));        // 2 (t-1)/t x rows h 4 B each
  CHECK(k0.dp_bytes == 2 * (2 * 1 * (2 * 16 * 32) * 4 / 2));  // 2 (d-1)/d x 2 h f/t 4 B, 2 buckets
  CHECK(k0.pp_bytes == 4 * 2 * 16 * 4);                       // 4 activations forward, none backward on stage 0
  CHECK(k0.micro_batches_in_flight == 2);                     // 1F1B: pp - p
  CHECK(k0.activation_bytes == 2 * 4 * 2 * (2 * (16 + 32)));
}

TEST_CASE("mesh cost probe: every rank's layer and all-reduces timed before the first step, the training unchanged") {
  const MeshTrainConfig plain = config_of(2, 2, 2, 4);
  MeshTrainConfig probed = plain;
  probed.probe_repeats = 3;
  MemoryLedger plain_ledger, probed_ledger;
  const MeshTrainResult a = train_on_mesh(
      plain, plain_ledger, [] {}, false);
  const MeshTrainResult b = train_on_mesh(
      probed, probed_ledger, [] {}, false);
  CHECK(a.probe.repeats == 0);
  CHECK(a.probe.forward_layer_us == 0);
  CHECK(b.probe.repeats == 3);
  // rows = 16 / (2 x 4) = 2, h = 16, f / tp = 64 / 2 = 32: 4 rows h f/tp FLOP forward, twice that backward.
  CHECK(b.probe.forward_layer_flop == 4.0 * 2 * 16 * 32);
  CHECK(b.probe.backward_layer_flop == 8.0 * 2 * 16 * 32);
  CHECK(b.probe.forward_layer_us > 0);
  CHECK(b.probe.backward_layer_us > 0);
  CHECK(b.probe.tp_all_reduce_us > 0);
  CHECK(b.probe.dp_all_reduce_us > 0);
  // The probe uses the run's own buffers and zeroed gradients: the same weights bit for bit, the same ledger peaks.
  CHECK(a.weights == b.weights);
  CHECK(a.losses == b.losses);
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    INFO("rank " << r);
    CHECK(a.ranks[r].peak_activation_bytes == b.ranks[r].peak_activation_bytes);
    CHECK(a.ranks[r].scratch_bytes == b.ranks[r].scratch_bytes);
    CHECK(a.ranks[r].tp_bytes == b.ranks[r].tp_bytes);
  }
  // A mesh without a tp group or a dp group has no such all-reduce to time.
  MeshTrainConfig pipeline_only = config_of(1, 1, 2, 2);
  pipeline_only.probe_repeats = 2;
  MemoryLedger ledger;
  const MeshTrainResult c = train_on_mesh(
      pipeline_only, ledger, [] {}, false);
  CHECK(c.probe.forward_layer_us > 0);
  CHECK(c.probe.tp_all_reduce_us == 0);
  CHECK(c.probe.dp_all_reduce_us == 0);
}

TEST_CASE("mesh timeline: every rank's ops, each kind where the mesh has it, in order on its lane") {
  const MeshTrainConfig c = config_of(2, 2, 2, 4);
  MemoryLedger ledger;
  const MeshTrainResult mesh = train_on_mesh(
      c, ledger, [] {}, false);
  std::set<std::string> kinds;
  for (int r = 0; r < 8; ++r) {
    double last_end = 0;
    int forwards = 0;
    for (const MeshSpan& s : mesh.last_step_spans) {
      if (s.rank != r) continue;
      kinds.insert(s.kind);
      CHECK(s.start_us >= last_end);  // one op at a time on a rank
      CHECK(s.end_us >= s.start_us);
      last_end = s.end_us;
      forwards += s.kind == "F";
    }
    CHECK(forwards == 4 * 2);  // every micro-batch through both layers of the stage
  }
  CHECK(kinds == std::set<std::string>{"F", "B", "tp_all_reduce", "dp_all_reduce", "optimizer"});
}

TEST_CASE("mesh: a rank waiting in a group's all-reduce is released when the group is aborted") {
  MemoryLedger ledger;
  tensor::TpGroup group(2, ledger, {.poll = false});
  std::vector<float> buffer(64, 1.0f);
  bool released = false;
  std::thread waiting([&] {
    try {
      group.all_reduce(0, buffer.data(), 64);  // rank 1 never comes
    } catch (const collectives::PeerFailed&) {
      released = true;
    }
  });
  group.abort();
  waiting.join();
  CHECK(released);
}

TEST_CASE("mesh: cancelled between steps, the training stops and says so") {
  MemoryLedger ledger;
  int calls = 0;
  CHECK_THROWS_AS(train_on_mesh(
                      config_of(2, 2, 2, 2), ledger,
                      [&] {
                        if (++calls == 2) throw Cancelled();
                      },
                      false),
                  Cancelled);
  CHECK(calls == 2);
  CHECK(ledger.current_bytes(rank_tag("weights", 0)) == 0);  // every buffer released
}

namespace {

// The ranks' products through RankGemms, computed here by this thread's OpenBLAS: the same sums as without it. It
// also keeps what a GPU's copy of the shards relies on: every product's weight operand lies in the shard last
// reported (forward and input gradient take a weight as b; the weight gradient, whose a is transposed, takes none),
// and a shard is reported before its first product and after each step.
class OpenBlasRankGemms final : public RankGemms {
 public:
  explicit OpenBlasRankGemms(int ranks) : shards_(std::size_t(ranks)), reports_(std::size_t(ranks), 0) {}
  void weights_changed(int rank, const float* host, std::int64_t elements) override {
    shards_[std::size_t(rank)] = {host, host + elements};
    ++reports_[std::size_t(rank)];
  }
  void gemm(int rank, bool trans_a, bool trans_b, int m, int n, int k, const float* a, const float* b, float beta,
            float* c) override {
    const auto [first, last] = shards_[std::size_t(rank)];
    const std::less<const float*> before;
    const bool b_in_shard = !before(b, first) && before(b, last);
    const bool a_in_shard = !before(a, first) && before(a, last);
    if (b_in_shard != !trans_a || a_in_shard) ++misplaced_;
    pipeline::mlp::openblas_gemm()(trans_a, trans_b, m, n, k, a, b, beta, c);
    ++calls_;
  }
  std::int64_t device_bytes() const override { return 0; }
  int reports(int rank) const { return reports_[std::size_t(rank)]; }
  int calls() const { return calls_; }
  int misplaced() const { return misplaced_; }

 private:
  std::vector<std::pair<const float*, const float*>> shards_;
  std::vector<int> reports_;
  std::atomic<int> calls_{0}, misplaced_{0};
};

}  // namespace

TEST_CASE("mesh: the ranks' products through RankGemms give the same weights bit for bit, shards reported each step") {
  const MeshTrainConfig plain = config_of(2, 2, 2, 2);
  MemoryLedger ledger;
  const MeshTrainResult without = train_on_mesh(
      plain, ledger, [] {}, false);
  OpenBlasRankGemms gemms(plain.model.mesh.ranks());
  MeshTrainConfig through = plain;
  through.gemms = &gemms;
  MemoryLedger ledger_through;
  const MeshTrainResult with = train_on_mesh(
      through, ledger_through, [] {}, false);
  CHECK(with.weights == without.weights);
  CHECK(with.losses == without.losses);
  // Six products a layer and micro-batch (forward 2, input gradient 2, weight gradient 2) on every rank and step.
  const MeshModel& m = plain.model;
  CHECK(gemms.calls() == 6 * m.layers_per_stage() * m.micro_batches * m.mesh.ranks() * plain.steps);
  CHECK(gemms.misplaced() == 0);
  for (int r = 0; r < m.mesh.ranks(); ++r) CHECK(gemms.reports(r) == 1 + plain.steps);
}

TEST_CASE("mesh: a product's largest operand is a micro-batch's rows or a weight shard") {
  MeshModel m{.mesh = {1, 2, 1}, .layers = 2, .hidden = 16, .expansion = 4, .batch = 8, .micro_batches = 2};
  CHECK(m.largest_product_elements() == 16 * 32);  // W1 shard (h, f / tp), above rows x f / tp = 4 x 32
  m.batch = 256;
  CHECK(m.largest_product_elements() == 128 * 32);  // (rows, f / tp)
}
