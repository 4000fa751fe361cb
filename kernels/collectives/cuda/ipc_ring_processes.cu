// The allreduce lesson's ring between processes (ipc_ring_processes.h): inputs in `send`, results in one of two
// `recv` buffers in turn, all three exported to rank r+1 through an IpcLink.
#include <fmt/format.h>

#include <array>
#include <limits>

#include "kernels/collectives/cuda/ipc_link.h"
#include "kernels/collectives/cuda/process_device.h"
#include "kernels/collectives/cuda/rank_fills.cuh"
#include "kernels/collectives/ipc_ring_processes.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"

namespace dlsys::collectives::cuda {

namespace {
constexpr int kSend = 0, kRecv0 = 1;  // exported buffers: send, recv[0], recv[1]
}  // namespace

class IpcRingRankOnGpu final : public IpcRingRank {
 public:
  explicit IpcRingRankOnGpu(int rank, int n_ranks, int local_rank, std::int64_t max_count);
  ~IpcRingRankOnGpu() override;
  std::vector<unsigned char> handles() const override;
  void open_previous(const std::vector<unsigned char>& previous_handles) override;
  double time_all_reduce_us(std::int64_t count, int calls, const std::function<void()>& pass_token) override;
  void checked_all_reduce(std::int64_t count, float* host_result, const std::function<void()>& pass_token) override;
  std::string device_description() const override;
  void close_previous() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct IpcRingRankOnGpu::Impl {
  int device = 0;
  std::string description;
  dlsys::cuda::Resources resources;  // released after the link (declared before it)
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float* send = nullptr;
  std::array<float*, 2> recv{};
  std::unique_ptr<IpcLink> link;
  std::int64_t calls = 0;  // made so far: which recv buffer the next call writes

  void all_reduce(std::int64_t count, const std::function<void()>& pass_token) {
    const int parity = static_cast<int>(calls++ % 2);
    link->enqueue_all_reduce(stream, send, recv[parity], link->previous(kSend), link->previous(kRecv0 + parity), count,
                             pass_token);
  }
};

IpcRingRankOnGpu::IpcRingRankOnGpu(int rank, int n_ranks, int local_rank, std::int64_t max_count)
    : impl_(std::make_unique<Impl>()) {
  Impl& me = *impl_;
  const ProcessDevice gpu = use_process_device(rank, local_rank);
  me.device = gpu.device;
  me.description = gpu.description;
  me.stream = me.resources.stream(me.device);
  me.start = me.resources.event(me.device, true);
  me.stop = me.resources.event(me.device, true);
  const std::int64_t elements = std::max<std::int64_t>(max_count, 1);
  me.send = me.resources.floats(me.device, elements);
  me.recv = {me.resources.floats(me.device, elements), me.resources.floats(me.device, elements)};
  fill_rank_inputs<<<grid_for(elements), 256, 0, me.stream>>>(me.send, rank, elements);
  DLSYS_CUDA_CHECK(cudaGetLastError());
  DLSYS_CUDA_CHECK(cudaStreamSynchronize(me.stream));
  me.link = std::make_unique<IpcLink>(rank, n_ranks, me.device, std::vector<float*>{me.send, me.recv[0], me.recv[1]});
}

std::unique_ptr<IpcRingRank> make_ipc_ring_rank(int rank, int n_ranks, int local_rank, std::int64_t max_count) {
  return std::make_unique<IpcRingRankOnGpu>(rank, n_ranks, local_rank, max_count);
}

IpcRingRankOnGpu::~IpcRingRankOnGpu() {
  if (impl_->stream) cudaStreamSynchronize(impl_->stream);
  impl_->link.reset();
}

std::vector<unsigned char> IpcRingRankOnGpu::handles() const { return impl_->link->handles(); }

void IpcRingRankOnGpu::open_previous(const std::vector<unsigned char>& previous_handles) {
  impl_->link->open_previous(previous_handles);
}

double IpcRingRankOnGpu::time_all_reduce_us(std::int64_t count, int calls, const std::function<void()>& pass_token) {
  Impl& me = *impl_;
  DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
  DLSYS_CUDA_CHECK(cudaEventRecord(me.start, me.stream));
  for (int i = 0; i < calls; ++i) me.all_reduce(count, pass_token);
  DLSYS_CUDA_CHECK(cudaEventRecord(me.stop, me.stream));
  DLSYS_CUDA_CHECK(cudaEventSynchronize(me.stop));
  float ms = 0;
  DLSYS_CUDA_CHECK(cudaEventElapsedTime(&ms, me.start, me.stop));
  return double(ms) * 1e3;
}

void IpcRingRankOnGpu::checked_all_reduce(std::int64_t count, float* host_result,
                                          const std::function<void()>& pass_token) {
  Impl& me = *impl_;
  DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
  float* out = me.recv[me.calls % 2];
  // Poisoned first, so an element the ring never wrote counts as wrong.
  fill_value<<<grid_for(count), 256, 0, me.stream>>>(out, std::numeric_limits<float>::quiet_NaN(), count);
  DLSYS_CUDA_CHECK(cudaGetLastError());
  me.all_reduce(count, pass_token);
  DLSYS_CUDA_CHECK(cudaMemcpyAsync(host_result, out, static_cast<std::size_t>(count) * sizeof(float),
                                   cudaMemcpyDeviceToHost, me.stream));
  DLSYS_CUDA_CHECK(cudaStreamSynchronize(me.stream));
}

std::string IpcRingRankOnGpu::device_description() const { return impl_->description; }

void IpcRingRankOnGpu::close_previous() {
  DLSYS_CUDA_CHECK(cudaSetDevice(impl_->device));
  DLSYS_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
  impl_->link->close_previous();
}

}  // namespace dlsys::collectives::cuda
