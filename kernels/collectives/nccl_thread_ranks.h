#pragma once
// NCCL for ranks that are threads of one process, each on a GPU of its own (rank r on device r): one communicator per
// GPU from ncclCommInitAll, each rank's calls made from its own thread. The all-to-all takes host arrays, as a rank
// group's does (all_to_all.h: layout and counts): the rank's blocks are staged to its GPU, every block (the own one
// too, which NCCL copies on the device) exchanged with ncclSend/ncclRecv inside one group, and the received blocks
// brought back before the call returns. NCCL refuses two ranks on one GPU, so this needs as many GPUs as ranks.
// Callable from code that never includes a CUDA or NCCL header; without NCCL in the build, or with too few GPUs,
// making one throws RunFailure saying why.
#include <cstdint>
#include <memory>
#include <vector>

namespace dlsys::collectives::cuda {

class NcclThreadRanks {
 public:
  virtual ~NcclThreadRanks() = default;
  // Called by every rank at once, each from its own thread. At most max_floats floats sent and received per call.
  virtual void all_to_all(int rank, const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                          const std::vector<std::int64_t>& recv_counts) = 0;
  // After a rank failed: the other ranks' pending NCCL calls return (with an error) instead of waiting for it.
  virtual void abort() = 0;
};

// `n_ranks` ranks, rank r on device r, each with a stream and staging buffers of `max_floats` floats each way.
std::unique_ptr<NcclThreadRanks> make_nccl_thread_ranks(int n_ranks, std::int64_t max_floats);

}  // namespace dlsys::collectives::cuda
