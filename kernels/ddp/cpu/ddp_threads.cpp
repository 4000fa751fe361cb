// DDP on rank threads of this process: per rank a compute thread and a communication thread that all-reduces each
// bucket with the lab's ring through shared memory as soon as backward has freed it.
#include <fmt/format.h>

#include <exception>
#include <memory>

#include "engine/abortable_barrier.h"
#include "engine/core_placement.h"
#include "kernels/collectives/collectives.h"
#include "kernels/ddp/cpu/replica.h"

namespace dlsys::ddp {

namespace {

class DdpOnThreads {
 public:
  DdpOnThreads(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger)
      : c_(c), data_(data), comm_(c.ranks, ledger, quiet_waits()), step_barrier_(c.ranks) {
    for (int r = 0; r < c.ranks; ++r) reps_.push_back(std::make_unique<Replica>(c, r, ledger));
    out_.buckets = assign_buckets(c.shape, c.bucket_elements);
    out_.steps.assign(std::size_t(c.steps), std::vector<RankStep>(std::size_t(c.ranks)));
    out_.communication_core_set_aside = cores_.set_aside;
  }

  TrainResult run() {
    std::exception_ptr comm_error;
    std::vector<std::thread> driver;
    start_threads(
        driver, 0, 1,
        [&](int) {
          try {
            comm_.run_on_ranks([this](int r) { communicate(r); });
          } catch (...) {
            comm_error = std::current_exception();
            abandon();
          }
        },
        [] {}, "the communication driver of the data-parallel run");
    std::exception_ptr compute_error;
    try {
      on_rank_threads(
          c_.ranks, [this](int r) { compute(r); }, [this] { abandon(); });
    } catch (...) {
      compute_error = std::current_exception();
    }
    driver.front().join();
    if (compute_error) std::rethrow_exception(compute_error);
    if (comm_error) std::rethrow_exception(comm_error);

    keep_last_step(out_, reps_);
    out_.weights = reps_.front()->weights;
    for (const auto& rep : reps_) out_.replicas_identical &= rep->weights == out_.weights;
    out_.rank0_bytes_sent_per_step = comm_.bytes_sent_by(0) / c_.steps;
    // Rank 0 receives what its left neighbour sends.
    out_.rank0_bytes_received_per_step = c_.ranks > 1 ? comm_.bytes_sent_by(c_.ranks - 1) / c_.steps : 0;
    return std::move(out_);
  }

 private:
  // Waiting ranks sleep instead of spinning: the compute threads need the cores the communication threads share.
  static collectives::CommOptions quiet_waits() {
    collectives::CommOptions options;
    options.poll = false;
    return options;
  }

  // A compute or communication thread failed or could not start: every thread then stops instead of waiting for a
  // peer that will not come (the counters are bumped so that threads asleep on them wake and see it).
  void abandon() {
    abandoned_ = true;
    step_barrier_.abort();
    for (const auto& rep : reps_) {
      rep->ready.fetch_add(1, std::memory_order_release);
      rep->ready.notify_all();
      rep->comm_done.fetch_add(1, std::memory_order_release);
      rep->comm_done.notify_all();
    }
  }

  void compute(int r) {
    keep_current_thread_on(cores_.compute);
    Replica& rep = *reps_[std::size_t(r)];
    for (int s = 0; s < c_.steps; ++s) {
      if (!step_barrier_.arrive_and_wait()) return;
      rep.step_start_us = us_since(origin_);
      rep.compute_spans.clear();
      compute_step(c_, data_, rep, r, s, origin_, &abandoned_);
      optimizer_step(c_, rep, origin_);
      out_.steps[std::size_t(s)][std::size_t(r)] = summarize(rep, us_since(origin_), true);
    }
  }

  // The communication thread of rank r. A rank that stops because a peer failed throws: the communicator then stops
  // this rank's peers in their rings.
  void communicate(int r) {
    keep_current_thread_on(cores_.communication);
    Replica& rep = *reps_[std::size_t(r)];
    const auto all_reduce = [&](const Bucket& bucket) { all_reduce_bucket(r, bucket); };
    const auto stopped = [&] { return abandoned_.load(); };
    for (int s = 0; s < c_.steps; ++s)
      if (!all_reduce_buckets_of_step(out_.buckets, s, rep, origin_, all_reduce, stopped)) throw PeerAbandoned();
  }

  void all_reduce_bucket(int r, const Bucket& bucket) {
    Replica& rep = *reps_[std::size_t(r)];
    if (c_.wire == WireFormat::Fp32) {
      collectives::RankBuffers buffers;
      for (const auto& q : reps_) {
        buffers.send.push_back(q->grads.data() + bucket.begin);
        buffers.recv.push_back(q->grads.data() + bucket.begin);
      }
      buffers.count = bucket.elements();
      collectives::ring_rank(comm_, r, collectives::Op::AllReduce, buffers, nullptr);
    } else {
      encode_16(c_.wire, rep.grads.data() + bucket.begin, rep.wire.data() + bucket.begin, bucket.elements());
      ring_allreduce_16(comm_, r, c_.wire, rep.wire.data() + bucket.begin, bucket.elements());
      decode_16(c_.wire, rep.wire.data() + bucket.begin, rep.grads.data() + bucket.begin, bucket.elements());
    }
  }

  const TrainConfig& c_;
  const training::DataSet& data_;
  TrainResult out_;
  std::vector<std::unique_ptr<Replica>> reps_;
  collectives::Communicator comm_;
  // With no core to spare, the communication threads get one of their own (as NCCL has its own stream on a GPU):
  // otherwise they could run only between the compute threads' time slices and nothing would overlap backward.
  const CoreSplit cores_ = split_cores_for_communication(c_.ranks, allowed_cores());
  const Clock::time_point origin_ = Clock::now();
  AbortableBarrier step_barrier_;
  std::atomic<bool> abandoned_{false};
};

}  // namespace

TrainResult train_ddp_on_threads(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger) {
  return DdpOnThreads(c, data, ledger).run();
}

}  // namespace dlsys::ddp
