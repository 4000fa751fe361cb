// NCCL between processes (nccl_processes.h): one rank per process on device local_rank mod the GPUs it sees, one
// communicator per process from rank 0's unique id (ncclCommInitRank), ncclAllReduce timed with CUDA events on the
// rank's own stream. Inputs are inputs.h's values, filled on the device, so every rank checks its own result.
#include <fmt/format.h>

#include <limits>

#include "kernels/collectives/cuda/process_device.h"
#include "kernels/collectives/nccl_processes.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/nccl_check.h"
#if DLSYS_HAVE_NCCL
#include "kernels/collectives/cuda/rank_fills.cuh"
#endif

namespace dlsys::collectives::cuda {

#if DLSYS_HAVE_NCCL
class NcclProcessRankOnGpu final : public NcclProcessRank {
 public:
  explicit NcclProcessRankOnGpu(int rank, int local_rank, std::int64_t max_count);
  void join(int n_ranks, const std::function<void(void*, std::size_t)>& broadcast_from_rank0) override;
  double time_all_reduce_us(std::int64_t count, int calls) override;
  void checked_all_reduce(std::int64_t count, float* host_result) override;
  std::string device_description() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct NcclProcessRankOnGpu::Impl {
  int rank = 0;
  int device = 0;
  std::string description;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
  ncclComm_t comm = nullptr;

  ~Impl() {
    cudaSetDevice(device);
    if (comm) ncclCommDestroy(comm);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
    cudaFree(send);
    cudaFree(recv);
  }
};

std::unique_ptr<NcclProcessRank> make_nccl_process_rank(int rank, int local_rank, std::int64_t max_count) {
  return std::make_unique<NcclProcessRankOnGpu>(rank, local_rank, max_count);
}

NcclProcessRankOnGpu::NcclProcessRankOnGpu(int rank, int local_rank, std::int64_t max_count)
    : impl_(std::make_unique<Impl>()) {
  Impl& me = *impl_;
  const ProcessDevice gpu = use_process_device(rank, local_rank);
  me.device = gpu.device;
  me.description = gpu.description;
  DLSYS_CUDA_CHECK(cudaStreamCreateWithFlags(&me.stream, cudaStreamNonBlocking));
  DLSYS_CUDA_CHECK(cudaEventCreate(&me.start));
  DLSYS_CUDA_CHECK(cudaEventCreate(&me.stop));
  const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(max_count, 1)) * sizeof(float);
  DLSYS_CUDA_CHECK(cudaMalloc(&me.send, bytes));
  DLSYS_CUDA_CHECK(cudaMalloc(&me.recv, bytes));
  fill_rank_inputs<<<grid_for(max_count), 256, 0, me.stream>>>(me.send, rank, max_count);
  DLSYS_CUDA_CHECK(cudaGetLastError());
  DLSYS_CUDA_CHECK(cudaStreamSynchronize(me.stream));
  me.rank = rank;
}

void NcclProcessRankOnGpu::join(int n_ranks, const std::function<void(void*, std::size_t)>& broadcast_from_rank0) {
  Impl& me = *impl_;
  DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
  // Rank 0 sends the id with whether it could make one, so a failure there ends every rank instead of leaving the
  // others waiting in ncclCommInitRank.
  struct {
    ncclUniqueId id;
    int made;
    char why[200];
  } message{};
  if (me.rank == 0) {
    const ncclResult_t status = ncclGetUniqueId(&message.id);
    message.made = status == ncclSuccess;
    if (!message.made) fmt::format_to_n(message.why, sizeof(message.why) - 1, "{}", ncclGetErrorString(status));
  }
  broadcast_from_rank0(&message, sizeof(message));
  if (!message.made) throw RunFailure(fmt::format("ncclGetUniqueId failed on rank 0: {}", message.why));
  DLSYS_NCCL_CHECK(ncclCommInitRank(&me.comm, n_ranks, message.id, me.rank));
}

double NcclProcessRankOnGpu::time_all_reduce_us(std::int64_t count, int calls) {
  Impl& me = *impl_;
  DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
  DLSYS_CUDA_CHECK(cudaEventRecord(me.start, me.stream));
  for (int i = 0; i < calls; ++i)
    DLSYS_NCCL_CHECK(
        ncclAllReduce(me.send, me.recv, static_cast<std::size_t>(count), ncclFloat, ncclSum, me.comm, me.stream));
  DLSYS_CUDA_CHECK(cudaEventRecord(me.stop, me.stream));
  DLSYS_CUDA_CHECK(cudaEventSynchronize(me.stop));
  float ms = 0;
  DLSYS_CUDA_CHECK(cudaEventElapsedTime(&ms, me.start, me.stop));
  return double(ms) * 1e3;
}

void NcclProcessRankOnGpu::checked_all_reduce(std::int64_t count, float* host_result) {
  Impl& me = *impl_;
  DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
  // Poisoned first, so an element NCCL never wrote counts as wrong.
  fill_value<<<grid_for(count), 256, 0, me.stream>>>(me.recv, std::numeric_limits<float>::quiet_NaN(), count);
  DLSYS_CUDA_CHECK(cudaGetLastError());
  DLSYS_NCCL_CHECK(
      ncclAllReduce(me.send, me.recv, static_cast<std::size_t>(count), ncclFloat, ncclSum, me.comm, me.stream));
  DLSYS_CUDA_CHECK(cudaMemcpyAsync(host_result, me.recv, static_cast<std::size_t>(count) * sizeof(float),
                                   cudaMemcpyDeviceToHost, me.stream));
  DLSYS_CUDA_CHECK(cudaStreamSynchronize(me.stream));
}

std::string NcclProcessRankOnGpu::device_description() const { return impl_->description; }

#else  // CUDA without NCCL: the rest of the CUDA backend works, this path says why it cannot.

std::unique_ptr<NcclProcessRank> make_nccl_process_rank(int, int, std::int64_t) {
  throw RunFailure(
      "this build has CUDA but no NCCL (nccl.h and libnccl were not found): NCCL across processes is absent");
}

#endif

}  // namespace dlsys::collectives::cuda
