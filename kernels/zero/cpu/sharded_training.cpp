// ZeRO stages 0-3 on CPU rank threads (see sharded_training.h for what each rank stores and why the result is exact).
#include "kernels/zero/sharded_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "engine/host_buffer.h"
#include "engine/ledger.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/collectives/ring_schedule.h"
#include "kernels/precision/float_format.h"
#include "kernels/zero/zero_memory.h"

namespace dlsys::zero {

namespace {

using collectives::Op;
using Clock = std::chrono::steady_clock;

const char* const kWeights = "weights";
const char* const kGradients = "gradients";
const char* const kOptimizer = "optimizer";
const char* const kActivations = "activations";
const char* const kComm = "comm";
const char* const kWorkspace = "workspace";

std::uint16_t to_bits(precision::Format f, float x) {
  return f == precision::Format::Fp16 ? precision::fp16_bits_from_float(x) : precision::bf16_bits_from_float(x);
}
float from_bits(precision::Format f, std::uint16_t b) {
  return f == precision::Format::Fp16 ? precision::float_from_fp16_bits(b) : precision::float_from_bf16_bits(b);
}

// Adam on one element, bias-corrected; the one place the update is written, so every stage runs the same arithmetic.
struct AdamStep {
  float learning_rate, correction1, correction2;
  void update(float& master, float& m, float& v, float g) const {
    m = kBeta1 * m + (1 - kBeta1) * g;
    v = kBeta2 * v + (1 - kBeta2) * g * g;
    const float m_hat = m / correction1, v_hat = v / correction2;
    master -= learning_rate * m_hat / (std::sqrt(v_hat) + kEpsilon);
  }
};

struct Layout {
  training::StackShape shape;
  int ranks;
  std::int64_t layer_elements, chunk, psi, shard;
  // Where rank r's chunk of a layer starts inside that layer.
  std::int64_t chunk_start(int rank) const {
    return collectives::chunk_begin(layer_elements, ranks, collectives::owned_chunk(rank, ranks));
  }
};

class Rank {
 public:
  Rank(const ZeroConfig& config, const Layout& layout, int rank, const std::vector<float>& initial,
       collectives::RankGroup& group)
      : config_(config), layout_(layout), rank_(rank), group_(group), acts_(config.shape, config.rows_per_rank) {
    const int stage = config.stage;
    const std::int64_t psi = layout.psi, shard = layout.shard;
    weights_ = HostBuffer<std::uint16_t>(ledger, kWeights, std::size_t(stage >= 3 ? shard : psi));
    gradients_ = HostBuffer<std::uint16_t>(ledger, kGradients, std::size_t(stage >= 2 ? shard : psi));
    const std::size_t optimizer_elements = std::size_t(stage >= 1 ? shard : psi);
    master_ = HostBuffer<float>(ledger, kOptimizer, optimizer_elements);
    m_ = HostBuffer<float>(ledger, kOptimizer, optimizer_elements);
    v_ = HostBuffer<float>(ledger, kOptimizer, optimizer_elements);
    std::fill_n(m_.data(), optimizer_elements, 0.0f);
    std::fill_n(v_.data(), optimizer_elements, 0.0f);
    // Activations allocate their own storage: recorded here at the size they report.
    ledger.allocate(kActivations, acts_.bytes());
    const std::size_t layer = std::size_t(layout.layer_elements);
    if (stage < 3) layer_weights_ = HostBuffer<float>(ledger, kWorkspace, layer);
    layer_gradient_ = HostBuffer<float>(ledger, kWorkspace, layer);
    for (std::int64_t i = 0; i < std::int64_t(optimizer_elements); ++i)
      master_[std::size_t(i)] = initial[full_index(i)];
    if (stage >= 3)
      for (std::int64_t i = 0; i < shard; ++i)
        weights_[std::size_t(i)] = to_bits(config.dtype, master_[std::size_t(i)]);
    else
      for (std::int64_t i = 0; i < psi; ++i) weights_[std::size_t(i)] = to_bits(config.dtype, initial[std::size_t(i)]);
  }

  MemoryLedger ledger;
  std::vector<RankSpan> spans;
  std::vector<CollectiveRecord> records;
  std::vector<double> step_us;
  std::vector<double> losses;
  std::int64_t comm_bytes_last_step = 0;

