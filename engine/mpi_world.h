#pragma once
// Ranks as processes: the MPI world a command runs in when a lesson's `launcher` parameter is `mpi`. Only `run` on
// the command line opens a session (MPI_Init_thread), and only when asked to; the GUI never does. Without MPI in the
// build (mpi_world_none.cpp) nothing here links MPI: built_with_mpi() is false and opening a session throws BadInput.
//
// Every function below that takes no rank is collective: all ranks of the world call it, in the same order.
#include <cstdint>
#include <string>
#include <vector>

namespace dlsys::mpi {

bool built_with_mpi();

// Which launcher started this process, read from the environment before MPI_Init ("Open MPI mpirun (OMPI_...)",
// "PMI (srun or MPICH)", ...); empty when none did (a plain start, where launcher=mpi is refused).
std::string launcher_in_environment();
// How many processes the launcher started, read from its environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, or Slurm's
// SLURM_STEP_NUM_TASKS under a PMI or PMIx launcher); 0 when no launcher says.
int world_size_in_environment();

struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;              // among the ranks on this host (MPI_COMM_TYPE_SHARED)
  int local_size = 1;              // ranks on this host
  std::vector<std::string> hosts;  // distinct host names, in rank order
  std::string library;             // the first line of MPI_Get_library_version
  // What MPI_Init_thread provided (MPI_THREAD_MULTIPLE asked for, for the watchdog): whether MPI may be called from a
  // thread other than the main one (a lesson's communication thread), and the level's name.
  bool serialized_calls = false;
  std::string thread_level;
};

// How long a peer may stay silent before the job is ended (Session); longer than any step a lesson plans, since
// heartbeats flow whatever the ranks compute.
inline constexpr double kDefaultPeerSilenceS = 60;

// MPI_Init_thread on construction, MPI_Finalize on destruction; one per process. Throws BadInput without MPI in the
// build.
// A watchdog guards against a peer that stops answering (a stopped process, a rank running another program), which
// would leave the others waiting in a collective forever. Until MPI_Init has returned on every rank it allows
// `peer_silence_s` seconds, then ends this rank (exit 3) saying some rank never started MPI. From then on a thread on
// every rank sends a heartbeat each second on a communicator of its own (rank 0 to every rank, every rank to rank
// 0); a rank that hears nothing from one it listens to for `peer_silence_s` seconds names it on stderr and ends the
// job (MPI_Abort, exit 3). The thread calls MPI beside the lesson's threads, so the session asks for
// MPI_THREAD_MULTIPLE. 0 turns the watchdog off.
class Session {
 public:
  explicit Session(double peer_silence_s = kDefaultPeerSilenceS);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  const World& world() const;
};

// The world of the open session, or nullptr when none is open (threads as ranks).
const World* world();

void barrier();
double max_over_ranks(double value);
std::int64_t sum_over_ranks(std::int64_t value);
// The sum over the ranks on this host (e.g. the cores they kept busy), on each of them.
double sum_over_host_ranks(double value);
// Rank `root`'s text, on every rank.
std::string broadcast_text(const std::string& text, int root);
// Every rank's text, in rank order, on rank 0; the other ranks get an empty vector.
std::vector<std::string> gather_text(const std::string& text);
// Every rank's values (as many as each has), in rank order, on every rank: what a run reduces itself, in an order
// that does not depend on how MPI would have added them (a sum in rank order is the same on threads and processes).
std::vector<std::vector<double>> all_gather(const std::vector<double>& mine);
std::vector<std::vector<std::int64_t>> all_gather(const std::vector<std::int64_t>& mine);
// Rank 0's bytes, on every rank (e.g. an ncclUniqueId).
void broadcast_bytes(void* data, std::size_t bytes);
// Sends `bytes` of `mine` to rank r + 1 and returns rank r - 1's bytes (the same length), around the ring.
std::vector<unsigned char> shift_bytes_from_previous(const void* mine, std::size_t bytes);
// One empty message to rank r + 1 and one from rank r - 1, sent and received together: when it returns, whatever
// rank r - 1 did on its host before its call is done (e.g. it has enqueued the work an interprocess event marks).
void pass_token_around_ring();

// What the ranks agree on after each reported how its part went: the exit code (the largest), and the lowest
// failing rank with its message. Once a failure is agreed, every rank knows and failure_agreed() turns true, so an
// exception thrown because of it can end each rank with the same code instead of aborting the job.
struct Agreement {
  int code = 0;
  int rank = -1;
  std::string message;
};
Agreement agree(int code, const std::string& message);
bool failure_agreed();

// Ends every rank at once with `code` (MPI_Abort): for a failure on one rank while the others wait inside a
// collective, where agreeing is no longer possible.
[[noreturn]] void abort_all(int code);

}  // namespace dlsys::mpi
