// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::collectives::cuda {

bool nccl_compiled() { return cuda_plugin() && cuda_kernels().collectives.nccl_compiled(); }
Placement place_ranks(int n_ranks) { return cuda_kernels().collectives.place_ranks(n_ranks); }
GpuMeasurement measure(Op op, Implementation implementation, int n_ranks, std::int64_t count,
                       const MeasureOptions& options, const std::vector<float*>& results) {
  return cuda_kernels().collectives.measure(op, implementation, n_ranks, count, options, results);
}
double copy_bandwidth_gbps(int n_ranks, std::int64_t bytes) {
  return cuda_kernels().collectives.copy_bandwidth_gbps(n_ranks, bytes);
}

std::unique_ptr<NcclProcessRank> make_nccl_process_rank(int rank, int local_rank, std::int64_t max_count) {
  return cuda_kernels().nccl_processes.make_nccl_process_rank(rank, local_rank, max_count);
}

std::unique_ptr<NcclThreadRanks> make_nccl_thread_ranks(int n_ranks, std::int64_t max_floats) {
  return cuda_kernels().nccl_threads.make_nccl_thread_ranks(n_ranks, max_floats);
}

std::unique_ptr<IpcRingRank> make_ipc_ring_rank(int rank, int n_ranks, int local_rank, std::int64_t max_count) {
  return cuda_kernels().ipc_ring.make_ipc_ring_rank(rank, n_ranks, local_rank, max_count);
}

}  // namespace dlsys::collectives::cuda