  void train(const training::DataSet& data, Clock::time_point origin) {
    for (int step = 0; step < config_.steps; ++step) {
      const bool last = step + 1 == config_.steps;
      spans.clear();
      records.clear();
      // Only this rank's thread sends on the links it owns, so it may read their counters while the others run.
      const std::int64_t sent_before = group_.bytes_sent_by(rank_);
      const Clock::time_point start = Clock::now();
      step_origin_ = origin;
      losses.push_back(train_step(data, step));
      step_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (last) comm_bytes_last_step = group_.bytes_sent_by(rank_) - sent_before;
    }
  }

  // The rank's shard of the fp32 master weights, written into the full vector at its own positions.
  void write_master(std::vector<float>& full) const {
    const std::int64_t owned = config_.stage >= 1 ? layout_.shard : layout_.psi;
    for (std::int64_t i = 0; i < owned; ++i) full[full_index(i)] = master_[std::size_t(i)];
  }

  RankPeakBytes peaks() const {
    RankPeakBytes p;
    p.weights = ledger.peak_bytes(kWeights);
    p.gradients = ledger.peak_bytes(kGradients);
    p.optimizer = ledger.peak_bytes(kOptimizer);
    p.activations = ledger.peak_bytes(kActivations);
    p.comm = ledger.peak_bytes(kComm);
    p.workspace = ledger.peak_bytes(kWorkspace);
    p.model_states = p.weights + p.gradients + p.optimizer;
    p.total = ledger.total_peak_bytes();
    return p;
  }

 private:
  // Index i of what this rank's optimizer holds, as an index into the flat weight vector.
  std::size_t full_index(std::int64_t i) const {
    if (config_.stage == 0) return std::size_t(i);
    const std::int64_t layer = i / layout_.chunk, within = i % layout_.chunk;
    return std::size_t(layer * layout_.layer_elements + layout_.chunk_start(rank_) + within);
  }

  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - step_origin_).count(); }

  void span(double start, const char* kind, int layer) { spans.push_back({rank_, start, now_us(), kind, layer}); }

  void collective(Op op, float* buffer, const char* when, int layer) {
    const double start = now_us();
    group_.ring(rank_, op, buffer, buffer, layout_.layer_elements);
    const char* name = op == Op::AllReduce ? "all_reduce" : op == Op::ReduceScatter ? "reduce_scatter" : "all_gather";
    span(start, name, layer);
    records.push_back({name, when, layer, layout_.layer_elements});
  }

  // Stage 3: every rank widens its 16-bit chunk of the layer into a fresh buffer and the ring fills in the rest.
  const float* gather_layer(int layer, const char* when) {
    gathered_.reset();
    gathered_.emplace(ledger, kComm, std::size_t(layout_.layer_elements));
    float* full = gathered_->data();
    const std::int64_t mine = layout_.chunk_start(rank_);
    for (std::int64_t j = 0; j < layout_.chunk; ++j)
      full[mine + j] = from_bits(config_.dtype, weights_[std::size_t(layer * layout_.chunk + j)]);
    collective(Op::AllGather, full, when, layer);
    return full;
  }

  const float* widen_layer(int layer) {
    const std::uint16_t* w = weights_.data() + layer * layout_.layer_elements;
    for (std::int64_t i = 0; i < layout_.layer_elements; ++i)
      layer_weights_[std::size_t(i)] = from_bits(config_.dtype, w[i]);
    return layer_weights_.data();
  }

