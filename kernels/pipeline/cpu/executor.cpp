// The real pipeline executor (see executor.h): stage workers, a mailbox of real copies, timestamps, the reference.
#include "kernels/pipeline/executor.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "engine/address_space.h"
#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "engine/thread_start.h"
#include "kernels/pipeline/executor_common.h"
#include "kernels/pipeline/mailbox.h"
#include "kernels/pipeline/mlp_block.h"

namespace dlsys::pipeline {

namespace {

using Buffer = HostBuffer<float>;
using Clock = std::chrono::steady_clock;

// What a micro-batch leaves on a stage between its F and its last backward op.
struct Stash {
  std::vector<Buffer> x, a;    // per block: its input (rows, hidden) and its relu output (rows, hidden)
  Buffer y;                    // last model stage only: the output, for the loss gradient
  std::vector<Buffer> dy, dz;  // per block, kept from a split B until its W
};

// One model stage as one device holds it (DualPipe keeps two replicas of every stage, on two devices).
struct StageInstance {
  int stage = 0;
  int blocks = 1;
  std::vector<Buffer> w1, w2, dw1, dw2;       // per block: (hidden, hidden)
  std::vector<std::unique_ptr<Stash>> stash;  // by micro-batch
};

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// CPU time this thread has used, us.
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

class Pipeline {
 public:
  Pipeline(const Schedule& s, const ExecutorConfig& c, MemoryLedger& ledger)
      : s_(s), ledger_(ledger), mailbox_(s.devices(), kMailboxPollUs), rows_(c.microbatch_rows), h_(c.hidden) {
    const std::size_t matrix = std::size_t(h_) * h_;
    instances_.resize(std::size_t(s.devices()) * s.chunks_per_device);
    for (int mb = 0; mb < s.micro_batches(); ++mb)
      for (int stage = 0; stage < s.stages; ++stage) {
        StageInstance& inst = instance(s.device_of(mb, stage), s.chunk_of(mb, stage));
        if (!inst.w1.empty()) continue;
        inst.stage = stage;
        inst.blocks = blocks_of(stage, s.stages, c);
        inst.stash.resize(s.micro_batches());
        for (int k = 0; k < inst.blocks; ++k) {
          inst.w1.emplace_back(ledger, "weights", matrix);
          inst.w2.emplace_back(ledger, "weights", matrix);
          inst.dw1.emplace_back(ledger, "gradients", matrix);
          inst.dw2.emplace_back(ledger, "gradients", matrix);
          fill_uniform(inst.w1.back().data(), matrix, weight_seed(stage, k, 1), weight_scale(h_));
          fill_uniform(inst.w2.back().data(), matrix, weight_seed(stage, k, 2), weight_scale(h_));
        }
      }
    // The batch, as the data loader would hand it to stage 0: m micro-batches of (rows, hidden).
    for (int mb = 0; mb < s.micro_batches(); ++mb) {
      inputs_.emplace_back(ledger, "input batch", std::size_t(rows_) * h_);
      fill_uniform(inputs_.back().data(), inputs_.back().size(), input_seed(mb), 1.0f);
    }
  }

  void zero_gradients() {
    for (auto& inst : instances_)
      for (int k = 0; k < inst.blocks; ++k) {
        std::fill(inst.dw1[k].data(), inst.dw1[k].data() + inst.dw1[k].size(), 0.0f);
        std::fill(inst.dw2[k].data(), inst.dw2[k].data() + inst.dw2[k].size(), 0.0f);
      }
  }

  // Waits for the op's input: the previous stage's activations for F, the next stage's gradient for B.
  Buffer receive(int device, const Op& op) {
    if (op.kind == OpKind::F && op.stage > 0) return mailbox_.take(device, key(op));
    if (op.kind == OpKind::B && op.stage < s_.stages - 1) return mailbox_.take(device, key(op));
    return {};
  }

