#pragma once
// NCCL between processes: one rank per process, each on its own GPU (device = local rank mod the GPUs it sees). Rank
// 0 makes the NCCL unique id and the caller hands it to every rank (MPI_Bcast in the lesson), then each rank joins
// with ncclCommInitRank. Callable from code that never includes a CUDA or NCCL header; without CUDA (or NCCL) in the
// build, constructing one throws RunFailure.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace dlsys::collectives::cuda {

class NcclProcessRank {
 public:
  virtual ~NcclProcessRank() = default;
  // The collective part: rank 0's unique id reaches every rank through broadcast_from_rank0(data, bytes) (every rank
  // ends with rank 0's bytes), then ncclCommInitRank. When rank 0 cannot make the id, every rank throws RunFailure.
  virtual void join(int n_ranks, const std::function<void(void*, std::size_t)>& broadcast_from_rank0) = 0;

  // `calls` back-to-back ncclAllReduce of `count` floats (send buffer filled with input_value(rank, i)) on this
  // rank's stream; microseconds for all of them, between two CUDA events.
  virtual double time_all_reduce_us(std::int64_t count, int calls) = 0;
  // One call on NaN-poisoned outputs, copied to `host_result` ((count) floats) for the caller to check.
  virtual void checked_all_reduce(std::int64_t count, float* host_result) = 0;
  virtual std::string device_description() const = 0;
};
// This process's part alone (device, stream, buffers of max_count floats, inputs): nothing collective, so the
// ranks can agree on the outcome before any of them waits on the others.
std::unique_ptr<NcclProcessRank> make_nccl_process_rank(int rank, int local_rank, std::int64_t max_count);

}  // namespace dlsys::collectives::cuda
