// The mesh's training on rank threads, and the single-device training it is checked against (see mesh_trainer.h).
#include "kernels/mesh/mesh_trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "engine/host_buffer.h"
#include "engine/worker_pool.h"
#include "kernels/pipeline/mailbox.h"
#include "kernels/pipeline/mlp_block.h"
#include "kernels/pipeline/schedule.h"
#include "kernels/tensor/tp_group.h"
#include "kernels/tensor/tp_layer.h"

namespace dlsys::mesh {

std::string rank_tag(const char* kind, int rank) { return fmt::format("{} rank {}", kind, rank); }

namespace {

using Buffer = HostBuffer<float>;
using Clock = std::chrono::steady_clock;
using pipeline::OpKind;
using pipeline::mlp::Residual;

std::uint64_t message_key(OpKind kind, int micro_batch) {
  return 2 * std::uint64_t(micro_batch) + (kind == OpKind::F ? 0 : 1);
}

// What every rank reads or calls: the data, the groups, the pipeline's mailbox and schedule, the step's clock.
struct MeshState {
  const MeshModel& model;
  const training::DataSet& data;
  std::vector<std::unique_ptr<tensor::TpGroup>> tp_groups, dp_groups;  // TpGroup: a thread group and its ring
  pipeline::Mailbox mailbox;
  pipeline::Schedule schedule;
  Clock::time_point origin;
  float learning_rate = 0;
  RankGemms* gemms = nullptr;  // null: OpenBLAS on the rank's thread

  void abort() {
    for (auto& g : tp_groups) g->abort();
    for (auto& g : dp_groups) g->abort();
    mailbox.abort();
  }
};

// What a micro-batch leaves on a stage between its forward and its backward.
struct Stash {
  std::vector<Buffer> x, a;  // per layer: its input (rows, h) and its hidden layer after the ReLU (rows, f / tp)
  Buffer y;                  // last stage: the output, for the loss
};

class Rank {
 public:
  Rank(MeshState& mesh, int rank, MemoryLedger& ledger, const std::vector<float>& initial)
      : mesh_(mesh),
        m_(mesh.model),
        rank_(rank),
        c_(coord_of(m_.mesh, rank)),
        ledger_(ledger),
        rows_(m_.rows_per_micro_batch()),
        weights_(ledger, rank_tag("weights", rank), std::size_t(m_.shard_elements())),
        grads_(ledger, rank_tag("gradients", rank), std::size_t(m_.shard_elements())),
        dy_(ledger, rank_tag("scratch", rank), std::size_t(rows_) * m_.hidden),
        dx_(ledger, rank_tag("scratch", rank), std::size_t(rows_) * m_.hidden),
        dz_(ledger, rank_tag("scratch", rank), std::size_t(rows_) * m_.inner_per_rank()),
        stash_(std::size_t(m_.micro_batches)),
        gemm_(block_gemm()) {
    const std::vector<float> shard = shard_of(m_, c_, initial);
    std::copy(shard.begin(), shard.end(), weights_.data());
    weights_changed();
  }

  void step(int s) {
    spans_.clear();
    report_ = MeshRankReport{.rank = rank_, .coord = c_};
    loss_ = 0;
    std::fill(grads_.data(), grads_.data() + grads_.size(), 0.0f);
    for (const pipeline::Op& op : mesh_.schedule.device_ops[std::size_t(c_.p)])
      op.kind == OpKind::F ? forward(s, op.micro_batch) : backward(s, op.micro_batch);
    all_reduce_gradients();
    const double t0 = now_us();
    for (std::size_t i = 0; i < weights_.size(); ++i) weights_[i] -= mesh_.learning_rate * grads_[i];
    weights_changed();
    add_span("optimizer", "SGD", -1, t0, 0);
    report_.step_us = now_us();
  }

