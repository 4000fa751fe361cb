#pragma once
// The ranks a run spreads its work over, whatever carries their messages: threads of this process that exchange
// through shared-memory links (a Communicator), or the processes of an MPI world, one rank each. A run written against
// a RankGroup runs unchanged over either, so ranks as processes (`launcher=mpi`) are a transport, not another run.
//
// On either transport a rank has two sides, as a GPU has a compute stream and a communication stream: its work, run
// by `run_on_ranks` on a thread per local rank, and its compute threads, which meet at `barrier`. Collectives are the
// lab's ring (ring_schedule.h), fp32 sum, called by every rank at once from its `run_on_ranks` work.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/ledger.h"
#include "engine/measure.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/op.h"

namespace dlsys::collectives {

class RankGroup {
 public:
  virtual ~RankGroup() = default;

  virtual int size() const = 0;
  // The ranks whose work runs in this process, first_local_rank() onwards: every rank on threads, one per process.
  virtual int first_local_rank() const = 0;
  virtual int local_ranks() const = 0;

  // Runs work(rank) on every local rank at once and returns when all have finished. An exception thrown on a rank is
  // rethrown here; on threads it first aborts the links, so the rank's peers stop waiting for it.
  virtual void run_on_ranks(const std::function<void(int rank)>& work) = 0;
  // The lab's ring on rank `rank`: its `count` floats of `send` all-reduced, reduce-scattered or all-gathered into
  // `recv`. `send` may equal `recv` (in place).
  virtual void ring(int rank, Op op, const float* send, float* recv, std::int64_t count) = 0;
  // All-to-all with a count per peer on rank `rank` (all_to_all.h: the layout, and the counts that must agree): on
  // threads the pairwise schedule over a crossbar, which a group made with CommOptions::full_mesh has; between
  // processes MPI_Alltoallv. Its bytes count in bytes_sent_by/bytes_received_by (the own block, copied, does not).
  virtual void all_to_all(int rank, const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                          const std::vector<std::int64_t>& recv_counts) = 0;
  // Data bytes local rank `rank` has sent to and received from its peers since the group was made.
  virtual std::int64_t bytes_sent_by(int rank) const = 0;
  virtual std::int64_t bytes_received_by(int rank) const = 0;

  // Every rank's compute side waits here for every other's; false once abort() was called (on threads: the waiting
  // ranks are released and give up). Between processes an abort cannot release a rank in MPI_Barrier: a process that
  // fails ends the job instead (engine/mpi_world.h).
  virtual bool barrier(int rank) = 0;
  virtual void abort() = 0;

  // What the processes that host the ranks agree on, to time and check the ranks' work: on threads there is one
  // process, and each returns what it was given. `timer` times a call every local rank takes part in: on threads the
  // stopwatch (run_on_ranks returns once the last rank has); between processes a barrier, then the slowest process's
  // stopwatch (engine/process_timing.h), the same sample on every process.
  virtual CallTimer timer() const = 0;
  virtual double max_over_processes(double value) const = 0;
  virtual std::int64_t sum_over_processes(std::int64_t value) const = 0;

  // The shared-memory links of ranks that are threads, for what runs only there (16-bit wires); nullptr between
  // processes.
  virtual Communicator* shared_memory_links() = 0;
};

// `n` ranks as threads of this process, linked as `options` says; the links' slots are recorded in `ledger` ("comm").
std::unique_ptr<RankGroup> make_thread_group(int n, MemoryLedger& ledger, const CommOptions& options = {});

namespace cuda {
class NcclThreadRanks;
}
// `threads` (a group of rank threads) whose all-to-alls go over NCCL between the ranks' GPUs (nccl_thread_ranks.h),
// their off-rank bytes counted as on the links; everything else, the lab's ring included, stays on `threads`. A rank
// that fails aborts NCCL, so its peers do not wait for it there.
std::unique_ptr<RankGroup> with_nccl_all_to_all(std::unique_ptr<RankGroup> threads,
                                                std::unique_ptr<cuda::NcclThreadRanks> nccl);

}  // namespace dlsys::collectives