  struct Done {
    Clock::time_point end;  // when the op's output was complete (taken before it is posted: receivers start later)
    double copy_us = 0;     // time spent copying the output into the receiver's buffer
  };
  // Runs one op on `device` with its input.
  Done run(int device, const Op& op, Buffer input) {
    StageInstance& inst = instance(device, s_.chunk_of(op.micro_batch, op.stage));
    if (op.kind == OpKind::F) return forward(device, inst, op, std::move(input));
    if (op.kind == OpKind::B) return backward(device, inst, op, std::move(input));
    weight(inst, op);
    return {Clock::now(), 0};
  }

  void abort() { mailbox_.abort(); }
  const std::vector<StageInstance>& instances() const { return instances_; }

 private:
  StageInstance& instance(int device, int chunk) {
    return instances_[std::size_t(device) * s_.chunks_per_device + chunk];
  }
  std::uint64_t key(const Op& op) const {
    return (std::uint64_t(op.kind) * s_.micro_batches() + op.micro_batch) * s_.stages + op.stage;
  }
  std::size_t elements() const { return std::size_t(rows_) * h_; }

  // A real copy into a buffer the receiving device owns, posted to its mailbox.
  Done send(const Op& to, const float* data, const std::string& tag) {
    const auto start = Clock::now();
    const int receiver = s_.device_of(to.micro_batch, to.stage);
    Buffer message(ledger_, tag, elements());
    std::memcpy(message.data(), data, sizeof(float) * elements());
    const Done done{Clock::now(), us_between(start, Clock::now())};
    mailbox_.post(receiver, key(to), std::move(message));
    return done;
  }

  Done forward(int device, StageInstance& inst, const Op& op, Buffer input) {
    const std::string tag = activation_tag(device);
    auto stash = std::make_unique<Stash>();
    if (op.stage == 0) {  // stage 0 copies its micro-batch out of the batch, as the others copy a message
      input = Buffer(ledger_, tag, elements());
      std::memcpy(input.data(), inputs_[op.micro_batch].data(), sizeof(float) * elements());
    }
    Buffer x = std::move(input);
    for (int k = 0; k < inst.blocks; ++k) {
      Buffer a(ledger_, tag, elements()), y(ledger_, tag, elements());
      mlp::forward(rows_, h_, inst.w1[k].data(), inst.w2[k].data(), x.data(), a.data(), y.data());
      stash->x.push_back(std::move(x));
      stash->a.push_back(std::move(a));
      x = std::move(y);
    }
    inst.stash[op.micro_batch] = std::move(stash);
    Stash& st = *inst.stash[op.micro_batch];
    if (op.stage == s_.stages - 1) {
      st.y = std::move(x);
      return {Clock::now(), 0};
    }
    return send({OpKind::F, op.micro_batch, op.stage + 1}, x.data(),
                activation_tag(s_.device_of(op.micro_batch, op.stage + 1)));
  }

  Done backward(int device, StageInstance& inst, const Op& op, Buffer dy) {
    const std::string tag = activation_tag(device);
    Stash& st = *inst.stash[op.micro_batch];
    if (op.stage == s_.stages - 1) {
      // Loss = sum of y^2 / 2 over the whole batch, divided by its rows: dL/dy = y / (m rows).
      dy = Buffer(ledger_, tag, elements());
      const float scale = 1.0f / float(std::int64_t(rows_) * s_.micro_batches());
      for (std::size_t i = 0; i < elements(); ++i) dy[i] = st.y[i] * scale;
      st.y = Buffer();
    }
    if (op.split) {
      st.dy.resize(inst.blocks);
      st.dz.resize(inst.blocks);
    }
    for (int k = inst.blocks - 1; k >= 0; --k) {
      Buffer dz(ledger_, tag, elements()), dx(ledger_, tag, elements());
      mlp::backward_input(rows_, h_, inst.w1[k].data(), inst.w2[k].data(), st.a[k].data(), dy.data(), dz.data(),
                          dx.data());
      if (op.split) {
        st.dy[k] = std::move(dy);
        st.dz[k] = std::move(dz);
      } else {
        mlp::backward_weight(rows_, h_, st.x[k].data(), st.a[k].data(), dy.data(), dz.data(), inst.dw1[k].data(),
                             inst.dw2[k].data());
      }
      dy = std::move(dx);
    }
    if (!op.split) inst.stash[op.micro_batch].reset();
    // Stage 0 computes its input gradient too (it would feed an embedding): every stage does the same work.
    if (op.stage == 0) return {Clock::now(), 0};
    return send({OpKind::B, op.micro_batch, op.stage - 1}, dy.data(), "p2p gradients");
  }