  // Every step trains on the same global batch (rank r takes rows [r rows, (r + 1) rows)), so the loss falls visibly.
  double train_step(const training::DataSet& data, int step) {
    const int stage = config_.stage, rows = config_.rows_per_rank;
    const std::int64_t first_row = std::int64_t(rank_) * rows;  // the same global batch every step
    const double divisor = double(rows) * layout_.ranks;
    const float* inputs = data.input_rows(int(first_row));
    const float* targets = data.target_rows(int(first_row));

    // Forward: each layer's weights widened (stages 0-2) or all-gathered (stage 3) just before it runs.
    double open = -1;
    int open_layer = -1;
    auto forward_weights = [&](int layer) -> const float* {
      if (open_layer >= 0) span(open, "F", open_layer);
      const float* w = stage >= 3 ? gather_layer(layer, "forward") : widen_layer(layer);
      open = now_us();
      open_layer = layer;
      return w;
    };
    const double loss = training::forward(config_.shape, forward_weights, inputs, targets, divisor, acts_);
    span(open, "F", open_layer);
    gathered_.reset();

    // Backward: the same, last layer first; each layer's gradient is rounded to 16 bits and reduced as soon as it is
    // ready.
    auto backward_weights = [&](int layer) -> const float* {
      const float* w = stage >= 3 ? gather_layer(layer, "backward") : widen_layer(layer);
      open = now_us();
      return w;
    };
    auto gradient_of = [&](int) {
      std::fill_n(layer_gradient_.data(), layer_gradient_.size(), 0.0f);
      return layer_gradient_.data();
    };
    auto layer_ready = [&](int layer) {
      span(open, "B", layer);
      gathered_.reset();  // stage 3: the layer's weights are not needed again this step
      reduce_gradient(layer);
    };
    // The model's backward allocates three (rows, width) fp32 buffers of its own: recorded by their size.
    const std::int64_t backward_rows_bytes = 3 * std::int64_t(sizeof(float)) * rows * config_.shape.width;
    ledger.allocate(kActivations, backward_rows_bytes);
    training::backward(config_.shape, backward_weights, targets, divisor, acts_, gradient_of, layer_ready);
    ledger.release(kActivations, backward_rows_bytes);

    optimizer_step(step);
    return loss;
  }

  void reduce_gradient(int layer) {
    const int stage = config_.stage;
    const std::int64_t n = layout_.layer_elements, base = layer * n;
    HostBuffer<float> bucket(ledger, kComm, std::size_t(n));
    if (stage <= 1) {  // the 16-bit gradient is stored whole, then reduced from there
      for (std::int64_t i = 0; i < n; ++i)
        gradients_[std::size_t(base + i)] = to_bits(config_.dtype, layer_gradient_[std::size_t(i)]);
      for (std::int64_t i = 0; i < n; ++i)
        bucket[std::size_t(i)] = from_bits(config_.dtype, gradients_[std::size_t(base + i)]);
    } else {  // only the shard is stored: the bucket holds the rounded gradient while it is reduced
      for (std::int64_t i = 0; i < n; ++i)
        bucket[std::size_t(i)] = precision::round_to(config_.dtype, layer_gradient_[std::size_t(i)]);
    }
    if (stage == 0) {
      collective(Op::AllReduce, bucket.data(), "backward", layer);
      for (std::int64_t i = 0; i < n; ++i)
        gradients_[std::size_t(base + i)] = to_bits(config_.dtype, bucket[std::size_t(i)]);
      return;
    }
    collective(Op::ReduceScatter, bucket.data(), "backward", layer);
    const std::int64_t mine = layout_.chunk_start(rank_);
    for (std::int64_t j = 0; j < layout_.chunk; ++j) {
      const std::uint16_t g = to_bits(config_.dtype, bucket[std::size_t(mine + j)]);
      if (stage == 1)
        gradients_[std::size_t(base + mine + j)] = g;
      else
        gradients_[std::size_t(layer * layout_.chunk + j)] = g;
    }
  }

  void optimizer_step(int step) {
    const int stage = config_.stage;
    const double start = now_us();
    const AdamStep adam{config_.learning_rate, 1 - std::pow(kBeta1, float(step + 1)),
                        1 - std::pow(kBeta2, float(step + 1))};
    const std::int64_t owned = stage >= 1 ? layout_.shard : layout_.psi;
    for (std::int64_t i = 0; i < owned; ++i) {
      const std::size_t full = full_index(i), s = std::size_t(i);
      const std::uint16_t g16 = stage >= 2 ? gradients_[s] : gradients_[full];
      adam.update(master_[s], m_[s], v_[s], from_bits(config_.dtype, g16));
      weights_[stage >= 3 ? s : full] = to_bits(config_.dtype, master_[s]);
    }
    span(start, "optimizer", -1);
    if (stage == 1 || stage == 2) {  // every rank needs the whole updated 16-bit copy for the next forward
      for (int layer = 0; layer < config_.shape.layers; ++layer) {
        HostBuffer<float> bucket(ledger, kComm, std::size_t(layout_.layer_elements));
        const std::int64_t base = layer * layout_.layer_elements, mine = layout_.chunk_start(rank_);
        for (std::int64_t j = 0; j < layout_.chunk; ++j)
          bucket[std::size_t(mine + j)] = from_bits(config_.dtype, weights_[std::size_t(base + mine + j)]);
        collective(Op::AllGather, bucket.data(), "after step", layer);
        for (std::int64_t i = 0; i < layout_.layer_elements; ++i)
          weights_[std::size_t(base + i)] = to_bits(config_.dtype, bucket[std::size_t(i)]);
      }
    }
  }

