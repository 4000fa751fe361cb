// Ranks as threads of this process (rank_group.h): the Communicator's rank threads and links, and a barrier that can
// be called off for the ranks' compute side.
#include <memory>
#include <stdexcept>

#include "engine/abortable_barrier.h"
#include "kernels/collectives/all_to_all.h"
#include "kernels/collectives/collectives.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/collectives/ring_schedule.h"

namespace dlsys::collectives {

namespace {

class ThreadGroup final : public RankGroup {
 public:
  ThreadGroup(int n, MemoryLedger& ledger, const CommOptions& options)
      : comm_(n, ledger, options), barrier_(n), sent_at_start_(std::size_t(n)), received_at_start_(std::size_t(n)) {
    for (int r = 0; r < n; ++r) {
      sent_at_start_[std::size_t(r)] = comm_.bytes_sent_by(r);
      received_at_start_[std::size_t(r)] = comm_.bytes_received_by(r);
    }
  }

  int size() const override { return comm_.size(); }
  int first_local_rank() const override { return 0; }
  int local_ranks() const override { return comm_.size(); }

  void run_on_ranks(const std::function<void(int)>& work) override { comm_.run_on_ranks(work); }

  void ring(int rank, Op op, const float* send, float* recv, std::int64_t count) override {
    // ring_rank reads rank `rank`'s entries only.
    RankBuffers buffers{std::vector<const float*>(std::size_t(size()), nullptr),
                        std::vector<float*>(std::size_t(size()), nullptr), count};
    buffers.send[std::size_t(rank)] = send;
    buffers.recv[std::size_t(rank)] = recv;
    ring_rank(comm_, rank, op, buffers, nullptr);
  }

  void all_to_all(int rank, const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                  const std::vector<std::int64_t>& recv_counts) override {
    if (size() > 1 && !comm_.full_mesh())
      throw std::logic_error("all-to-all over rank threads needs a group made with CommOptions::full_mesh");
    all_to_all_rank(comm_, rank, send, send_counts, recv, recv_counts);
  }

  std::int64_t bytes_sent_by(int rank) const override {
    return comm_.bytes_sent_by(rank) - sent_at_start_[std::size_t(rank)];
  }
  std::int64_t bytes_received_by(int rank) const override {
    return comm_.bytes_received_by(rank) - received_at_start_[std::size_t(rank)];
  }

  CallTimer timer() const override { return {}; }
  double max_over_processes(double value) const override { return value; }
  std::int64_t sum_over_processes(std::int64_t value) const override { return value; }

  bool barrier(int) override { return barrier_.arrive_and_wait(); }
  void abort() override { barrier_.abort(); }

  Communicator* shared_memory_links() override { return &comm_; }

 private:
  Communicator comm_;
  AbortableBarrier barrier_;
  std::vector<std::int64_t> sent_at_start_, received_at_start_;
};

}  // namespace

std::unique_ptr<RankGroup> make_thread_group(int n, MemoryLedger& ledger, const CommOptions& options) {
  return std::make_unique<ThreadGroup>(n, ledger, options);
}

}  // namespace dlsys::collectives
