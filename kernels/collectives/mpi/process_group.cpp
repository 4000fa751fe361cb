// The MPI world as a rank group (mpi_collectives.h): one rank per process, the lab's ring over MPI_Sendrecv.
#include "engine/errors.h"
#include "engine/mpi_world.h"
#include "kernels/collectives/mpi_collectives.h"

namespace dlsys::collectives::mpi {

namespace {

class ProcessGroup final : public RankGroup {
 public:
  explicit ProcessGroup(const dlsys::mpi::World& world)
      : world_(world), sent_at_start_(ring_bytes_sent()), received_at_start_(ring_bytes_received()) {}

  int size() const override { return world_.size; }
  int first_local_rank() const override { return world_.rank; }
  int local_ranks() const override { return 1; }

  void run_on_ranks(const std::function<void(int)>& work) override { work(world_.rank); }

  void ring(int, Op op, const float* send, float* recv, std::int64_t count) override {
    mpi::ring(op, send, recv, count);
  }

  std::int64_t bytes_sent_by(int) const override { return ring_bytes_sent() - sent_at_start_; }
  std::int64_t bytes_received_by(int) const override { return ring_bytes_received() - received_at_start_; }

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
