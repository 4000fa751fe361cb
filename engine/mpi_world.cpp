// The MPI world of one `run` (see mpi_world.h); built only when CMake found MPI.
#include "engine/mpi_world.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "engine/errors.h"

namespace dlsys::mpi {

namespace {

World* g_world = nullptr;
MPI_Comm g_host = MPI_COMM_NULL;  // the ranks on this host
bool g_failure_agreed = false;

std::string first_line(const char* text) {
  const std::string all(text);
  return all.substr(0, all.find('\n'));
}

// Every rank's processor name, distinct ones kept in rank order.
std::vector<std::string> host_names(int size) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r) {
    const char* begin = all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    std::string host(begin, strnlen(begin, MPI_MAX_PROCESSOR_NAME));
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  return hosts;
}

}  // namespace

bool built_with_mpi() { return true; }

std::string launcher_in_environment() {
  // Set by the launcher before the process starts; MPI_Init without them would make a world of one (a singleton).
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) return "Open MPI's mpirun (OMPI_COMM_WORLD_SIZE)";
  if (std::getenv("PMIX_RANK")) return "a PMIx launcher such as srun (PMIX_RANK)";
  if (std::getenv("PMI_RANK") || std::getenv("PMI_SIZE")) return "a PMI launcher such as srun or MPICH's (PMI_RANK)";
  return {};
}

int world_size_in_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* size = std::getenv(name)) return std::atoi(size);
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK"))
    if (const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS")) return std::atoi(tasks);
  return 0;
}

Session::Session() {
  if (g_world) throw RunFailure("MPI session opened twice in one process");
  // A lesson may call MPI from its communication thread while the main thread waits (never both at once).
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  // Errors come back as codes (and end the run with a message) instead of killing the job without one.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  auto world = std::make_unique<World>();
  MPI_Comm_rank(MPI_COMM_WORLD, &world->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world->size);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world->rank, MPI_INFO_NULL, &g_host);
  MPI_Comm_rank(g_host, &world->local_rank);
  MPI_Comm_size(g_host, &world->local_size);
  world->hosts = host_names(world->size);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  world->library = first_line(version);
  world->serialized_calls = provided >= MPI_THREAD_SERIALIZED;
  world->thread_level = provided == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
                        : provided == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                        : provided == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                                            : "MPI_THREAD_MULTIPLE";
  g_world = world.release();
}

Session::~Session() {
  delete g_world;
  g_world = nullptr;
  if (g_host != MPI_COMM_NULL) MPI_Comm_free(&g_host);
  MPI_Finalize();
}

const World& Session::world() const { return *g_world; }

const World* world() { return g_world; }

void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

double max_over_ranks(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

std::int64_t sum_over_ranks(std::int64_t value) {
  std::int64_t out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

double sum_over_host_ranks(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_SUM, g_host);
  return out;
}

std::string broadcast_text(const std::string& text, int root) {
  std::int64_t length = static_cast<std::int64_t>(text.size());
  MPI_Bcast(&length, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
  std::string out = text;
  out.resize(static_cast<std::size_t>(length));
  if (length > 0) MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, root, MPI_COMM_WORLD);
  return out;
}

std::vector<std::string> gather_text(const std::string& text) {
  const int size = g_world ? g_world->size : 1;
  const int rank = g_world ? g_world->rank : 0;
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(rank == 0 ? total : 0), '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0)
    for (int r = 0; r < size; ++r) out.push_back(all.substr(std::size_t(offsets[r]), std::size_t(lengths[r])));
  return out;
}

void broadcast_bytes(void* data, std::size_t bytes) {
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
}

std::vector<unsigned char> shift_bytes_from_previous(const void* mine, std::size_t bytes) {
  const int rank = g_world ? g_world->rank : 0, size = g_world ? g_world->size : 1;
  std::vector<unsigned char> previous(bytes);
  MPI_Sendrecv(mine, static_cast<int>(bytes), MPI_BYTE, (rank + 1) % size, 0, previous.data(), static_cast<int>(bytes),
               MPI_BYTE, (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return previous;
}

void pass_token_around_ring() {
  const int rank = g_world ? g_world->rank : 0, size = g_world ? g_world->size : 1;
  MPI_Sendrecv(nullptr, 0, MPI_BYTE, (rank + 1) % size, 1, nullptr, 0, MPI_BYTE, (rank + size - 1) % size, 1,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

Agreement agree(int code, const std::string& message) {
  const int size = g_world ? g_world->size : 1;
  std::vector<int> codes(static_cast<std::size_t>(size));
  MPI_Allgather(&code, 1, MPI_INT, codes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  Agreement out;
  for (int r = 0; r < size; ++r) {
    out.code = std::max(out.code, codes[r]);
    if (codes[r] != 0 && out.rank < 0) out.rank = r;
  }
  if (out.rank < 0) return out;
  out.message = broadcast_text(message, out.rank);
  g_failure_agreed = true;
  return out;
}

bool failure_agreed() { return g_failure_agreed; }

void abort_all(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest if it ever did
}

}  // namespace dlsys::mpi
