#include "kernels/ddp/cpu/replica.h"

#include <fmt/format.h>

#include <algorithm>

namespace dlsys::ddp {

Replica::Replica(const TrainConfig& c, int rank, MemoryLedger& ledger)
    : rank(rank),
      ledger(ledger),
      weights(training::initial_weights(c.shape, c.seed)),
      grads(weights.size()),
      wire(c.wire == WireFormat::Fp32 ? 0 : weights.size()),
      acts(c.shape, c.rows_per_micro_step()) {
  tags = {{fmt::format("weights rank {}", rank), std::int64_t(weights.size() * 4)},
          {fmt::format("grads rank {}", rank), std::int64_t(grads.size() * 4)},
          {fmt::format("wire rank {}", rank), std::int64_t(wire.size() * 2)},
          {fmt::format("activations rank {}", rank), acts.bytes()}};
  for (const auto& [tag, bytes] : tags) ledger.allocate(tag, bytes);
}

Replica::~Replica() {
  for (const auto& [tag, bytes] : tags) ledger.release(tag, bytes);
}

void sgd(std::vector<float>& weights, const std::vector<float>& grads, float lr) {
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] -= lr * grads[i];
}

namespace {
double overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}
}  // namespace

RankStep summarize(const Replica& rep, double step_end_us, bool ddp) {
  RankStep out;
  out.step_us = step_end_us - rep.step_start_us;
  for (const OpSpan& s : rep.compute_spans) {
    if (s.kind == "comm") {
      out.comm_us += s.end_us - s.start_us;
      out.exposed_comm_us += s.end_us - s.start_us;  // the master copies on its compute thread: nothing hides them
    } else {
      out.compute_us += s.end_us - s.start_us;
    }
  }
  if (ddp) {
    double last_end = rep.backward_end_us;
    for (const OpSpan& s : rep.comm_spans) {
      out.comm_us += s.end_us - s.start_us;
      out.hidden_comm_us += overlap(s.start_us, s.end_us, rep.backward_start_us, rep.backward_end_us);
      last_end = std::max(last_end, s.end_us);
    }
    out.exposed_comm_us = last_end - rep.backward_end_us;
  }
  out.idle_us = std::max(0.0, out.step_us - out.compute_us - out.exposed_comm_us);
  return out;
}

void forward_backward(const TrainConfig& c, Replica& rep, const float* inputs, const float* targets,
                      Clock::time_point origin, bool last_micro, const std::function<void(int layer)>& on_ready) {
  const training::StackShape& shape = c.shape;
  const training::LayerWeights weights = training::flat_weights(shape, rep.weights.data());
  double t = us_since(origin);
  training::forward(shape, weights, inputs, targets, c.global_batch, rep.acts);
  double prev = us_since(origin);
  rep.compute_spans.push_back({rep.rank, false, "F", "F", t, prev});
  if (last_micro) rep.backward_start_us = prev;
  training::backward(
      shape, weights, targets, c.global_batch, rep.acts,
      [&](int layer) { return rep.grads.data() + training::layer_offset(shape, layer); },
      [&](int layer) {
        const double now = us_since(origin);
        rep.compute_spans.push_back({rep.rank, false, "B", fmt::format("B{}", layer), prev, now});
        prev = now;
        on_ready(layer);
      });
  if (last_micro) rep.backward_end_us = prev;
}

void compute_step(const TrainConfig& c, const training::DataSet& data, Replica& rep, int rank, int step,
                  Clock::time_point origin, const std::atomic<bool>* abandoned) {
  const std::int64_t params = training::parameter_count(c.shape);
  const int rows = c.rows_per_micro_step();
  std::fill(rep.grads.begin(), rep.grads.end(), 0.0f);
  for (int j = 0; j < c.accumulate; ++j) {
    const bool last = j == c.accumulate - 1;
    const int first_row = step * c.global_batch + rank * (c.global_batch / c.ranks) + j * rows;
    forward_backward(c, rep, data.input_rows(first_row), data.target_rows(first_row), origin, last, [&](int layer) {
      if (!last) return;
      rep.ready.store(std::int64_t(step) * params + (params - training::layer_offset(c.shape, layer)),
                      std::memory_order_release);
      rep.ready.notify_all();
    });
  }
  const auto given_up = [&] { return abandoned != nullptr && abandoned->load(); };
  for (int v = rep.comm_done.load(std::memory_order_acquire); v < step + 1 && !given_up();
       v = rep.comm_done.load(std::memory_order_acquire))
    rep.comm_done.wait(v, std::memory_order_acquire);
  if (given_up()) throw PeerAbandoned();
}

void optimizer_step(const TrainConfig& c, Replica& rep, Clock::time_point origin) {
  const double t = us_since(origin);
  sgd(rep.weights, rep.grads, c.learning_rate);
  rep.compute_spans.push_back({rep.rank, false, "optimizer", "SGD", t, us_since(origin)});
}

bool all_reduce_buckets_of_step(const std::vector<Bucket>& buckets, int step, Replica& rep, Clock::time_point origin,
                                const std::function<void(const Bucket&)>& all_reduce,
                                const std::function<bool()>& stopped) {
  const std::int64_t params = std::int64_t(rep.grads.size());
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const Bucket& bucket = buckets[b];
    const std::int64_t needed = std::int64_t(step) * params + (params - bucket.begin);
    for (std::int64_t v = rep.ready.load(std::memory_order_acquire); v < needed && !stopped();
         v = rep.ready.load(std::memory_order_acquire))
      rep.ready.wait(v, std::memory_order_acquire);
    if (stopped()) return false;
    // The compute side read the last step's spans before this step's backward began: safe to start afresh.
    if (b == 0) rep.comm_spans.clear();
    const double t = us_since(origin);
    all_reduce(bucket);
    rep.comm_spans.push_back({rep.rank, true, "all_reduce", fmt::format("bucket {}", b), t, us_since(origin)});
  }
  rep.comm_done.fetch_add(1, std::memory_order_release);
  rep.comm_done.notify_all();
  return true;
}

void keep_last_step(TrainResult& out, const std::vector<std::unique_ptr<Replica>>& reps) {
  double origin = reps.front()->step_start_us;
  for (const auto& rep : reps) origin = std::min(origin, rep->step_start_us);
  out.last_step_spans.clear();
  for (const auto& rep : reps)
    for (const auto* spans : {&rep->compute_spans, &rep->comm_spans})
      for (OpSpan s : *spans) {
        s.start_us -= origin;
        s.end_us -= origin;
        out.last_step_spans.push_back(std::move(s));
      }
}

void check_data(const TrainConfig& c, const training::DataSet& data) {
  if (data.samples < std::int64_t(c.steps) * c.global_batch || data.width != c.shape.width)
    throw RunFailure(fmt::format("the data set has {} rows of width {}; {} steps of batch {} need {} of width {}",
                                 data.samples, data.width, c.steps, c.global_batch,
                                 std::int64_t(c.steps) * c.global_batch, c.shape.width));
}

}  // namespace dlsys::ddp