  // The cost probe (MeshCostProbe), `repeats` + 1 times: layer 0's forward on this step's first micro-batch and its
  // tp all-reduce, then its backward and that all-reduce; then layer 0's gradient shard over the dp group as often.
  // The input and hidden layer are one micro-batch's stash of one layer, the rest the backward's scratch buffers, so
  // the ledger's peaks stay the run's. Keeps the times of all but the first of each.
  void probe(int repeats) {
    const int h = m_.hidden, fs = m_.inner_per_rank();
    const std::string tag = rank_tag("activations", rank_);
    Buffer x(ledger_, tag, std::size_t(activation_elements())), a(ledger_, tag, std::size_t(rows_) * fs);
    std::copy_n(mesh_.data.input_rows(first_row(0, 0)), activation_elements(), x.data());
    for (int i = 0; i <= repeats; ++i) {
      double t0 = now_us();
      pipeline::mlp::forward(rows_, h, fs, w1(0), w2(0), x.data(), a.data(), dx_.data(), residual(), gemm_);
      const double forward_us = now_us() - t0;
      const double tp_forward_us = probe_tp_all_reduce(dx_.data());
      t0 = now_us();
      pipeline::mlp::backward_input(rows_, h, fs, w1(0), w2(0), a.data(), dx_.data(), dz_.data(), dy_.data(),
                                    residual(), gemm_);
      pipeline::mlp::backward_weight(rows_, h, fs, x.data(), a.data(), dx_.data(), dz_.data(), dw1(0), dw2(0), gemm_);
      const double backward_us = now_us() - t0;
      const double tp_backward_us = probe_tp_all_reduce(dy_.data());
      if (i == 0) continue;
      probe_.forward_us.push_back(forward_us);
      probe_.backward_us.push_back(backward_us);
      if (m_.mesh.tp > 1) probe_.tp_us.insert(probe_.tp_us.end(), {tp_forward_us, tp_backward_us});
    }
    for (int i = 0; m_.mesh.dp > 1 && i <= repeats; ++i) {
      const double t0 = now_us();
      dp_group().all_reduce(c_.d, dw1(0), m_.layer_shard_elements());  // every step starts its gradients anew
      if (i > 0) probe_.dp_us.push_back(now_us() - t0);
    }
  }
  struct ProbeTimes {
    std::vector<double> forward_us, backward_us, tp_us, dp_us;
  };
  const ProbeTimes& probe_times() const { return probe_; }

  const MeshCoord& coord() const { return c_; }
  double loss() const { return loss_; }  // this step's, counted once per replica (last stage, t = 0)
  const std::vector<MeshSpan>& spans() const { return spans_; }
  const MeshRankReport& report() const { return report_; }
  const Buffer& weights() const { return weights_; }

 private:
  pipeline::mlp::BlockGemm block_gemm() const {
    if (!mesh_.gemms) return pipeline::mlp::openblas_gemm();
    return [gemms = mesh_.gemms, rank = rank_](bool ta, bool tb, int m, int n, int k, const float* a, const float* b,
                                               float beta,
                                               float* c) { gemms->gemm(rank, ta, tb, m, n, k, a, b, beta, c); };
  }
  void weights_changed() {
    if (mesh_.gemms) mesh_.gemms->weights_changed(rank_, weights_.data(), std::int64_t(weights_.size()));
  }
  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - mesh_.origin).count(); }
  bool last_stage() const { return c_.p == m_.mesh.pp - 1; }
  const float* w1(int layer) const { return weights_.data() + layer * m_.layer_shard_elements(); }
  const float* w2(int layer) const { return w1(layer) + std::int64_t(m_.hidden) * m_.inner_per_rank(); }
  float* dw1(int layer) { return grads_.data() + layer * m_.layer_shard_elements(); }
  float* dw2(int layer) { return dw1(layer) + std::int64_t(m_.hidden) * m_.inner_per_rank(); }
  // Only tp rank 0 carries the residual: the all-reduce of the partial sums then adds it once.
  Residual residual() const { return c_.t == 0 ? Residual::Add : Residual::Leave; }
  // The first row of micro-batch `mb` of this replica in step s.
  int first_row(int s, int mb) const { return s * m_.batch + c_.d * (m_.batch / m_.mesh.dp) + mb * rows_; }
  std::int64_t activation_elements() const { return std::int64_t(rows_) * m_.hidden; }

  void add_span(const char* kind, std::string label, int mb, double start_us, std::int64_t bytes) {
    const double end_us = now_us();
    spans_.push_back({rank_, kind, std::move(label), mb, start_us, end_us, bytes});
    const double us = end_us - start_us;
    if (spans_.back().kind == "tp_all_reduce")
      report_.tp_us += us;
    else if (spans_.back().kind == "dp_all_reduce")
      report_.dp_us += us;
    else
      report_.compute_us += us;
  }

  tensor::TpGroup& tp_group() const { return *mesh_.tp_groups[std::size_t(tp_group_of(m_.mesh, c_))]; }
  tensor::TpGroup& dp_group() const { return *mesh_.dp_groups[std::size_t(dp_group_of(m_.mesh, c_))]; }
  // Its time in us; 0 with one tp rank.
  double probe_tp_all_reduce(float* buffer) {
    if (m_.mesh.tp == 1) return 0;
    const double t0 = now_us();
    tp_group().all_reduce(c_.t, buffer, activation_elements());
    return now_us() - t0;
  }

