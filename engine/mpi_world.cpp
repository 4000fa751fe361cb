// The MPI world of one `run` (see mpi_world.h); built only when CMake found MPI.
#include "engine/mpi_world.h"

#include <mpi.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/errors.h"

namespace dlsys::mpi {

namespace {

World* g_world = nullptr;
MPI_Comm g_host = MPI_COMM_NULL;  // the ranks on this host
bool g_failure_agreed = false;

using Clock = std::chrono::steady_clock;

// The watchdog of Session (mpi_world.h): one thread, first guarding MPI_Init, then exchanging heartbeats.
class Watchdog {
 public:
  explicit Watchdog(double silence_s) : silence_(std::chrono::duration<double>(silence_s)) {
    thread_ = std::thread([this] { guard_start(); });
  }
  ~Watchdog() { stop(); }

  // MPI is up and `comm` (a communicator of the watchdog's own) is ready on every rank: heartbeats from now on.
  void started(MPI_Comm comm, int rank, int size) {
    std::lock_guard<std::mutex> lock(mutex_);
    comm_ = comm;
    rank_ = rank;
    size_ = size;
    started_ = true;
    changed_.notify_all();
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      changed_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void guard_start() {
    pthread_setname_np(pthread_self(), "dlsys-watchdog");
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!changed_.wait_for(lock, silence_, [&] { return started_ || stopping_; })) {
        std::fprintf(stderr,
                     "dlsys-lab: MPI did not start on every rank within %g s: a rank of this job is not running "
                     "dlsys-lab (another program in the job) or was stopped; ending this rank (run's "
                     "--peer-silence-s sets the limit)\n",
                     silence_.count());
        std::fflush(stderr);
        std::_Exit(3);
      }
      if (stopping_) return;
    }
    heartbeats();
  }

  // Rank 0 listens to every rank and every rank to rank 0; each sends to those that listen to it once a second.
  void heartbeats() {
    pthread_setname_np(pthread_self(), "dlsys-heartbeat");  // for a test to see that MPI has started
    std::vector<int> peers;
    for (int r = 0; r < size_; ++r)
      if (r != rank_ && (rank_ == 0 || r == 0)) peers.push_back(r);
    const std::size_t n = peers.size();
    std::vector<MPI_Request> receives(n, MPI_REQUEST_NULL), sends(n, MPI_REQUEST_NULL);
    std::vector<unsigned char> inbox(n);
    const unsigned char beat = 1;
    std::vector<Clock::time_point> heard(n, Clock::now());
    Clock::time_point sent{};
    for (std::size_t i = 0; i < n; ++i) MPI_Irecv(&inbox[i], 1, MPI_BYTE, peers[i], 0, comm_, &receives[i]);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!changed_.wait_for(lock, std::chrono::milliseconds(200), [&] { return stopping_; })) {
      const Clock::time_point now = Clock::now();
      for (std::size_t i = 0; i < n; ++i) {
        int done = 0;
        MPI_Test(&receives[i], &done, MPI_STATUS_IGNORE);
        if (done) {
          heard[i] = now;
          MPI_Irecv(&inbox[i], 1, MPI_BYTE, peers[i], 0, comm_, &receives[i]);
        }
        if (now - heard[i] > silence_) silent(peers[i]);
      }
      if (now - sent >= std::chrono::seconds(1)) {
        sent = now;
        for (std::size_t i = 0; i < n; ++i) {
          int done = 1;
          if (sends[i] != MPI_REQUEST_NULL) MPI_Test(&sends[i], &done, MPI_STATUS_IGNORE);
          // A beat the peer has not taken yet is not followed by more: a stopped peer would only pile them up.
          if (done) MPI_Isend(&beat, 1, MPI_BYTE, peers[i], 0, comm_, &sends[i]);
        }
      }
    }
    for (MPI_Request& r : receives) {
      MPI_Cancel(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    for (MPI_Request& r : sends)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }

  [[noreturn]] void silent(int peer) {
    std::fprintf(stderr,
                 "dlsys-lab: rank %d of %d heard nothing from rank %d for %g s: rank %d was stopped, crashed or is not "
                 "running dlsys-lab; ending every rank (run's --peer-silence-s sets the limit)\n",
                 rank_, size_, peer, silence_.count(), peer);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::_Exit(3);
  }

  const std::chrono::duration<double> silence_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool started_ = false, stopping_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::thread thread_;
};

std::unique_ptr<Watchdog> g_watchdog;
MPI_Comm g_watchdog_comm = MPI_COMM_NULL;

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

// Where each rank's block begins when blocks of `counts` lie one after another; `total` receives their sum.
std::vector<int> offsets_of(const std::vector<int>& counts, int& total) {
  std::vector<int> offsets(counts.size());
  total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  return offsets;
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

Session::Session(double peer_silence_s) {
  if (g_world) throw RunFailure("MPI session opened twice in one process");
  if (peer_silence_s > 0) g_watchdog = std::make_unique<Watchdog>(peer_silence_s);
  // A lesson may call MPI from its communication thread while the main thread waits, and the watchdog at any time.
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(nullptr, nullptr, g_watchdog ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED, &provided);
  if (g_watchdog && provided < MPI_THREAD_MULTIPLE) g_watchdog.reset();  // MPI cannot have it: no watchdog
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
  if (g_watchdog) {
    MPI_Comm_dup(MPI_COMM_WORLD, &g_watchdog_comm);
    g_watchdog->started(g_watchdog_comm, world->rank, world->size);
  }
  g_world = world.release();
}

Session::~Session() {
  if (g_watchdog) {
    g_watchdog.reset();
    MPI_Comm_free(&g_watchdog_comm);
  }
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
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  const std::vector<int> offsets = offsets_of(lengths, total);
  std::string all(static_cast<std::size_t>(rank == 0 ? total : 0), '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0)
    for (int r = 0; r < size; ++r) out.push_back(all.substr(std::size_t(offsets[r]), std::size_t(lengths[r])));
  return out;
}

namespace {

template <class T>
std::vector<std::vector<T>> all_gather_of(const std::vector<T>& mine, MPI_Datatype type) {
  const int size = g_world ? g_world->size : 1;
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  const std::vector<int> offsets = offsets_of(counts, total);
  std::vector<T> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), count, type, all.data(), counts.data(), offsets.data(), type, MPI_COMM_WORLD);
  std::vector<std::vector<T>> out;
  for (int r = 0; r < size; ++r)
    out.emplace_back(all.begin() + offsets[std::size_t(r)],
                     all.begin() + offsets[std::size_t(r)] + counts[std::size_t(r)]);
  return out;
}

}  // namespace

std::vector<std::vector<double>> all_gather(const std::vector<double>& mine) { return all_gather_of(mine, MPI_DOUBLE); }
std::vector<std::vector<std::int64_t>> all_gather(const std::vector<std::int64_t>& mine) {
  return all_gather_of(mine, MPI_INT64_T);
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
