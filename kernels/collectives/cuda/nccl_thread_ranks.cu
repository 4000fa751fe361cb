// NCCL between rank threads of one process, a GPU each (nccl_thread_ranks.h).
#include <fmt/format.h>

#include <atomic>
#include <numeric>

#include "engine/errors.h"
#include "kernels/collectives/nccl_thread_ranks.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/common/cuda/nccl_check.h"

namespace dlsys::collectives::cuda {

#if DLSYS_HAVE_NCCL
namespace {

class NcclThreadRanksOnGpus final : public NcclThreadRanks {
 public:
  NcclThreadRanksOnGpus(int n_ranks, std::int64_t max_floats) : max_floats_(max_floats), ranks_(std::size_t(n_ranks)) {
    const int devices = dlsys::cuda::count_visible_devices();
    if (devices < n_ranks)
      throw RunFailure(fmt::format("NCCL between rank threads needs a GPU per rank: {} ranks, {} GPU{} visible",
                                   n_ranks, devices, devices == 1 ? "" : "s"));
    std::vector<int> device_of(static_cast<std::size_t>(n_ranks));
    for (int r = 0; r < n_ranks; ++r) {
      Rank& rank = ranks_[std::size_t(r)];
      rank.device = device_of[std::size_t(r)] = r;
      rank.stream = resources_.stream(r);
      rank.send = resources_.floats(r, max_floats);
      rank.recv = resources_.floats(r, max_floats);
    }
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n_ranks), nullptr);
    DLSYS_NCCL_CHECK(ncclCommInitAll(comms.data(), n_ranks, device_of.data()));
    for (int r = 0; r < n_ranks; ++r) {
      ranks_[std::size_t(r)].comm = comms[std::size_t(r)];
      // Destroyed before the streams and buffers it uses (Resources releases in reverse order), unless abort()
      // has already released it.
      resources_.later([this, r, comm = comms[std::size_t(r)]] {
        if (aborted_) return;
        cudaSetDevice(r);
        ncclCommDestroy(comm);
      });
    }
  }

  void all_to_all(int rank, const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                  const std::vector<std::int64_t>& recv_counts) override {
    const Rank& me = ranks_.at(std::size_t(rank));
    const std::int64_t send_total = total(send_counts), recv_total = total(recv_counts);
    if (send_total > max_floats_ || recv_total > max_floats_)
      throw RunFailure(fmt::format("an all-to-all of {} floats out and {} in exceeds the {} its GPU buffers hold",
                                   send_total, recv_total, max_floats_));
    // After abort() the communicators are gone: a rank that comes late stops here instead of calling into them.
    if (aborted_) throw RunFailure("NCCL between the GPU ranks was aborted: another rank failed");
    // Each rank is a host thread of its own: its current device is set here, not inherited.
    DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
    DLSYS_CUDA_CHECK(
        cudaMemcpyAsync(me.send, send, sizeof(float) * std::size_t(send_total), cudaMemcpyHostToDevice, me.stream));
    DLSYS_NCCL_CHECK(ncclGroupStart());
    std::int64_t sent_at = 0, received_at = 0;
    for (std::size_t peer = 0; peer < ranks_.size(); ++peer) {
      // A zero count on one side is a zero count on the other (the counts agree), so both skip the pair.
      if (send_counts[peer] > 0)
        DLSYS_NCCL_CHECK(
            ncclSend(me.send + sent_at, std::size_t(send_counts[peer]), ncclFloat, int(peer), me.comm, me.stream));
      if (recv_counts[peer] > 0)
        DLSYS_NCCL_CHECK(
            ncclRecv(me.recv + received_at, std::size_t(recv_counts[peer]), ncclFloat, int(peer), me.comm, me.stream));
      sent_at += send_counts[peer];
      received_at += recv_counts[peer];
    }
    DLSYS_NCCL_CHECK(ncclGroupEnd());
    dlsys::cuda::download_and_wait(recv, me.recv, recv_total, me.stream);
  }

  // NCCL's way out of operations whose peer will never come: ncclCommAbort from any thread, while the ranks' threads
  // wait in them.
  void abort() override {
    if (aborted_.exchange(true)) return;
    for (const Rank& rank : ranks_) {
      cudaSetDevice(rank.device);
      ncclCommAbort(rank.comm);
    }
  }

 private:
  struct Rank {
    int device = 0;
    cudaStream_t stream = nullptr;
    float* send = nullptr;
    float* recv = nullptr;
    ncclComm_t comm = nullptr;
  };
  static std::int64_t total(const std::vector<std::int64_t>& counts) {
    return std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  }

  std::atomic<bool> aborted_{false};
  dlsys::cuda::Resources resources_;  // released before aborted_ is gone: declared after it
  std::int64_t max_floats_ = 0;
  std::vector<Rank> ranks_;
};

}  // namespace

std::unique_ptr<NcclThreadRanks> make_nccl_thread_ranks(int n_ranks, std::int64_t max_floats) {
  return std::make_unique<NcclThreadRanksOnGpus>(n_ranks, max_floats);
}

#else  // CUDA without NCCL: the rest of the CUDA backend works, this path says why it cannot.

std::unique_ptr<NcclThreadRanks> make_nccl_thread_ranks(int, std::int64_t) {
  throw RunFailure(
      "this build has CUDA but no NCCL (nccl.h and libnccl were not found): NCCL between GPU ranks is absent");
}

#endif

}  // namespace dlsys::collectives::cuda
