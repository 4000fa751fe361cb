// Built when the build has no MPI: the lesson refuses launcher=mpi before it could get here.
#include "engine/errors.h"
#include "kernels/collectives/mpi_collectives.h"

namespace dlsys::collectives::mpi {

namespace {
[[noreturn]] void no_mpi() { throw RunFailure("this build has no MPI: the ranks-as-processes collectives are absent"); }
}  // namespace

void ring(Op, const float*, float*, std::int64_t) { no_mpi(); }
void library(Op, const float*, float*, std::int64_t) { no_mpi(); }
CollectiveRecord record_ring(Op, const std::vector<float>&) { no_mpi(); }
std::string library_function(Op, std::int64_t, int) { no_mpi(); }
std::unique_ptr<RankGroup> world_group() { no_mpi(); }
void all_to_all(const float*, const std::vector<std::int64_t>&, float*, const std::vector<std::int64_t>&) { no_mpi(); }
std::int64_t all_to_all_bytes_sent() { return 0; }
std::int64_t all_to_all_bytes_received() { return 0; }
std::int64_t ring_bytes_sent() { return 0; }
std::int64_t ring_bytes_received() { return 0; }

}  // namespace dlsys::collectives::mpi
