// Rank threads whose all-to-alls go over NCCL between their GPUs (rank_group.h: with_nccl_all_to_all).
#include <stdexcept>

#include "kernels/collectives/all_to_all.h"
#include "kernels/collectives/nccl_thread_ranks.h"
#include "kernels/collectives/rank_group.h"

namespace dlsys::collectives {

namespace {

class NcclAllToAllGroup final : public RankGroup {
 public:
  NcclAllToAllGroup(std::unique_ptr<RankGroup> threads, std::unique_ptr<cuda::NcclThreadRanks> nccl)
      : threads_(std::move(threads)),
        nccl_(std::move(nccl)),
        sent_(std::size_t(threads_->size()), 0),
        received_(std::size_t(threads_->size()), 0) {
    if (threads_->local_ranks() != threads_->size())
      throw std::logic_error("NCCL between rank threads needs every rank in this process");
  }

  int size() const override { return threads_->size(); }
  int first_local_rank() const override { return 0; }
  int local_ranks() const override { return threads_->size(); }

  void run_on_ranks(const std::function<void(int)>& work) override {
    threads_->run_on_ranks([&](int rank) {
      try {
        work(rank);
      } catch (...) {
        nccl_->abort();
        throw;
      }
    });
  }
  void ring(int rank, Op op, const float* send, float* recv, std::int64_t count) override {
    threads_->ring(rank, op, send, recv, count);
  }
  void all_to_all(int rank, const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                  const std::vector<std::int64_t>& recv_counts) override {
    nccl_->all_to_all(rank, send, send_counts, recv, recv_counts);
    // Each rank writes its own entry only, and they are read between calls. Received: the blocks from the other
    // ranks, counted as the blocks for them are.
    sent_[std::size_t(rank)] += all_to_all_bytes_sent(rank, send_counts);
    received_[std::size_t(rank)] += all_to_all_bytes_sent(rank, recv_counts);
  }
  std::int64_t bytes_sent_by(int rank) const override {
    return threads_->bytes_sent_by(rank) + sent_[std::size_t(rank)];
  }
  std::int64_t bytes_received_by(int rank) const override {
    return threads_->bytes_received_by(rank) + received_[std::size_t(rank)];
  }

  bool barrier(int rank) override { return threads_->barrier(rank); }
  void abort() override {
    nccl_->abort();
    threads_->abort();
  }
  CallTimer timer() const override { return threads_->timer(); }
  double max_over_processes(double value) const override { return threads_->max_over_processes(value); }
  std::int64_t sum_over_processes(std::int64_t value) const override { return threads_->sum_over_processes(value); }
  Communicator* shared_memory_links() override { return threads_->shared_memory_links(); }

 private:
  std::unique_ptr<RankGroup> threads_;
  std::unique_ptr<cuda::NcclThreadRanks> nccl_;
  std::vector<std::int64_t> sent_, received_;
};

}  // namespace

std::unique_ptr<RankGroup> with_nccl_all_to_all(std::unique_ptr<RankGroup> threads,
                                                std::unique_ptr<cuda::NcclThreadRanks> nccl) {
  return std::make_unique<NcclAllToAllGroup>(std::move(threads), std::move(nccl));
}

}  // namespace dlsys::collectives
