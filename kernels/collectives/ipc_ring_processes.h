#pragma once
// The allreduce lesson's ring between processes on GPUs: one rank per process (device = local rank mod the GPUs it
// sees, so ranks may share a GPU), all on one host; the ring itself is cuda/ipc_link.h's, over CUDA IPC.
// Out of place: send (inputs.h's values) is never written, every element of recv is, so calls need no copy in between.
// Calls alternate between two recv buffers, so a rank starting call k+1 never overwrites what rank r+1 may still read
// of call k.
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
  virtual ~IpcRingRank() = default;

  // What rank r+1 needs to reach this rank's buffers and event (opaque bytes, the same length on every rank).
  virtual std::vector<unsigned char> handles() const = 0;
  // Opens rank r-1's buffers and event from its handles(). Throws RunFailure when this GPU cannot read rank r-1's
  // (it is not visible here, or the two GPUs have no peer access).
  virtual void open_previous(const std::vector<unsigned char>& previous_handles) = 0;

  // `calls` back-to-back all-reduces of `count` floats; microseconds for all of them on this rank's stream, between
  // two CUDA events. Every rank calls with the same arguments.
  virtual double time_all_reduce_us(std::int64_t count, int calls, const std::function<void()>& pass_token) = 0;
  // One call on NaN-poisoned outputs, copied to `host_result` (count floats) for the caller to check.
  virtual void checked_all_reduce(std::int64_t count, float* host_result, const std::function<void()>& pass_token) = 0;
  virtual std::string device_description() const = 0;
  // Closes rank r-1's buffers and event. Every rank calls it, then the ranks meet (a barrier) before any of them
  // destroys its own: an exporter frees its memory only once nobody has it open.
  virtual void close_previous() = 0;
};
// This process's part alone: device, stream, send (inputs.h's values) and two recv buffers of max_count floats,
// the step event; nothing collective.
std::unique_ptr<IpcRingRank> make_ipc_ring_rank(int rank, int n_ranks, int local_rank, std::int64_t max_count);

}  // namespace dlsys::collectives::cuda
