// DDP and DataParallel training on CPU rank threads (see trainer.h for what each does and what each time means).
#include "kernels/ddp/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/abortable_barrier.h"
#include "engine/core_placement.h"
#include "engine/errors.h"
#include "engine/mpi_world.h"
#include "engine/thread_start.h"
#include "kernels/collectives/collectives.h"
#include "kernels/collectives/mpi_collectives.h"
#include "kernels/tensor/tp_layer.h"

namespace dlsys::ddp {

namespace {

using Clock = std::chrono::steady_clock;
using training::StackShape;

double us_since(Clock::time_point origin) {
  return std::chrono::duration<double, std::micro>(Clock::now() - origin).count();
}

// One rank's model and buffers. Everything is allocated before any thread starts.
struct Replica {
  Replica(const TrainConfig& c, int rank, MemoryLedger& ledger)
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
  ~Replica() {
    for (const auto& [tag, bytes] : tags) ledger.release(tag, bytes);
  }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  int rank;
  MemoryLedger& ledger;
  std::vector<std::pair<std::string, std::int64_t>> tags;
  std::vector<float> weights, grads;
  std::vector<std::uint16_t> wire;  // the 16-bit copy of grads that travels (wire formats only)
  training::Activations acts;
  std::vector<float> inputs, targets;  // DataParallel workers: the rows the master scattered to them
  std::vector<OpSpan> compute_spans, comm_spans;
  double step_start_us = 0, backward_start_us = 0, backward_end_us = 0;
  std::atomic<std::int64_t> ready{0};  // DDP: gradient elements final so far, counted over all steps
  std::atomic<int> comm_done{0};       // DDP: steps whose buckets are all reduced
};

void sgd(std::vector<float>& weights, const std::vector<float>& grads, float lr) {
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] -= lr * grads[i];
}

double overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

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

// Runs body(rank) on one thread per rank and joins them; the first exception is rethrown here. `abandon()` must make
// every rank return without waiting for its peers: it is called when a rank thread cannot be started or one throws,
// since the others would otherwise wait for it forever.
template <typename Body, typename Abandon>
void on_rank_threads(int n, Body body, Abandon abandon) {
  FirstError error;
  std::vector<std::thread> threads;
  auto guarded = [&](int r) {
    try {
      body(r);
    } catch (...) {
      error.capture();
      abandon();
    }
  };
  start_threads(threads, 0, n, guarded, abandon, "rank threads of the data-parallel run");
  for (std::thread& t : threads) t.join();
  error.rethrow_if_any();
}

// Thrown on a rank that gives up because a peer failed; the peer's own error is the one reported.
struct PeerAbandoned : RunFailure {
  PeerAbandoned() : RunFailure("a peer rank of the data-parallel run failed") {}
};

// Forward and backward of micro-step `micro` on `rows` rows, recording spans; `on_ready` after each layer's backward.
template <typename OnReady>
void forward_backward(const TrainConfig& c, Replica& rep, const float* inputs, const float* targets,
                      Clock::time_point origin, bool last_micro, OnReady on_ready) {
  const StackShape& shape = c.shape;
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

// Rank `rank`'s forward and backward passes of step `step` (every micro-step), announcing each layer's gradient as
// ready on the last one (before it, no_sync: gradients accumulate locally), then waiting until its communication
// thread has all-reduced every bucket of the step (or, with `abandoned` given, until the run is abandoned:
// PeerAbandoned).
void compute_step(const TrainConfig& c, const training::DataSet& data, Replica& rep, int rank, int step,
                  Clock::time_point origin, const std::atomic<bool>* abandoned = nullptr) {
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

void keep_last_step(TrainResult& out, std::vector<std::unique_ptr<Replica>>& reps) {
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

TrainResult train_ddp(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger) {
  const int n = c.ranks;
  const std::int64_t params = training::parameter_count(c.shape);
  TrainResult out;
  out.buckets = assign_buckets(c.shape, c.bucket_elements);
  out.steps.assign(std::size_t(c.steps), std::vector<RankStep>(std::size_t(n)));
  std::vector<std::unique_ptr<Replica>> reps;
  for (int r = 0; r < n; ++r) reps.push_back(std::make_unique<Replica>(c, r, ledger));
  // Waiting ranks sleep instead of spinning: the compute threads need the cores the communication threads share.
  collectives::CommOptions options;
  options.poll = false;
  collectives::Communicator comm(n, ledger, options);
  // With no core to spare, the communication threads get one of their own (as NCCL has its own stream on a GPU):
  // otherwise they could run only between the compute threads' time slices and nothing would overlap backward.
  const CoreSplit cores = split_cores_for_communication(n, allowed_cores());
  out.communication_core_set_aside = cores.set_aside;
  const Clock::time_point origin = Clock::now();
  AbortableBarrier step_barrier(n);
  // Set when a compute or communication thread fails or cannot start: every thread then stops instead of waiting for
  // a peer that will not come (the counters are bumped so that threads asleep on them wake and see it).
  std::atomic<bool> abandoned{false};
  auto abandon = [&] {
    abandoned = true;
    step_barrier.abort();
    for (const auto& rep : reps) {
      rep->ready.fetch_add(1, std::memory_order_release);
      rep->ready.notify_all();
      rep->comm_done.fetch_add(1, std::memory_order_release);
      rep->comm_done.notify_all();
    }
  };

  // The communication thread of rank r: each bucket, in order, as soon as backward has finished its layers.
  auto communicate = [&](int r) {
    keep_current_thread_on(cores.communication);
    Replica& rep = *reps[std::size_t(r)];
    for (int s = 0; s < c.steps; ++s) {
      for (std::size_t b = 0; b < out.buckets.size(); ++b) {
        const Bucket& bucket = out.buckets[b];
        const std::int64_t needed = std::int64_t(s) * params + (params - bucket.begin);
        for (std::int64_t v = rep.ready.load(std::memory_order_acquire); v < needed && !abandoned;
             v = rep.ready.load(std::memory_order_acquire))
          rep.ready.wait(v, std::memory_order_acquire);
        if (abandoned) throw PeerAbandoned();  // the communicator then stops this rank's peers in their rings
        // The compute thread read the last step's spans before this step's backward began: safe to start afresh.
        if (b == 0) rep.comm_spans.clear();
        const double t = us_since(origin);
        if (c.wire == WireFormat::Fp32) {
          collectives::RankBuffers buffers;
          for (const auto& q : reps) {
            buffers.send.push_back(q->grads.data() + bucket.begin);
            buffers.recv.push_back(q->grads.data() + bucket.begin);
          }
          buffers.count = bucket.elements();
          collectives::ring_rank(comm, r, collectives::Op::AllReduce, buffers, nullptr);
        } else {
          encode_16(c.wire, rep.grads.data() + bucket.begin, rep.wire.data() + bucket.begin, bucket.elements());
          ring_allreduce_16(comm, r, c.wire, rep.wire.data() + bucket.begin, bucket.elements());
          decode_16(c.wire, rep.wire.data() + bucket.begin, rep.grads.data() + bucket.begin, bucket.elements());
        }
        rep.comm_spans.push_back({r, true, "all_reduce", fmt::format("bucket {}", b), t, us_since(origin)});
      }
      rep.comm_done.fetch_add(1, std::memory_order_release);
      rep.comm_done.notify_all();
    }
  };
  std::exception_ptr comm_error;
  std::vector<std::thread> driver;
  start_threads(
      driver, 0, 1,
      [&](int) {
        try {
          comm.run_on_ranks(communicate);
        } catch (...) {
          comm_error = std::current_exception();
          abandon();
        }
      },
      [] {}, "the communication driver of the data-parallel run");

  auto compute = [&](int r) {
    keep_current_thread_on(cores.compute);
    Replica& rep = *reps[std::size_t(r)];
    for (int s = 0; s < c.steps; ++s) {
      if (!step_barrier.arrive_and_wait()) return;
      rep.step_start_us = us_since(origin);
      rep.compute_spans.clear();
      compute_step(c, data, rep, r, s, origin, &abandoned);
      optimizer_step(c, rep, origin);
      out.steps[std::size_t(s)][std::size_t(r)] = summarize(rep, us_since(origin), true);
    }
  };
  std::exception_ptr compute_error;
  try {
    on_rank_threads(n, compute, abandon);
  } catch (...) {
    compute_error = std::current_exception();
  }
  driver.front().join();
  if (compute_error) std::rethrow_exception(compute_error);
  if (comm_error) std::rethrow_exception(comm_error);

  keep_last_step(out, reps);
  out.weights = reps.front()->weights;
  for (const auto& rep : reps) out.replicas_identical &= rep->weights == out.weights;
  out.rank0_bytes_sent_per_step = comm.bytes_sent_by(0) / c.steps;
  out.rank0_bytes_received_per_step = n > 1 ? comm.bytes_sent_by(n - 1) / c.steps : 0;  // its left neighbour's sends
  return out;
}

TrainResult train_data_parallel(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger) {
  const int n = c.ranks, rows = c.rows_per_micro_step(), share = c.global_batch / n, w = c.shape.width;
  TrainResult out;
  out.steps.assign(std::size_t(c.steps), std::vector<RankStep>(std::size_t(n)));
  std::vector<std::unique_ptr<Replica>> reps;
  for (int r = 0; r < n; ++r) reps.push_back(std::make_unique<Replica>(c, r, ledger));
  for (int r = 1; r < n; ++r) {
    reps[std::size_t(r)]->inputs.resize(std::size_t(share) * w);
    reps[std::size_t(r)]->targets.resize(std::size_t(share) * w);
  }
  Replica& master = *reps.front();
  const std::int64_t params = std::int64_t(master.weights.size());
  std::vector<float> gathered(static_cast<std::size_t>(params));
  std::vector<std::uint16_t> gathered_16(c.wire == WireFormat::Fp32 ? 0 : std::size_t(params));
  const std::int64_t scratch_bytes =
      std::int64_t(gathered.size() * 4 + gathered_16.size() * 2) + std::int64_t(n - 1) * 2 * share * w * 4;
  ledger.allocate("comm", scratch_bytes);
  std::int64_t sent = 0, received = 0;
  const Clock::time_point origin = Clock::now();
  AbortableBarrier barrier(n);

  auto master_span = [&](const char* label, double t) {
    master.compute_spans.push_back({0, false, "comm", label, t, us_since(origin)});
  };
  // The same compute cores as DDP's (a fair race); the master moves the model and the gradients itself, so the core
  // DDP keeps for communication stays unused here: one thread doing every copy is DataParallel's design.
  const CoreSplit cores = split_cores_for_communication(n, allowed_cores());
  out.communication_core_set_aside = cores.set_aside;
  auto work = [&](int r) {
    keep_current_thread_on(cores.compute);
    Replica& rep = *reps[std::size_t(r)];
    for (int s = 0; s < c.steps; ++s) {
      if (!barrier.arrive_and_wait()) return;
      rep.step_start_us = us_since(origin);
      rep.compute_spans.clear();
      const int first_row = s * c.global_batch;
      if (r == 0) {  // replicate the model, then scatter the batch: the master copies, the workers wait
        double t = us_since(origin);
        for (int q = 1; q < n; ++q) {
          std::memcpy(reps[std::size_t(q)]->weights.data(), master.weights.data(), std::size_t(params) * 4);
          sent += params * 4;
        }
        master_span("replicate", t);
        t = us_since(origin);
        for (int q = 1; q < n; ++q) {
          Replica& worker = *reps[std::size_t(q)];
          const int first = first_row + q * share;
          std::memcpy(worker.inputs.data(), data.input_rows(first), std::size_t(share) * w * 4);
          std::memcpy(worker.targets.data(), data.target_rows(first), std::size_t(share) * w * 4);
          sent += std::int64_t(2) * share * w * 4;
        }
        master_span("scatter", t);
      }
      if (!barrier.arrive_and_wait()) return;
      std::fill(rep.grads.begin(), rep.grads.end(), 0.0f);
      for (int j = 0; j < c.accumulate; ++j) {
        const float* in =
            r == 0 ? data.input_rows(first_row + j * rows) : rep.inputs.data() + std::size_t(j) * rows * w;
        const float* tg =
            r == 0 ? data.target_rows(first_row + j * rows) : rep.targets.data() + std::size_t(j) * rows * w;
        forward_backward(c, rep, in, tg, origin, j == c.accumulate - 1, [](int) {});
      }
      if (!barrier.arrive_and_wait()) return;
      if (r == 0) {  // gather every gradient to the master and sum them there, in rank order
        const double t = us_since(origin);
        if (c.wire != WireFormat::Fp32) {  // 16 bits on the wire: the master's own gradient is rounded the same way
          encode_16(c.wire, master.grads.data(), gathered_16.data(), params);
          decode_16(c.wire, gathered_16.data(), master.grads.data(), params);
        }
        for (int q = 1; q < n; ++q) {
          const Replica& worker = *reps[std::size_t(q)];
          if (c.wire == WireFormat::Fp32) {
            std::memcpy(gathered.data(), worker.grads.data(), std::size_t(params) * 4);
          } else {
            encode_16(c.wire, worker.grads.data(), gathered_16.data(), params);
            decode_16(c.wire, gathered_16.data(), gathered.data(), params);
          }
          received += params * wire_bytes_per_element(c.wire);
          for (std::int64_t i = 0; i < params; ++i) master.grads[std::size_t(i)] += gathered[std::size_t(i)];
        }
        master_span("gather + sum", t);
        optimizer_step(c, master, origin);
      }
      if (!barrier.arrive_and_wait()) return;  // the workers wait for the master's step
      out.steps[std::size_t(s)][std::size_t(r)] = summarize(rep, us_since(origin), false);
    }
  };
  try {
    on_rank_threads(n, work, [&] { barrier.abort(); });
  } catch (...) {
    ledger.release("comm", scratch_bytes);
    throw;
  }
  ledger.release("comm", scratch_bytes);
  keep_last_step(out, reps);
  out.weights = master.weights;
  out.rank0_bytes_sent_per_step = sent / c.steps;
  out.rank0_bytes_received_per_step = received / c.steps;
  return out;
}

void check_data(const TrainConfig& c, const training::DataSet& data) {
  if (data.samples < std::int64_t(c.steps) * c.global_batch || data.width != c.shape.width)
    throw RunFailure(fmt::format("the data set has {} rows of width {}; {} steps of batch {} need {} of width {}",
                                 data.samples, data.width, c.steps, c.global_batch,
                                 std::int64_t(c.steps) * c.global_batch, c.shape.width));
}

}  // namespace

TrainResult train(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger) {
  check_data(c, data);
  const tensor::SingleThreadedBlas blas(c.ranks);
  return c.mode == SyncMode::Ddp ? train_ddp(c, data, ledger) : train_data_parallel(c, data, ledger);
}

TrainResult train_ddp_process(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger, int rank) {
  check_data(c, data);
  if (c.mode != SyncMode::Ddp || c.wire != WireFormat::Fp32)
    throw RunFailure("ranks as processes train DDP with fp32 gradients only");
  const tensor::SingleThreadedBlas blas;
  const std::int64_t params = training::parameter_count(c.shape);
  TrainResult out;
  out.buckets = assign_buckets(c.shape, c.bucket_elements);
  out.steps.assign(std::size_t(c.steps), std::vector<RankStep>(1));
  Replica rep(c, rank, ledger);
  // The ring reads the gradient and writes the sum elsewhere (its working space may not alias its input).
  std::vector<float> reduced(static_cast<std::size_t>(params));
  ledger.allocate("comm", params * 4);
  const std::int64_t sent_before = collectives::mpi::ring_bytes_sent();
  const std::int64_t received_before = collectives::mpi::ring_bytes_received();
  const Clock::time_point origin = Clock::now();
  std::atomic<bool> comm_failed{false}, compute_failed{false};
  std::exception_ptr comm_error;

  std::thread communicator([&] {
    try {
      for (int s = 0; s < c.steps; ++s) {
        for (std::size_t b = 0; b < out.buckets.size(); ++b) {
          const Bucket& bucket = out.buckets[b];
          const std::int64_t needed = std::int64_t(s) * params + (params - bucket.begin);
          for (std::int64_t v = rep.ready.load(std::memory_order_acquire); v < needed;
               v = rep.ready.load(std::memory_order_acquire))
            rep.ready.wait(v, std::memory_order_acquire);
          if (compute_failed) return;  // the caller ends every rank (its failure cannot be agreed on mid-step)
          if (b == 0) rep.comm_spans.clear();
          const double t = us_since(origin);
          collectives::mpi::ring(collectives::Op::AllReduce, rep.grads.data() + bucket.begin,
                                 reduced.data() + bucket.begin, bucket.elements());
          rep.comm_spans.push_back({rank, true, "all_reduce", fmt::format("bucket {}", b), t, us_since(origin)});
        }
        rep.comm_done.fetch_add(1, std::memory_order_release);
        rep.comm_done.notify_all();
      }
    } catch (...) {
      comm_error = std::current_exception();
      comm_failed = true;
      rep.comm_done.store(c.steps, std::memory_order_release);  // wakes the compute side, which then stops
      rep.comm_done.notify_all();
    }
  });

  std::exception_ptr compute_error;
  try {
    for (int s = 0; s < c.steps && !comm_failed; ++s) {
      // The communication thread is between steps (it finished step s - 1): this thread alone calls MPI here.
      mpi::barrier();
      rep.step_start_us = us_since(origin);
      rep.compute_spans.clear();
      compute_step(c, data, rep, rank, s, origin);
      if (comm_failed) break;
      const double t = us_since(origin);
      sgd(rep.weights, reduced, c.learning_rate);
      rep.compute_spans.push_back({rank, false, "optimizer", "SGD", t, us_since(origin)});
      out.steps[std::size_t(s)][0] = summarize(rep, us_since(origin), true);
    }
  } catch (...) {
    compute_error = std::current_exception();
    // The communication thread may wait for gradients that will never be ready: release it, and it stops.
    compute_failed = true;
    rep.ready.store(std::int64_t(c.steps) * params, std::memory_order_release);
    rep.ready.notify_all();
  }
  communicator.join();
  ledger.release("comm", params * 4);
  if (compute_error) std::rethrow_exception(compute_error);
  if (comm_error) std::rethrow_exception(comm_error);

  for (const auto* spans : {&rep.compute_spans, &rep.comm_spans})
    for (OpSpan span : *spans) {
      span.start_us -= rep.step_start_us;
      span.end_us -= rep.step_start_us;
      out.last_step_spans.push_back(std::move(span));
    }
  out.weights = rep.weights;
  out.rank0_bytes_sent_per_step = (collectives::mpi::ring_bytes_sent() - sent_before) / c.steps;
  out.rank0_bytes_received_per_step = (collectives::mpi::ring_bytes_received() - received_before) / c.steps;
  return out;
}

std::vector<float> train_single_rank(const TrainConfig& config, const training::DataSet& data) {
  check_data(config, data);
  const tensor::SingleThreadedBlas blas;
  TrainConfig c = config;
  c.ranks = 1;
  c.accumulate = 1;
  MemoryLedger ledger;
  Replica rep(c, 0, ledger);
  const Clock::time_point origin = Clock::now();
  for (int s = 0; s < c.steps; ++s) {
    std::fill(rep.grads.begin(), rep.grads.end(), 0.0f);
    forward_backward(c, rep, data.input_rows(s * c.global_batch), data.target_rows(s * c.global_batch), origin, true,
                     [](int) {});
    sgd(rep.weights, rep.grads, c.learning_rate);
  }
  return rep.weights;
}

double max_rel_err(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

double train_bytes(const TrainConfig& c) {
  const double params = double(training::parameter_count(c.shape)), w = c.shape.width;
  const double rows = c.rows_per_micro_step();
  const double per_rank = params * (4 + 4 + (c.wire == WireFormat::Fp32 ? 0 : 2)) +
                          (2.0 * c.shape.layers + 1) * rows * w * 4    // activations
                          + 3 * rows * w * 4                           // backward's scratch
                          + 2.0 * (c.global_batch / c.ranks) * w * 4;  // a worker's scattered rows
  const double links = c.ranks > 1 ? double(collectives::Communicator::link_bytes(c.ranks, {})) : 0.0;
  return c.ranks * per_rank + links + params * 6;  // the master's gather buffers
}

}  // namespace dlsys::ddp