  // In place on `count` floats; returns when the group's sum is here. Nothing with one tp rank.
  void tp_all_reduce(float* buffer, int mb) {
    if (m_.mesh.tp == 1) return;
    const double t0 = now_us();
    const tensor::CollectiveCall call = tp_group().all_reduce(c_.t, buffer, activation_elements());
    add_span("tp_all_reduce", "tp AR", mb, t0, call.bytes_sent);
    report_.tp_bytes += call.bytes_sent;
    ++report_.tp_all_reduces;
  }

  // A message of one activation or gradient for rank (d, t, to_stage); the receiver copies it into its own buffers.
  Buffer message() { return Buffer(ledger_, rank_tag("messages", rank_), std::size_t(activation_elements())); }
  void send(OpKind kind, int mb, int to_stage, Buffer message) {
    mesh_.mailbox.post(rank_of(m_.mesh, {c_.d, c_.t, to_stage}), message_key(kind, mb), std::move(message));
    report_.pp_bytes += activation_elements() * 4;
    ++report_.pp_messages;
  }

  void forward(int s, int mb) {
    const int h = m_.hidden, fs = m_.inner_per_rank(), layers = m_.layers_per_stage();
    Buffer received;
    if (c_.p > 0) received = mesh_.mailbox.take(rank_, message_key(OpKind::F, mb));  // waiting is idle, not F
    double t0 = now_us();
    auto stash = std::make_unique<Stash>();
    const std::string tag = rank_tag("activations", rank_);
    for (int k = 0; k < layers; ++k) {
      stash->x.emplace_back(ledger_, tag, std::size_t(activation_elements()));
      stash->a.emplace_back(ledger_, tag, std::size_t(rows_) * fs);
    }
    if (last_stage()) stash->y = Buffer(ledger_, tag, std::size_t(activation_elements()));
    const float* input = c_.p > 0 ? received.data() : mesh_.data.input_rows(first_row(s, mb));
    std::copy_n(input, activation_elements(), stash->x[0].data());
    received = Buffer();
    Buffer output = last_stage() ? Buffer() : message();  // the last layer writes the message to the next stage
    for (int k = 0; k < layers; ++k) {
      float* out =
          k + 1 < layers ? stash->x[std::size_t(k + 1)].data() : (last_stage() ? stash->y.data() : output.data());
      pipeline::mlp::forward(rows_, h, fs, w1(k), w2(k), stash->x[std::size_t(k)].data(),
                             stash->a[std::size_t(k)].data(), out, residual(), gemm_);
      add_span("F", fmt::format("F{}", mb), mb, t0, 0);
      tp_all_reduce(out, mb);
      t0 = now_us();
    }
    if (last_stage()) {
      if (c_.t == 0)
        loss_ += training::squared_error_loss(stash->y.data(), mesh_.data.target_rows(first_row(s, mb)),
                                              activation_elements(), m_.batch);
    } else {
      send(OpKind::F, mb, c_.p + 1, std::move(output));
    }
    stash_[std::size_t(mb)] = std::move(stash);
  }

  void backward(int s, int mb) {
    const int h = m_.hidden, fs = m_.inner_per_rank();
    Stash& stash = *stash_[std::size_t(mb)];
    double t0 = 0;
    if (last_stage()) {
      t0 = now_us();
      training::squared_error_gradient(stash.y.data(), mesh_.data.target_rows(first_row(s, mb)), activation_elements(),
                                       m_.batch, dy_.data());
    } else {
      Buffer received = mesh_.mailbox.take(rank_, message_key(OpKind::B, mb));
      t0 = now_us();
      std::copy_n(received.data(), activation_elements(), dy_.data());
    }
    for (int k = m_.layers_per_stage() - 1; k >= 0; --k) {
      const float* a = stash.a[std::size_t(k)].data();
      pipeline::mlp::backward_input(rows_, h, fs, w1(k), w2(k), a, dy_.data(), dz_.data(), dx_.data(), residual(),
                                    gemm_);
      pipeline::mlp::backward_weight(rows_, h, fs, stash.x[std::size_t(k)].data(), a, dy_.data(), dz_.data(), dw1(k),
                                     dw2(k), gemm_);
      add_span("B", fmt::format("B{}", mb), mb, t0, 0);
      tp_all_reduce(dx_.data(), mb);
      std::swap(dy_, dx_);  // the input gradient of layer k is the output gradient of layer k - 1
      t0 = now_us();
    }
    if (c_.p > 0) {
      Buffer gradient = message();
      std::copy_n(dy_.data(), activation_elements(), gradient.data());
      send(OpKind::B, mb, c_.p - 1, std::move(gradient));
    }
    stash_[std::size_t(mb)].reset();
  }

