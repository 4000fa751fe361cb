// Built when the build has no MPI: the app neither includes nor links it, and launcher=mpi is refused.
#include "engine/errors.h"
#include "engine/mpi_world.h"

namespace dlsys::mpi {

namespace {
[[noreturn]] void no_mpi() {
  throw BadInput(
      "parameter 'launcher': value 'mpi' is not allowed: this build has no MPI (CMake found none; install "
      "openmpi-bin and libopenmpi-dev, then build again); allowed: threads");
}
}  // namespace

bool built_with_mpi() { return false; }
std::string launcher_in_environment() { return {}; }
int world_size_in_environment() { return 0; }
Session::Session(double) { no_mpi(); }
Session::~Session() = default;
const World& Session::world() const { no_mpi(); }
const World* world() { return nullptr; }
void barrier() { no_mpi(); }
double max_over_ranks(double) { no_mpi(); }
std::int64_t sum_over_ranks(std::int64_t) { no_mpi(); }
double sum_over_host_ranks(double) { no_mpi(); }
std::string broadcast_text(const std::string&, int) { no_mpi(); }
std::vector<std::string> gather_text(const std::string&) { no_mpi(); }
std::vector<std::vector<double>> all_gather(const std::vector<double>&) { no_mpi(); }
std::vector<std::vector<std::int64_t>> all_gather(const std::vector<std::int64_t>&) { no_mpi(); }
void broadcast_bytes(void*, std::size_t) { no_mpi(); }
std::vector<unsigned char> shift_bytes_from_previous(const void*, std::size_t) { no_mpi(); }
void pass_token_around_ring() { no_mpi(); }
Agreement agree(int, const std::string&) { no_mpi(); }
bool failure_agreed() { return false; }
void abort_all(int) { no_mpi(); }

}  // namespace dlsys::mpi
