#include "kernels/moe/overlap.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "kernels/collectives/channel.h"

namespace dlsys::moe {

namespace {

using Clock = std::chrono::steady_clock;

// What one rank's compute and communication threads tell each other: bit (4 m + i) set when step i of micro-batch m
// is done (0 routed, 1 dispatched, 2 computed, 3 combined). An abort wakes the waiter, which gives up.
class RankSignals {
 public:
  void signal(int micro_batch, int step) {
    {
      std::lock_guard lock(mutex_);
      done_ |= 1u << (4 * micro_batch + step);
    }
    changed_.notify_all();
  }
  void wait(int micro_batch, int step) {
    std::unique_lock lock(mutex_);
    const unsigned bit = 1u << (4 * micro_batch + step);
    changed_.wait(lock, [&] { return aborted_ || (done_ & bit) != 0; });
    if (aborted_) throw collectives::PeerFailed();
  }
  void abort() {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  unsigned done_ = 0;
  bool aborted_ = false;
};

enum Step { kRouted = 0, kDispatched = 1, kComputed = 2, kCombined = 3 };

// Runs one phase of a local rank (`first` the group's first) and records it.
class PhaseRunner {
 public:
  PhaseRunner(const MicroBatches& work, std::vector<PhaseSpan>* spans, Clock::time_point origin, int first)
      : work_(work),
        spans_(spans),
        origin_(origin),
        first_(first),
        per_rank_(spans ? std::size_t(work.inputs[0].size()) : 0) {}
  void run(int rank, int lane, int m, Phase phase) {
    const Clock::time_point start = Clock::now();
    const auto local = std::size_t(rank - first_);
    work_.layers[std::size_t(m)]->run_phase(rank, phase, work_.inputs[std::size_t(m)][local],
                                            work_.outputs[std::size_t(m)][local]);
    if (spans_ == nullptr) return;
    const auto us = [&](Clock::time_point t) { return std::chrono::duration<double, std::micro>(t - origin_).count(); };
    per_rank_[local].push_back({rank, lane, m, phase, us(start), us(Clock::now())});
  }
  void collect() {
    if (spans_ == nullptr) return;
    for (const auto& rank : per_rank_) spans_->insert(spans_->end(), rank.begin(), rank.end());
  }

 private:
  const MicroBatches& work_;
  std::vector<PhaseSpan>* spans_;
  Clock::time_point origin_;
  int first_ = 0;
  std::vector<std::vector<PhaseSpan>> per_rank_;  // each rank's threads append to their own (one lane at a time)
};

}  // namespace

void run_in_sequence(const MicroBatches& work, collectives::RankGroup& group, std::vector<PhaseSpan>* spans) {
  PhaseRunner runner(work, spans, Clock::now(), group.first_local_rank());
  group.run_on_ranks([&](int rank) {
    for (int m = 0; m < 2; ++m)
      for (int p = 0; p < kPhases; ++p) {
        const Phase phase = Phase(p);
        const bool comm = phase == Phase::Counts || phase == Phase::Dispatch || phase == Phase::Combine;
        runner.run(rank, comm ? 1 : 0, m, phase);
      }
  });
  runner.collect();
}

void run_overlapped(const MicroBatches& work, collectives::RankGroup& compute, collectives::RankGroup& comm,
                    std::vector<PhaseSpan>* spans) {
  const Clock::time_point origin = Clock::now();
  // Each lane records into its own runner, so the two threads of a rank never append to one vector.
  const int first = compute.first_local_rank();
  PhaseRunner compute_runner(work, spans, origin, first), comm_runner(work, spans, origin, first);
  std::vector<std::unique_ptr<RankSignals>> signals;
  for (int r = 0; r < compute.local_ranks(); ++r) signals.push_back(std::make_unique<RankSignals>());
  const auto abort_all = [&] {
    for (auto& s : signals) s->abort();
  };
  std::exception_ptr comm_error;
  std::thread comm_side([&] {
    try {
      comm.run_on_ranks([&](int rank) {
        RankSignals& s = *signals[std::size_t(rank - first)];
        for (int m = 0; m < 2; ++m) {
          s.wait(m, kRouted);
          comm_runner.run(rank, 1, m, Phase::Counts);
          comm_runner.run(rank, 1, m, Phase::Dispatch);
          s.signal(m, kDispatched);
        }
        for (int m = 0; m < 2; ++m) {
          s.wait(m, kComputed);
          comm_runner.run(rank, 1, m, Phase::Combine);
          s.signal(m, kCombined);
        }
      });
    } catch (...) {
      comm_error = std::current_exception();
      abort_all();
    }
  });
  std::exception_ptr compute_error;
  try {
    compute.run_on_ranks([&](int rank) {
      RankSignals& s = *signals[std::size_t(rank - first)];
      for (int m = 0; m < 2; ++m) {
        compute_runner.run(rank, 0, m, Phase::Route);
        s.signal(m, kRouted);
      }
      for (int m = 0; m < 2; ++m) {
        s.wait(m, kDispatched);
        compute_runner.run(rank, 0, m, Phase::Experts);
        s.signal(m, kComputed);
      }
      for (int m = 0; m < 2; ++m) {
        s.wait(m, kCombined);
        compute_runner.run(rank, 0, m, Phase::Finish);
      }
    });
  } catch (...) {
    compute_error = std::current_exception();
    abort_all();
  }
  comm_side.join();
  // The first failure is the cause; the other side's PeerFailed only followed from it.
  if (compute_error && comm_error) {
    try {
      std::rethrow_exception(compute_error);
    } catch (const collectives::PeerFailed&) {
      std::rethrow_exception(comm_error);
    }
  }
  if (compute_error) std::rethrow_exception(compute_error);
  if (comm_error) std::rethrow_exception(comm_error);
  compute_runner.collect();
  comm_runner.collect();
}

double ideal_overlapped_us(double r, double d, double x, double c, double f) {
  // Two lanes, each one thing at a time, in the order run_overlapped starts them.
  const double route_a = r, route_b = 2 * r;
  const double dispatch_a = route_a + d, dispatch_b = std::max(route_b, dispatch_a) + d;
  const double experts_a = std::max(route_b, dispatch_a) + x, experts_b = std::max(experts_a, dispatch_b) + x;
  const double combine_a = std::max(experts_a, dispatch_b) + c, combine_b = std::max(experts_b, combine_a) + c;
  const double finish_a = std::max(experts_b, combine_a) + f;
  return std::max(finish_a, combine_b) + f;
}

}  // namespace dlsys::moe
