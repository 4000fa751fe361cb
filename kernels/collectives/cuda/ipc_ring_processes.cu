// The lab's ring between processes over CUDA IPC (ipc_ring_processes.h): each rank pulls from rank r-1's buffers,
// opened from their IPC handles, and orders its steps after rank r-1's through an interprocess event.
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <limits>

#include "kernels/collectives/cuda/rank_fills.cuh"
#include "kernels/collectives/ipc_ring_processes.h"
#include "kernels/collectives/ring_schedule.h"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::collectives::cuda {

#define CHECK_CUDA(call) DLSYS_CUDA_CHECK(call)

namespace {

// out = theirs + mine: the order every ring in the lab adds in (what arrived, then the rank's own input).
__global__ void add_pulled(float* __restrict__ out, const float* __restrict__ theirs, const float* __restrict__ mine,
                           std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = theirs[i] + mine[i];
}

// What one rank exports: plain bytes, so they travel through MPI unchanged.
struct ExportedHandles {
  cudaIpcMemHandle_t send;
  std::array<cudaIpcMemHandle_t, 2> recv;
  cudaIpcEventHandle_t step_done;
  char pci_bus_id[32];
};

}  // namespace

struct IpcRingRank::Impl {
  int rank = 0, n_ranks = 1, device = 0;
  std::string description;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEvent_t step_done = nullptr;           // interprocess: recorded after every step
  cudaEvent_t previous_step_done = nullptr;  // rank r-1's, opened from its handle
  float* send = nullptr;
  std::array<float*, 2> recv{};
  const float* previous_send = nullptr;  // rank r-1's buffers, opened from their handles
  std::array<const float*, 2> previous_recv{};
  std::int64_t calls = 0;  // made so far: which recv buffer the next call writes

  ~Impl() {
    cudaSetDevice(device);
    if (stream) cudaStreamSynchronize(stream);
    close_previous();
    for (cudaEvent_t e : {start, stop, step_done})
      if (e) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
    cudaFree(send);
    cudaFree(recv[0]);
    cudaFree(recv[1]);
  }

  void close_previous() {
    for (const float* p : {previous_send, previous_recv[0], previous_recv[1]})
      if (p) cudaIpcCloseMemHandle(const_cast<float*>(p));
    if (previous_step_done) cudaEventDestroy(previous_step_done);
    previous_send = nullptr;
    previous_recv = {};
    previous_step_done = nullptr;
  }

  // The ring's step protocol around one step's work: wait for rank r-1's step, do ours, mark it done, and let rank
  // r+1 know the mark is enqueued.
  template <class Work>
  void step(const std::function<void()>& pass_token, Work&& work) {
    CHECK_CUDA(cudaStreamWaitEvent(stream, previous_step_done, 0));
    work();
    CHECK_CUDA(cudaEventRecord(step_done, stream));
    pass_token();
  }

  void all_reduce(std::int64_t count, const std::function<void()>& pass_token) {
    const int parity = static_cast<int>(calls++ % 2);
    float* out = recv[parity];
    const float* previous_out = previous_recv[parity];
    const auto begin = [&](int chunk) { return chunk_begin(count, n_ranks, chunk); };
    for (int s = 0; s < n_ranks - 1; ++s) {
      const int c = reduce_scatter_recv_chunk(rank, s, n_ranks);
      const std::int64_t elements = chunk_size(count, n_ranks, c);
      // Step 0 pulls rank r-1's input; later steps its partial sum of the step before.
      const float* theirs = (s == 0 ? previous_send : previous_out) + begin(c);
      step(pass_token, [&] {
        if (elements == 0) return;
        add_pulled<<<grid_for(elements), 256, 0, stream>>>(out + begin(c), theirs, send + begin(c), elements);
        CHECK_CUDA(cudaGetLastError());
      });
    }
    for (int s = 0; s < n_ranks - 1; ++s) {
      const int c = all_gather_recv_chunk(rank, s, n_ranks);
      const std::int64_t elements = chunk_size(count, n_ranks, c);
      step(pass_token, [&] {
        if (elements == 0) return;
        CHECK_CUDA(cudaMemcpyAsync(out + begin(c), previous_out + begin(c), std::size_t(elements) * sizeof(float),
                                   cudaMemcpyDefault, stream));
      });
    }
  }
};

IpcRingRank::IpcRingRank(int rank, int n_ranks, int local_rank, std::int64_t max_count)
    : impl_(std::make_unique<Impl>()) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    throw RunFailure(fmt::format("rank {}: no CUDA device answers in this process", rank));
  }
  Impl& me = *impl_;
  me.rank = rank;
  me.n_ranks = n_ranks;
  me.device = local_rank % devices;
  CHECK_CUDA(cudaSetDevice(me.device));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, me.device));
  me.description = fmt::format("{} (device {} of {} on rank 0's host)", prop.name, me.device, devices);
  CHECK_CUDA(cudaStreamCreateWithFlags(&me.stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreate(&me.start));
  CHECK_CUDA(cudaEventCreate(&me.stop));
  CHECK_CUDA(cudaEventCreateWithFlags(&me.step_done, cudaEventDisableTiming | cudaEventInterprocess));
  const std::int64_t elements = std::max<std::int64_t>(max_count, 1);
  const std::size_t bytes = static_cast<std::size_t>(elements) * sizeof(float);
  CHECK_CUDA(cudaMalloc(&me.send, bytes));
  CHECK_CUDA(cudaMalloc(&me.recv[0], bytes));
  CHECK_CUDA(cudaMalloc(&me.recv[1], bytes));
  fill_rank_inputs<<<grid_for(elements), 256, 0, me.stream>>>(me.send, rank, elements);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaStreamSynchronize(me.stream));
}