  // One bucket a layer, last layer first (the order backward finishes them), over the dp group.
  void all_reduce_gradients() {
    if (m_.mesh.dp == 1) return;
    tensor::TpGroup& group = dp_group();
    const int layers = m_.layers_per_stage();
    for (int k = layers - 1; k >= 0; --k) {
      const double t0 = now_us();
      const tensor::CollectiveCall call = group.all_reduce(c_.d, dw1(k), m_.layer_shard_elements());
      add_span("dp_all_reduce", fmt::format("dp bucket {}", layers - 1 - k), -1, t0, call.bytes_sent);
      report_.dp_bytes += call.bytes_sent;
      ++report_.dp_buckets;
    }
  }

  MeshState& mesh_;
  const MeshModel& m_;
  int rank_;
  MeshCoord c_;
  MemoryLedger& ledger_;
  int rows_;
  Buffer weights_, grads_;                     // the shard, layer after layer, [W1 shard | W2 shard]
  Buffer dy_, dx_, dz_;                        // the backward's: (rows, h), (rows, h), (rows, f / tp)
  std::vector<std::unique_ptr<Stash>> stash_;  // by micro-batch, while its backward has not run
  pipeline::mlp::BlockGemm gemm_;              // the block's products: this thread's OpenBLAS or mesh_.gemms
  std::vector<MeshSpan> spans_;
  MeshRankReport report_;
  ProbeTimes probe_;
  double loss_ = 0;
};

// Runs `work` for every rank at once on threads of its own. The first failure aborts the groups and the mailbox so
// the other ranks stop waiting for the failed one, and is rethrown here (not a peer's "another rank failed").
template <class Work>
void run_ranks(MeshState& mesh, std::vector<std::unique_ptr<Rank>>& ranks, Work work) {
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  try {
    WorkerPool::shared().run(int(ranks.size()), [&](int r) {
      try {
        work(*ranks[std::size_t(r)]);
      } catch (...) {
        if (!failed.exchange(true)) {
          first = std::current_exception();
          mesh.abort();
        }
      }
    });
  } catch (...) {
    if (!first) first = std::current_exception();  // the pool could not start its threads
  }
  if (first) std::rethrow_exception(first);
}

MeshTrainResult gather(const MeshModel& m, const std::vector<std::unique_ptr<Rank>>& ranks, MemoryLedger& ledger) {
  MeshTrainResult out;
  out.weights.resize(std::size_t(training::parameter_count(m.stack())));
  for (const auto& rank : ranks) {
    const MeshCoord c = rank->coord();
    if (c.d == 0) place_shard(m, c, rank->weights().data(), out.weights);
    const Rank& replica0 = *ranks[std::size_t(rank_of(m.mesh, {0, c.t, c.p}))];
    out.replicas_identical =
        out.replicas_identical &&
        std::equal(rank->weights().data(), rank->weights().data() + rank->weights().size(), replica0.weights().data());
    MeshRankReport report = rank->report();
    const int r = report.rank;
    report.weight_bytes = ledger.peak_bytes(rank_tag("weights", r));
    report.gradient_bytes = ledger.peak_bytes(rank_tag("gradients", r));
    report.peak_activation_bytes = ledger.peak_bytes(rank_tag("activations", r));
    report.scratch_bytes = ledger.peak_bytes(rank_tag("scratch", r));
    report.peak_message_bytes = ledger.peak_bytes(rank_tag("messages", r));
    out.ranks.push_back(report);
    out.last_step_spans.insert(out.last_step_spans.end(), rank->spans().begin(), rank->spans().end());
  }
  return out;
}

double mean_of(const std::vector<double>& samples_us) {
  return samples_us.empty() ? 0.0
                            : std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / double(samples_us.size());
}