  const ZeroConfig& config_;
  const Layout& layout_;
  int rank_;
  collectives::RankGroup& group_;
  training::Activations acts_;
  HostBuffer<std::uint16_t> weights_, gradients_;
  HostBuffer<float> master_, m_, v_;
  HostBuffer<float> layer_weights_, layer_gradient_;
  std::optional<HostBuffer<float>> gathered_;
  Clock::time_point step_origin_;
};

Layout layout_of(const ZeroConfig& c) {
  const std::int64_t layer = training::parameters_per_layer(c.shape);
  return {c.shape,
          c.ranks,
          layer,
          layer / c.ranks,
          training::parameter_count(c.shape),
          training::parameter_count(c.shape) / c.ranks};
}

}  // namespace

bool shards_evenly(const training::StackShape& shape, int ranks) {
  return ranks >= 1 && training::parameters_per_layer(shape) % ranks == 0;
}

double training_bytes_bound(const ZeroConfig& c) {
  const double psi = double(training::parameter_count(c.shape));
  const double layer = double(training::parameters_per_layer(c.shape));
  const double rows = double(c.rows_per_rank) * c.shape.width;
  const double per_rank = 16 * psi + 4 * 4 * layer + 4 * rows * (2 * c.shape.layers + 4);
  const double data = 2.0 * 4 * rows * c.ranks;
  const double links = c.ranks > 1 ? double(collectives::Communicator::link_bytes(c.ranks, {})) : 0;
  return c.ranks * per_rank + data + links + 2 * 4 * psi;  // + the initial and the final full weight vectors
}

ZeroTraining train_sharded(const ZeroConfig& config) {
  if (config.stage < 0 || config.stage > kMaxStage) throw std::invalid_argument("ZeRO stage must be 0, 1, 2 or 3");
  if (!shards_evenly(config.shape, config.ranks))
    throw std::invalid_argument("each layer's 2 w^2 weights must divide evenly over the ranks");
  const Layout layout = layout_of(config);
  const training::DataSet data =
      training::make_data_set(config.shape, config.rows_per_rank * config.ranks, config.seed);
  MemoryLedger link_ledger;
  const std::unique_ptr<collectives::RankGroup> group = collectives::make_thread_group(config.ranks, link_ledger);
  std::vector<std::unique_ptr<Rank>> ranks;
  {
    const std::vector<float> initial = training::initial_weights(config.shape, config.seed);
    for (int r = 0; r < config.ranks; ++r) ranks.push_back(std::make_unique<Rank>(config, layout, r, initial, *group));
  }
  const Clock::time_point origin = Clock::now();
  group->run_on_ranks([&](int r) { ranks[std::size_t(r)]->train(data, origin); });

  ZeroTraining out;
  out.master_weights.assign(std::size_t(layout.psi), 0.0f);
  for (const auto& r : ranks) r->write_master(out.master_weights);
  out.link_bytes = link_ledger.total_peak_bytes();
  out.collectives = ranks.front()->records;
  out.losses.assign(std::size_t(config.steps), 0.0);
  out.step_us.assign(std::size_t(config.steps), 0.0);
  double last_start = 1e300;
  for (const auto& r : ranks) {
    out.peaks.push_back(r->peaks());
    out.comm_bytes_last_step.push_back(r->comm_bytes_last_step);
    for (int s = 0; s < config.steps; ++s) {
      out.losses[std::size_t(s)] += r->losses[std::size_t(s)];
      out.step_us[std::size_t(s)] = std::max(out.step_us[std::size_t(s)], r->step_us[std::size_t(s)]);
    }
    for (const RankSpan& s : r->spans) last_start = std::min(last_start, s.start_us);
  }
  for (const auto& r : ranks)
    for (RankSpan s : r->spans) {
      s.start_us -= last_start;
      s.end_us -= last_start;
      out.spans.push_back(s);
    }
  return out;
}

}  // namespace dlsys::zero