IpcRingRank::~IpcRingRank() = default;

std::vector<unsigned char> IpcRingRank::handles() const {
  const Impl& me = *impl_;
  CHECK_CUDA(cudaSetDevice(me.device));
  ExportedHandles out{};
  CHECK_CUDA(cudaIpcGetMemHandle(&out.send, me.send));
  CHECK_CUDA(cudaIpcGetMemHandle(&out.recv[0], me.recv[0]));
  CHECK_CUDA(cudaIpcGetMemHandle(&out.recv[1], me.recv[1]));
  CHECK_CUDA(cudaIpcGetEventHandle(&out.step_done, me.step_done));
  CHECK_CUDA(cudaDeviceGetPCIBusId(out.pci_bus_id, sizeof(out.pci_bus_id), me.device));
  std::vector<unsigned char> bytes(sizeof(out));
  std::memcpy(bytes.data(), &out, sizeof(out));
  return bytes;
}

void IpcRingRank::open_previous(const std::vector<unsigned char>& previous_handles) {
  Impl& me = *impl_;
  ExportedHandles in{};
  if (previous_handles.size() != sizeof(in))
    throw RunFailure(fmt::format("rank {}: rank {}'s CUDA IPC handles arrived as {} bytes, expected {}", me.rank,
                                 prev_rank(me.rank, me.n_ranks), previous_handles.size(), sizeof(in)));
  std::memcpy(&in, previous_handles.data(), sizeof(in));
  CHECK_CUDA(cudaSetDevice(me.device));
  int previous_device = -1;
  if (cudaDeviceGetByPCIBusId(&previous_device, in.pci_bus_id) != cudaSuccess) {
    cudaGetLastError();
    throw RunFailure(fmt::format("rank {} cannot see rank {}'s GPU ({}) among its devices", me.rank,
                                 prev_rank(me.rank, me.n_ranks), in.pci_bus_id));
  }
  if (previous_device != me.device) {
    int can_access = 0;
    CHECK_CUDA(cudaDeviceCanAccessPeer(&can_access, me.device, previous_device));
    if (!can_access)
      throw RunFailure(
          fmt::format("GPU {} cannot read GPU {} directly (no peer access between them)", me.device, previous_device));
  }
  const auto open = [&](const cudaIpcMemHandle_t& handle) {
    void* p = nullptr;
    CHECK_CUDA(cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess));
    return static_cast<const float*>(p);
  };
  me.previous_send = open(in.send);
  me.previous_recv[0] = open(in.recv[0]);
  me.previous_recv[1] = open(in.recv[1]);
  CHECK_CUDA(cudaIpcOpenEventHandle(&me.previous_step_done, in.step_done));
}

double IpcRingRank::time_all_reduce_us(std::int64_t count, int calls, const std::function<void()>& pass_token) {
  Impl& me = *impl_;
  CHECK_CUDA(cudaSetDevice(me.device));
  CHECK_CUDA(cudaEventRecord(me.start, me.stream));
  for (int i = 0; i < calls; ++i) me.all_reduce(count, pass_token);
  CHECK_CUDA(cudaEventRecord(me.stop, me.stream));
  CHECK_CUDA(cudaEventSynchronize(me.stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, me.start, me.stop));
  return double(ms) * 1e3;
}

void IpcRingRank::checked_all_reduce(std::int64_t count, float* host_result, const std::function<void()>& pass_token) {
  Impl& me = *impl_;
  CHECK_CUDA(cudaSetDevice(me.device));
  float* out = me.recv[me.calls % 2];
  // Poisoned first, so an element the ring never wrote counts as wrong.
  fill_value<<<grid_for(count), 256, 0, me.stream>>>(out, std::numeric_limits<float>::quiet_NaN(), count);
  CHECK_CUDA(cudaGetLastError());
  me.all_reduce(count, pass_token);
  CHECK_CUDA(cudaMemcpyAsync(host_result, out, static_cast<std::size_t>(count) * sizeof(float), cudaMemcpyDeviceToHost,
                             me.stream));
  CHECK_CUDA(cudaStreamSynchronize(me.stream));
}

std::string IpcRingRank::device_description() const { return impl_->description; }

void IpcRingRank::close_previous() {
  CHECK_CUDA(cudaSetDevice(impl_->device));
  CHECK_CUDA(cudaStreamSynchronize(impl_->stream));
  impl_->close_previous();
}

}  // namespace dlsys::collectives::cuda