MeshCostProbe costs_probed(const MeshModel& m, const std::vector<std::unique_ptr<Rank>>& ranks, int repeats) {
  std::vector<double> forward_us, backward_us, tp_us, dp_us;
  for (const auto& rank : ranks) {
    const auto& times = rank->probe_times();
    forward_us.insert(forward_us.end(), times.forward_us.begin(), times.forward_us.end());
    backward_us.insert(backward_us.end(), times.backward_us.begin(), times.backward_us.end());
    tp_us.insert(tp_us.end(), times.tp_us.begin(), times.tp_us.end());
    dp_us.insert(dp_us.end(), times.dp_us.begin(), times.dp_us.end());
  }
  const double forward_flop = 4.0 * m.rows_per_micro_batch() * m.hidden * m.inner_per_rank();
  return {.forward_layer_us = mean_of(forward_us),
          .backward_layer_us = mean_of(backward_us),
          .forward_layer_flop = forward_flop,
          .backward_layer_flop = 2 * forward_flop,
          .tp_all_reduce_us = mean_of(tp_us),
          .dp_all_reduce_us = mean_of(dp_us),
          .repeats = repeats};
}

}  // namespace

MeshTrainResult train_on_mesh(const MeshTrainConfig& config, MemoryLedger& ledger,
                              const std::function<void()>& between_steps, bool poll) {
  const MeshModel& m = config.model;
  if (const std::string problem = model_problem(m); !problem.empty()) throw std::invalid_argument(problem);
  const int n = m.mesh.ranks();
  const tensor::SingleThreadedBlas one_blas_thread_per_rank(n);
  const training::StackShape stack = m.stack();
  const std::vector<float> initial = training::initial_weights(stack, config.seed);
  const training::DataSet data = training::make_data_set(stack, config.steps * m.batch, config.seed);

  const collectives::CommOptions options{.poll = poll};
  MeshState mesh{
      .model = m,
      .data = data,
      .tp_groups = {},
      .dp_groups = {},
      .mailbox = pipeline::Mailbox(n, poll ? pipeline::kMailboxPollUs : 0),
      .schedule = pipeline::make_schedule(
          {.kind = pipeline::ScheduleKind::OneFOneB, .devices = m.mesh.pp, .micro_batches = m.micro_batches}),
      .origin = Clock::now(),
      .learning_rate = config.learning_rate,
      .gemms = config.gemms};
  for (int g = 0; g < tp_group_count(m.mesh); ++g)
    mesh.tp_groups.push_back(std::make_unique<tensor::TpGroup>(m.mesh.tp, ledger, options));
  for (int g = 0; g < dp_group_count(m.mesh); ++g)
    mesh.dp_groups.push_back(std::make_unique<tensor::TpGroup>(m.mesh.dp, ledger, options));
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(std::make_unique<Rank>(mesh, r, ledger, initial));

  MeshCostProbe probe;
  if (config.probe_repeats > 0) {
    between_steps();
    run_ranks(mesh, ranks, [&](Rank& rank) { rank.probe(config.probe_repeats); });
    probe = costs_probed(m, ranks, config.probe_repeats);
  }
  std::vector<double> losses, step_us;
  for (int s = 0; s < config.steps; ++s) {
    between_steps();
    mesh.origin = Clock::now();
    run_ranks(mesh, ranks, [s](Rank& rank) { rank.step(s); });
    double loss = 0, makespan = 0;
    for (const auto& rank : ranks) {
      loss += rank->loss();
      makespan = std::max(makespan, rank->report().step_us);
    }
    losses.push_back(loss);
    step_us.push_back(makespan);
  }
  MeshTrainResult out = gather(m, ranks, ledger);
  out.initial_weights = initial;
  out.losses = std::move(losses);
  out.step_us = std::move(step_us);
  out.probe = probe;
  return out;
}

SingleDeviceResult train_on_one_device(const MeshTrainConfig& config) {
  const MeshModel& m = config.model;
  const training::StackShape stack = m.stack();
  SingleDeviceResult out{training::initial_weights(stack, config.seed), {}};
  const training::DataSet data = training::make_data_set(stack, config.steps * m.batch, config.seed);
  std::vector<float> gradients(out.weights.size());
  training::Activations acts(stack, m.batch);
  for (int s = 0; s < config.steps; ++s) {
    std::fill(gradients.begin(), gradients.end(), 0.0f);
    const training::LayerWeights weights = training::flat_weights(stack, out.weights.data());
    const int first = s * m.batch;
    out.losses.push_back(
        training::forward(stack, weights, data.input_rows(first), data.target_rows(first), m.batch, acts));
    training::backward(
        stack, weights, data.target_rows(first), m.batch, acts,
        [&](int layer) { return gradients.data() + training::layer_offset(stack, layer); }, [](int) {});
    for (std::size_t i = 0; i < gradients.size(); ++i) out.weights[i] -= config.learning_rate * gradients[i];
  }
  return out;
}

}  // namespace dlsys::mesh
