#pragma once
// One rank's side of the lab's ring between processes over CUDA IPC, for .cu files: the rank exports device buffers
// and an interprocess "step done" event as plain bytes (IPC handles and the GPU's PCI bus id); rank r+1 opens them and
// pulls from them. ring_schedule.h's chunks and steps, the same as every other ring in the lab:
//   reduce-scatter step s: out[c] = (rank r-1's in at step 0, its out after) [c] + in[c], c its step-s chunk;
//   all-gather step s: out[c] copied from rank r-1's out.
// In place (in == out) works too: a rank never writes a chunk rank r+1 has still to read (see below).
//
// Ordering: a call first marks the rank's inputs ready, and after each step the rank records its event, then passes a
// token around the ring on the host (pass_token, e.g. an empty MPI_Sendrecv); before each step its stream waits for
// rank r-1's event. The token guarantees that rank r-1 has enqueued that record before rank r waits on it; a wait that
// catches a later record only waits longer. Step t of rank r therefore follows step t-1 of rank r-1, and through the
// ring step t-N+1 of rank r+1: within a call that is exactly what the pulls need (what rank r overwrites at step t,
// rank r+1 read at step t-N+1 or earlier). Between calls on the same buffers the caller keeps them apart (two out
// buffers in turn, or a barrier). The host never waits on the GPU inside a call.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dlsys::collectives::cuda {

class IpcLink {
 public:
  // The buffers rank r+1 will read (device memory from cudaMalloc on `device`), in an order both sides agree on.
  IpcLink(int rank, int n_ranks, int device, std::vector<float*> exported);
  ~IpcLink();
  IpcLink(const IpcLink&) = delete;
  IpcLink& operator=(const IpcLink&) = delete;

  // This rank's handles, the same length on every rank with as many buffers.
  std::vector<unsigned char> handles() const;
  // Opens rank r-1's buffers and event from its handles(). Throws RunFailure when this GPU cannot read rank r-1's
  // (not visible here, or no peer access between the two).
  void open_previous(const std::vector<unsigned char>& previous_handles);
  // Rank r-1's exported buffer `index`, as this process addresses it.
  const float* previous(int index) const { return previous_.at(std::size_t(index)); }
  // Closes rank r-1's buffers and event (after this rank's stream is idle). Every rank closes before any frees what it
  // exported: the caller meets the others (a barrier) in between.
  void close_previous();

  // One all-reduce of `count` floats enqueued on `stream` (on this rank's device): `in` and `out` are this rank's,
  // `previous_in` and `previous_out` the same buffers of rank r-1 (from previous()).
  void enqueue_all_reduce(cudaStream_t stream, const float* in, float* out, const float* previous_in,
                          const float* previous_out, std::int64_t count, const std::function<void()>& pass_token);

 private:
  // Waits for rank r-1's last mark, enqueues `work`, marks it done, and lets rank r+1 know the mark is enqueued.
  void step(cudaStream_t stream, const std::function<void()>& pass_token, const std::function<void()>& work);

  int rank_, n_ranks_, device_;
  std::vector<float*> exported_;
  cudaEvent_t step_done_ = nullptr;           // interprocess, recorded after every step
  cudaEvent_t previous_step_done_ = nullptr;  // rank r-1's
  std::vector<const float*> previous_;
};

}  // namespace dlsys::collectives::cuda
