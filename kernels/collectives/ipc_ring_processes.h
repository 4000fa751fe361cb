#pragma once
// The lab's ring between processes on GPUs: one rank per process (device = local rank mod the GPUs it sees, so ranks
// may share a GPU), all on one host. Each rank's buffers are exported as CUDA IPC handles; rank r opens rank r-1's
// and pulls from them (ring_schedule.h's chunks and steps, the same as every other ring in the lab):
//   reduce-scatter step s: recv[c] = (rank r-1's send or partial sum of chunk c) + send[c], c its step-s chunk;
//   all-gather step s: chunk c copied from rank r-1's recv.
// Out of place: send is never written, every element of recv is, so calls need no copy in between. Calls alternate
// between two recv buffers, so a rank starting call k+1 never overwrites what rank r+1 may still read of call k.
//
// Ordering: after each step a rank records an interprocess event, then passes a token around the ring on the host
// (pass_token, e.g. an empty MPI_Sendrecv); before its next step it makes its stream wait for rank r-1's event. The
// token guarantees rank r-1 has enqueued that record before rank r waits on it; a wait that catches a later record
// only waits longer. Step t of rank r thus follows step t-1 of rank r-1, and step t-N+1 of rank r+1, which is what
// the pulls and the buffer reuse need. The host never waits on the GPU inside a call.
//
// Callable from code that never includes a CUDA header; without CUDA in the build, constructing one throws.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dlsys::collectives::cuda {

class IpcRingRank {
 public:
  // This process's part alone: device, stream, send (inputs.h's values) and two recv buffers of max_count floats,
  // the step event; nothing collective.
  IpcRingRank(int rank, int n_ranks, int local_rank, std::int64_t max_count);
  ~IpcRingRank();
  IpcRingRank(const IpcRingRank&) = delete;
  IpcRingRank& operator=(const IpcRingRank&) = delete;

  // What rank r+1 needs to reach this rank's buffers and event (opaque bytes, the same length on every rank).
  std::vector<unsigned char> handles() const;
  // Opens rank r-1's buffers and event from its handles(). Throws RunFailure when this GPU cannot read rank r-1's
  // (it is not visible here, or the two GPUs have no peer access).
  void open_previous(const std::vector<unsigned char>& previous_handles);

  // `calls` back-to-back all-reduces of `count` floats; microseconds for all of them on this rank's stream, between
  // two CUDA events. Every rank calls with the same arguments.
  double time_all_reduce_us(std::int64_t count, int calls, const std::function<void()>& pass_token);
  // One call on NaN-poisoned outputs, copied to `host_result` (count floats) for the caller to check.
  void checked_all_reduce(std::int64_t count, float* host_result, const std::function<void()>& pass_token);
  std::string device_description() const;
  // Closes rank r-1's buffers and event. Every rank calls it, then the ranks meet (a barrier) before any of them
  // destroys its own: an exporter frees its memory only once nobody has it open.
  void close_previous();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlsys::collectives::cuda
