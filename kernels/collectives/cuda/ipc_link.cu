// The lab's ring between processes over CUDA IPC (ipc_link.h).
#include <fmt/format.h>

#include <cstring>

#include "kernels/collectives/cuda/ipc_link.h"
#include "kernels/collectives/cuda/rank_fills.cuh"
#include "kernels/collectives/ring_schedule.h"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::collectives::cuda {

namespace {

// out = theirs + mine: the order every ring in the lab adds in (what arrived, then the rank's own). out may be mine.
__global__ void add_pulled(float* out, const float* __restrict__ theirs, const float* mine, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = theirs[i] + mine[i];
}

// The fixed part of the exported bytes; the buffers' handles follow it.
struct ExportedHead {
  cudaIpcEventHandle_t step_done;
  char pci_bus_id[32];
  int buffers;
};

}  // namespace

IpcLink::IpcLink(int rank, int n_ranks, int device, std::vector<float*> exported)
    : rank_(rank), n_ranks_(n_ranks), device_(device), exported_(std::move(exported)) {
  DLSYS_CUDA_CHECK(cudaSetDevice(device_));
  DLSYS_CUDA_CHECK(cudaEventCreateWithFlags(&step_done_, cudaEventDisableTiming | cudaEventInterprocess));
}

IpcLink::~IpcLink() {
  cudaSetDevice(device_);
  for (const float* p : previous_)
    if (p) cudaIpcCloseMemHandle(const_cast<float*>(p));
  if (previous_step_done_) cudaEventDestroy(previous_step_done_);
  if (step_done_) cudaEventDestroy(step_done_);
}

std::vector<unsigned char> IpcLink::handles() const {
  DLSYS_CUDA_CHECK(cudaSetDevice(device_));
  ExportedHead head{};
  head.buffers = static_cast<int>(exported_.size());
  DLSYS_CUDA_CHECK(cudaIpcGetEventHandle(&head.step_done, step_done_));
  DLSYS_CUDA_CHECK(cudaDeviceGetPCIBusId(head.pci_bus_id, sizeof(head.pci_bus_id), device_));
  std::vector<unsigned char> bytes(sizeof(head) + exported_.size() * sizeof(cudaIpcMemHandle_t));
  std::memcpy(bytes.data(), &head, sizeof(head));
  for (std::size_t i = 0; i < exported_.size(); ++i) {
    cudaIpcMemHandle_t handle{};
    DLSYS_CUDA_CHECK(cudaIpcGetMemHandle(&handle, exported_[i]));
    std::memcpy(bytes.data() + sizeof(head) + i * sizeof(handle), &handle, sizeof(handle));
  }
  return bytes;
}

void IpcLink::open_previous(const std::vector<unsigned char>& previous_handles) {
  const int previous_rank = prev_rank(rank_, n_ranks_);
  ExportedHead head{};
  const std::size_t expected = sizeof(head) + exported_.size() * sizeof(cudaIpcMemHandle_t);
  if (previous_handles.size() == expected) std::memcpy(&head, previous_handles.data(), sizeof(head));
  if (previous_handles.size() != expected || head.buffers != int(exported_.size()))
    throw RunFailure(fmt::format("rank {}: rank {}'s CUDA IPC handles arrived as {} bytes, expected {}", rank_,
                                 previous_rank, previous_handles.size(), expected));
  DLSYS_CUDA_CHECK(cudaSetDevice(device_));
  int previous_device = -1;
  if (cudaDeviceGetByPCIBusId(&previous_device, head.pci_bus_id) != cudaSuccess) {
    cudaGetLastError();
    throw RunFailure(
        fmt::format("rank {} cannot see rank {}'s GPU ({}) among its devices", rank_, previous_rank, head.pci_bus_id));
  }
  if (previous_device != device_) {
    int can_access = 0;
    DLSYS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, device_, previous_device));
    if (!can_access)
      throw RunFailure(
          fmt::format("GPU {} cannot read GPU {} directly (no peer access between them)", device_, previous_device));
  }
  for (std::size_t i = 0; i < exported_.size(); ++i) {
    cudaIpcMemHandle_t handle{};
    std::memcpy(&handle, previous_handles.data() + sizeof(head) + i * sizeof(handle), sizeof(handle));
    void* p = nullptr;
    DLSYS_CUDA_CHECK(cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess));
    previous_.push_back(static_cast<const float*>(p));
  }
  DLSYS_CUDA_CHECK(cudaIpcOpenEventHandle(&previous_step_done_, head.step_done));
}

void IpcLink::close_previous() {
  DLSYS_CUDA_CHECK(cudaSetDevice(device_));
  for (const float* p : previous_) DLSYS_CUDA_CHECK(cudaIpcCloseMemHandle(const_cast<float*>(p)));
  previous_.clear();
  if (previous_step_done_) DLSYS_CUDA_CHECK(cudaEventDestroy(previous_step_done_));
  previous_step_done_ = nullptr;
}

void IpcLink::step(cudaStream_t stream, const std::function<void()>& pass_token, const std::function<void()>& work) {
  DLSYS_CUDA_CHECK(cudaStreamWaitEvent(stream, previous_step_done_, 0));
  work();
  DLSYS_CUDA_CHECK(cudaEventRecord(step_done_, stream));
  pass_token();
}

void IpcLink::enqueue_all_reduce(cudaStream_t stream, const float* in, float* out, const float* previous_in,
                                 const float* previous_out, std::int64_t count,
                                 const std::function<void()>& pass_token) {
  DLSYS_CUDA_CHECK(cudaSetDevice(device_));
  const auto begin = [&](int chunk) { return chunk_begin(count, n_ranks_, chunk); };
  // The inputs are ready on this rank once its stream gets here: marked, so rank r+1's first pull waits for them.
  DLSYS_CUDA_CHECK(cudaEventRecord(step_done_, stream));
  pass_token();
  for (int s = 0; s < n_ranks_ - 1; ++s) {
    const int c = reduce_scatter_recv_chunk(rank_, s, n_ranks_);
    const std::int64_t elements = chunk_size(count, n_ranks_, c);
    // Step 0 pulls rank r-1's input; later steps its partial sum of the step before.
    const float* theirs = (s == 0 ? previous_in : previous_out) + begin(c);
    step(stream, pass_token, [&] {
      if (elements == 0) return;
      add_pulled<<<grid_for(elements), 256, 0, stream>>>(out + begin(c), theirs, in + begin(c), elements);
      DLSYS_CUDA_CHECK(cudaGetLastError());
    });
  }
  for (int s = 0; s < n_ranks_ - 1; ++s) {
    const int c = all_gather_recv_chunk(rank_, s, n_ranks_);
    const std::int64_t elements = chunk_size(count, n_ranks_, c);
    step(stream, pass_token, [&] {
      if (elements == 0) return;
      DLSYS_CUDA_CHECK(cudaMemcpyAsync(out + begin(c), previous_out + begin(c), std::size_t(elements) * sizeof(float),
                                       cudaMemcpyDefault, stream));
    });
  }
}

}  // namespace dlsys::collectives::cuda
