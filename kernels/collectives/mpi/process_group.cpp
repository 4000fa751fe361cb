// The MPI world as a rank group (mpi_collectives.h): one rank per process, the lab's ring over MPI_Sendrecv and the
// all-to-all over MPI_Alltoallv.
#include "engine/errors.h"
#include "engine/mpi_world.h"
#include "engine/process_timing.h"
#include "kernels/collectives/mpi_collectives.h"

namespace dlsys::collectives::mpi {

namespace {

// What this process has sent and received, over the ring and the all-to-all together.
std::int64_t bytes_sent() { return ring_bytes_sent() + all_to_all_bytes_sent(); }
std::int64_t bytes_received() { return ring_bytes_received() + all_to_all_bytes_received(); }

class ProcessGroup final : public RankGroup {
 public:
  explicit ProcessGroup(const dlsys::mpi::World& world)
      : world_(world), sent_at_start_(bytes_sent()), received_at_start_(bytes_received()) {}

  int size() const override { return world_.size; }
  int first_local_rank() const override { return world_.rank; }
  int local_ranks() const override { return 1; }

  void run_on_ranks(const std::function<void(int)>& work) override { work(world_.rank); }

  void ring(int, Op op, const float* send, float* recv, std::int64_t count) override {
    mpi::ring(op, send, recv, count);
  }

  void all_to_all(int, const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                  const std::vector<std::int64_t>& recv_counts) override {
    mpi::all_to_all(send, send_counts, recv, recv_counts);
  }

  std::int64_t bytes_sent_by(int) const override { return bytes_sent() - sent_at_start_; }
  std::int64_t bytes_received_by(int) const override { return bytes_received() - received_at_start_; }

  CallTimer timer() const override { return slowest_rank_timer(); }
  double max_over_processes(double value) const override { return dlsys::mpi::max_over_ranks(value); }
  std::int64_t sum_over_processes(std::int64_t value) const override { return dlsys::mpi::sum_over_ranks(value); }

  bool barrier(int) override {
    dlsys::mpi::barrier();
    return true;
  }
  void abort() override {}

  Communicator* shared_memory_links() override { return nullptr; }

 private:
  const dlsys::mpi::World& world_;
  std::int64_t sent_at_start_, received_at_start_;
};

}  // namespace

std::unique_ptr<RankGroup> world_group() {
  const dlsys::mpi::World* world = dlsys::mpi::world();
  if (!world) throw RunFailure("ranks as processes need an MPI session, and none is open");
  return std::make_unique<ProcessGroup>(*world);
}

}  // namespace dlsys::collectives::mpi
