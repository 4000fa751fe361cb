// DDP on the ranks of a RankGroup, threads of this process or one process per rank alike: per local rank a compute
// thread and, in the group's run_on_ranks, a communication side that all-reduces each bucket with the lab's ring as
// soon as backward has freed it.
#include <fmt/format.h>

#include <exception>
#include <memory>

#include "engine/core_placement.h"
#include "kernels/ddp/cpu/replica.h"
#include "kernels/ddp/trainer.h"
#include "kernels/tensor/tp_layer.h"

namespace dlsys::ddp {

namespace {

// The error to report when both sides failed: a side that only gave up because the other failed says less.
std::exception_ptr first_real(std::exception_ptr a, std::exception_ptr b) {
  if (!a) return b;
  if (!b) return a;
  try {
    std::rethrow_exception(a);
  } catch (const PeerAbandoned&) {
    return b;
  } catch (...) {
    return a;
  }
}

class DdpOnRanks {
 public:
  DdpOnRanks(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger, collectives::RankGroup& group)
      : c_(c), data_(data), group_(group) {
    for (int i = 0; i < group.local_ranks(); ++i)
      reps_.push_back(std::make_unique<Replica>(c, group.first_local_rank() + i, ledger));
    out_.buckets = assign_buckets(c.shape, c.bucket_elements);
    out_.steps.assign(std::size_t(c.steps), std::vector<RankStep>(reps_.size()));
    out_.communication_core_set_aside = cores_.set_aside;
  }

  TrainResult run() {
    std::exception_ptr comm_error;
    std::vector<std::thread> driver;
    start_threads(
        driver, 0, 1,
        [&](int) {
          try {
            group_.run_on_ranks([this](int r) { communicate(r); });
          } catch (...) {
            comm_error = std::current_exception();
            abandon();
          }
        },
        [] {}, "the communication driver of the data-parallel run");
    std::exception_ptr compute_error;
    try {
      on_rank_threads(
          int(reps_.size()), [this](int i) { compute(*reps_[std::size_t(i)], i); }, [this] { abandon(); });
    } catch (...) {
      compute_error = std::current_exception();
    }
    driver.front().join();
    if (std::exception_ptr error = first_real(compute_error, comm_error)) std::rethrow_exception(error);

    keep_last_step(out_, reps_);
    out_.weights = reps_.front()->weights;
    for (const auto& rep : reps_) out_.replicas_identical &= rep->weights == out_.weights;
    const int first = group_.first_local_rank();
    out_.rank0_bytes_sent_per_step = group_.bytes_sent_by(first) / c_.steps;
    out_.rank0_bytes_received_per_step = group_.bytes_received_by(first) / c_.steps;
    return std::move(out_);
  }

 private:
  Replica& replica_of(int rank) { return *reps_[std::size_t(rank - group_.first_local_rank())]; }

  // A compute or communication side failed or could not start: every thread then stops instead of waiting for a
  // peer that will not come (the counters are bumped so that threads asleep on them wake and see it).
  void abandon() {
    abandoned_ = true;
    group_.abort();
    for (const auto& rep : reps_) {
      rep->ready.fetch_add(1, std::memory_order_release);
      rep->ready.notify_all();
      rep->comm_done.fetch_add(1, std::memory_order_release);
      rep->comm_done.notify_all();
    }
  }

  // `step_index` is the replica's place in this process's steps (its rank on threads, 0 in a process of its own).
  void compute(Replica& rep, int step_index) {
    keep_current_thread_on(cores_.compute);
    for (int s = 0; s < c_.steps; ++s) {
      // Between processes this is an MPI call: the communication side is between steps (it finished step s - 1).
      if (!group_.barrier(rep.rank) || abandoned_) return;
      rep.step_start_us = us_since(origin_);
      rep.compute_spans.clear();
      compute_step(c_, data_, rep, rep.rank, s, origin_, &abandoned_);
      optimizer_step(c_, rep, origin_);
      out_.steps[std::size_t(s)][std::size_t(step_index)] = summarize(rep, us_since(origin_), true);
    }
  }

  // The communication side of rank r. A rank that stops because a peer failed throws: on threads the group then
  // stops this rank's peers in their rings.
  void communicate(int r) {
    keep_current_thread_on(cores_.communication);
    Replica& rep = replica_of(r);
    const auto all_reduce = [&](const Bucket& bucket) { all_reduce_bucket(rep, bucket); };
    const auto stopped = [&] { return abandoned_.load(); };
    for (int s = 0; s < c_.steps; ++s)
      if (!all_reduce_buckets_of_step(out_.buckets, s, rep, origin_, all_reduce, stopped)) throw PeerAbandoned();
  }

  void all_reduce_bucket(Replica& rep, const Bucket& bucket) {
    float* grads = rep.grads.data() + bucket.begin;
    if (c_.wire == WireFormat::Fp32) {
      group_.ring(rep.rank, collectives::Op::AllReduce, grads, grads, bucket.elements());
      return;
    }
    collectives::Communicator* links = group_.shared_memory_links();
    if (!links) throw RunFailure("16-bit gradient wires run on rank threads only; between processes the ring is fp32");
    std::uint16_t* wire = rep.wire.data() + bucket.begin;
    encode_16(c_.wire, grads, wire, bucket.elements());
    ring_allreduce_16(*links, rep.rank, c_.wire, wire, bucket.elements());
    decode_16(c_.wire, wire, grads, bucket.elements());
  }

  const TrainConfig& c_;
  const training::DataSet& data_;
  collectives::RankGroup& group_;
  TrainResult out_;
  std::vector<std::unique_ptr<Replica>> reps_;
  // With no core to spare, the communication threads get one of their own (as NCCL has its own stream on a GPU):
  // otherwise they could run only between the compute threads' time slices and nothing would overlap backward.
  const CoreSplit cores_ = split_cores_for_communication(group_.local_ranks(), allowed_cores());
  const Clock::time_point origin_ = Clock::now();
  std::atomic<bool> abandoned_{false};
};

}  // namespace

TrainResult train_ddp(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger,
                      collectives::RankGroup& ranks) {
  check_data(c, data);
  if (c.ranks != ranks.size())
    throw RunFailure(fmt::format("{} ranks were configured and the group has {}", c.ranks, ranks.size()));
  const tensor::SingleThreadedBlas blas(ranks.local_ranks());
  return DdpOnRanks(c, data, ledger, ranks).run();
}

}  // namespace dlsys::ddp