  void weight(StageInstance& inst, const Op& op) {
    Stash& st = *inst.stash[op.micro_batch];
    for (int k = 0; k < inst.blocks; ++k)
      mlp::backward_weight(rows_, h_, st.x[k].data(), st.a[k].data(), st.dy[k].data(), st.dz[k].data(),
                           inst.dw1[k].data(), inst.dw2[k].data());
    inst.stash[op.micro_batch].reset();
  }

  const Schedule& s_;
  MemoryLedger& ledger_;
  Mailbox mailbox_;
  int rows_, h_;
  std::vector<StageInstance> instances_;
  std::vector<Buffer> inputs_;
};

using Step = MeasuredStep;

// One thread per device; every op waits for its input for real. A pair (DualPipe's F&B) runs its two ops one after
// the other: on a CPU there is no communication for the overlap to hide.
Step run_concurrent(const Schedule& s, Pipeline& pipe) {
  const int p = s.devices();
  Step step;
  step.timing.device_ops.resize(p);
  step.timing.busy.assign(p, 0.0);
  step.durations_us.resize(p);
  std::vector<std::vector<double>> copies(p);
  std::vector<double> cpu_us(p, 0.0);
  // 0 waiting, 1 go, 2 abandoned (a thread could not be started: the others return without running).
  std::atomic<int> go{0};
  Clock::time_point t0;
  std::mutex error_mutex;
  std::exception_ptr error;
  auto worker = [&](int d) {
    int state = 0;
    while ((state = go.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
    if (state == 2) return;
    try {
      const auto& ops = s.device_ops[d];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const bool pair = ops[i].paired;
        Buffer in0 = pipe.receive(d, ops[i]);
        Buffer in1 = pair ? pipe.receive(d, ops[i + 1]) : Buffer();
        for (int half = 0; half < (pair ? 2 : 1); ++half) {
          const Op& op = ops[i + half];
          const auto start = Clock::now();
          const double cpu_start = thread_cpu_us();
          const auto done = pipe.run(d, op, std::move(half == 0 ? in0 : in1));
          cpu_us[d] += thread_cpu_us() - cpu_start;
          copies[d].push_back(done.copy_us);
          TimedOp t{op, d, us_between(t0, start), us_between(t0, done.end)};
          step.timing.device_ops[d].push_back(t);
          step.durations_us[d].push_back(t.end - t.start);
          step.timing.busy[d] += t.end - t.start;
        }
        if (pair) ++i;
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      pipe.abort();
    }
  };
  std::vector<std::thread> threads;
  start_threads(
      threads, 0, p, worker, [&] { go.store(2, std::memory_order_release); }, "the pipeline's device threads");
  t0 = Clock::now();
  go.store(1, std::memory_order_release);
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  for (const auto& ops : step.timing.device_ops)
    for (const TimedOp& t : ops) step.timing.makespan = std::max(step.timing.makespan, t.end);
  for (auto& c : copies)
    for (double v : c)
      if (v > 0) step.copies_us.push_back(v);
  for (int d = 0; d < p; ++d) {
    step.cpu_us += cpu_us[d];
    step.wall_us += step.timing.busy[d];
  }
  return step;
}

// Ops one at a time, in the order a unit-cost simulation starts them (always legal), each timed on its own.
Step run_replayed(const Schedule& s, Pipeline& pipe) {
  Step step;
  step.durations_us.resize(s.devices());
  for (int d = 0; d < s.devices(); ++d) step.durations_us[d].assign(s.device_ops[d].size(), 0.0);
  for (const auto& [device, index] : legal_order(s)) {
    const Op& op = s.device_ops[device][index];
    Buffer in = pipe.receive(device, op);
    const auto start = Clock::now();
    const auto done = pipe.run(device, op, std::move(in));
    step.durations_us[device][index] = us_between(start, done.end);
    if (done.copy_us > 0) step.copies_us.push_back(done.copy_us);
  }
  return step;
}

// OpenBLAS threads per call, for the duration of a run: one per stage worker, so stages do not fight over cores.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : saved_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~SingleThreadedBlas() { openblas_set_num_threads(saved_); }

 private:
  int saved_;
};

}  // namespace

std::string activation_tag(int device) { return fmt::format("activations dev {}", device); }

ExecutionMode resolve_mode(ExecutionMode mode, int devices, int hardware_threads) {
  if (mode == ExecutionMode::Auto)
    return devices <= hardware_threads ? ExecutionMode::Concurrent : ExecutionMode::Replayed;
  if (mode == ExecutionMode::Concurrent && devices > hardware_threads)
    throw BadInput(
        fmt::format("parameter 'mode': value 'concurrent' is not allowed with p = {} on {} hardware threads: "
                    "stages would time-share cores and their idle time would mean nothing; allowed: "
                    "auto or replayed, or p <= {}",
                    devices, hardware_threads, hardware_threads));
  return mode;
}

std::int64_t estimate_executor_bytes(const Schedule& s, const ExecutorConfig& c) {
  const std::int64_t act = std::int64_t(c.microbatch_rows) * c.hidden * 4,
                     matrix = std::int64_t(c.hidden) * c.hidden * 4;
  std::int64_t blocks = 0;
  for (int stage = 0; stage < s.stages; ++stage) blocks += blocks_of(stage, s.stages, c);
  const std::int64_t copies = s.param_copies;
  const std::int64_t m = s.micro_batches();
  // Weights and gradients per replica; at worst every micro-batch stashed (x, a, dy, dz) on every block at once;
  // the reference holds x and a for the whole batch on every block.
  return copies * blocks * 4 * matrix + copies * blocks * m * 4 * act + blocks * (2 * m * act + 2 * matrix) +
         6 * m * act;
}

ExecutionResult execute_schedule(const Schedule& s, const ExecutorConfig& c, MemoryLedger& ledger,
                                 const RunControl& control) {
  ExecutionResult result;
  result.hardware_threads =
      c.hardware_threads > 0 ? c.hardware_threads : int(std::max(1u, std::thread::hardware_concurrency()));
  const ExecutionMode mode = resolve_mode(c.mode, s.devices(), result.hardware_threads);
  result.mode = mode == ExecutionMode::Concurrent ? "concurrent" : "replayed";
  if (mode == ExecutionMode::Concurrent)  // each stage's thread maps a buffer of its own in OpenBLAS
    require_address_space(0, s.devices(), fmt::format("{} stage threads calling OpenBLAS", s.devices()));
  SingleThreadedBlas blas;
  Pipeline pipe(s, c, ledger);
  std::vector<Step> steps;
  const auto warmup_start = Clock::now();
  auto warming_up = [&](int i) {
    return i < c.warmup_steps ||
           std::chrono::duration<double, std::milli>(Clock::now() - warmup_start).count() < c.min_warmup_ms;
  };
  for (int i = 0, timed = 0; timed < std::max(1, c.repeats); ++i) {
    control.check_cancelled();
    const bool warmup = warming_up(i);
    pipe.zero_gradients();
    Step step = mode == ExecutionMode::Concurrent ? run_concurrent(s, pipe) : run_replayed(s, pipe);
    if (mode == ExecutionMode::Replayed) step.timing = simulate(s, measured_model(step.durations_us), 0.0);
    if (!warmup) {
      steps.push_back(std::move(step));
      ++timed;
    }
  }
  // The pipeline's gradient of a block: summed over the devices that hold a replica of its stage.
  result.grad_max_rel_err =
      gradient_max_rel_err(s, c, ledger, [&](int stage, int block, int which, std::vector<double>& sum) {
        for (const StageInstance& inst : pipe.instances())
          if (!inst.w1.empty() && inst.stage == stage) {
            const float* g = (which == 0 ? inst.dw1 : inst.dw2)[block].data();
            for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += g[i];
          }
      });
  report_steps(s, steps, result);
  for (int d = 0; d < s.devices(); ++d) result.peak_activation_bytes.push_back(ledger.peak_bytes(activation_tag(d)));
  return result;
}

}  // namespace dlsys::pipeline
