// Collectives on GPUs (see collectives_cuda.h). fp32 sum, out of place.
//   ring - the same schedule as the CPU ranks (ring_schedule.h). Each rank has a stream on its device. At every step
//          a rank copies one chunk to its right neighbour (cudaMemcpyPeerAsync: over NVLink/PCIe between GPUs, a
//          device-to-device copy when ranks are emulated on one GPU); in reduce-scatter it lands in the neighbour's
//          scratch and an add kernel on the neighbour's stream sums it in, in all-gather it lands in place.
//          Events order the streams: a receive waits for the sender's copy, and a sender waits until its neighbour
//          has consumed the previous step's scratch. Whole chunks per step (no segments): the GPU streams overlap
//          ranks, not segments.
//   nccl - ncclAllReduce / ncclReduceScatter / ncclAllGather, one communicator per GPU (ncclCommInitAll), all ranks'
//          calls inside one ncclGroupStart/End because one thread drives every GPU.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/inputs.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/common/cuda/nccl_check.h"

namespace dlsys::collectives::cuda {

namespace {

__global__ void fill_inputs_kernel(float* send, int rank, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    send[i] = input_value(rank, i);
}

// target = mine + incoming (target may equal mine).
__global__ void add_kernel(float* target, const float* mine, const float* incoming, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    target[i] = mine[i] + incoming[i];
}

unsigned grid_for(std::int64_t count) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((count + 255) / 256, 1, 4096));
}

// One rank: its device, stream, buffers (count floats each) and the events other ranks wait on.
struct Rank {
  int device = 0;
  cudaStream_t stream = nullptr;
  float* send = nullptr;           // (count)
  float* recv = nullptr;           // (count)
  float* scratch = nullptr;        // (largest chunk): where reduce-scatter's incoming chunk lands
  cudaEvent_t sent = nullptr;      // this rank's copy of the current step has landed at its neighbour
  cudaEvent_t consumed = nullptr;  // this rank has finished with what arrived at the current step
  cudaEvent_t done = nullptr;
};

// All ranks' resources, released on every path (also when a later call throws).
class Ranks {
 public:
  Ranks(const Placement& placement, int n_ranks, std::int64_t count) : count_(count) {
    try {
      allocate(placement, n_ranks);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Ranks() { release(); }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  Rank& operator[](int r) { return ranks_[r]; }
  int size() const { return static_cast<int>(ranks_.size()); }
  std::int64_t count() const { return count_; }
  void synchronize() {
    for (Rank& rank : ranks_) {
      DLSYS_CUDA_CHECK(cudaSetDevice(rank.device));
      DLSYS_CUDA_CHECK(cudaStreamSynchronize(rank.stream));
    }
  }

 private:
  void allocate(const Placement& placement, int n_ranks) {
    const std::int64_t count = count_;
    ranks_.resize(n_ranks);
    const std::int64_t largest_chunk = chunk_size(count, n_ranks, 0);
    for (int r = 0; r < n_ranks; ++r) {
      Rank& rank = ranks_[r];
      rank.device = placement.emulated ? 0 : r;
      DLSYS_CUDA_CHECK(cudaSetDevice(rank.device));
      DLSYS_CUDA_CHECK(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking));
      DLSYS_CUDA_CHECK(cudaMalloc(&rank.send, std::max<std::int64_t>(count, 1) * sizeof(float)));
      DLSYS_CUDA_CHECK(cudaMalloc(&rank.recv, std::max<std::int64_t>(count, 1) * sizeof(float)));
      DLSYS_CUDA_CHECK(cudaMalloc(&rank.scratch, std::max<std::int64_t>(largest_chunk, 1) * sizeof(float)));
      for (cudaEvent_t* e : {&rank.sent, &rank.consumed, &rank.done})
        DLSYS_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
      fill_inputs_kernel<<<grid_for(count), 256, 0, rank.stream>>>(rank.send, r, count);
      DLSYS_CUDA_CHECK(cudaGetLastError());
    }
    if (!placement.emulated)  // direct peer copies where the hardware allows; otherwise CUDA stages through the host
      for (int r = 0; r < n_ranks; ++r) {
        const int next = next_rank(r, n_ranks);
        int can = 0;
        cudaDeviceCanAccessPeer(&can, ranks_[r].device, ranks_[next].device);
        if (can && ranks_[r].device != ranks_[next].device) {
          DLSYS_CUDA_CHECK(cudaSetDevice(ranks_[r].device));
          const cudaError_t enabled = cudaDeviceEnablePeerAccess(ranks_[next].device, 0);
          cudaGetLastError();  // "already enabled" is not an error here
          if (enabled != cudaErrorPeerAccessAlreadyEnabled) DLSYS_CUDA_CHECK(enabled);
        }
      }
    synchronize();
  }
  void release() {
    for (Rank& rank : ranks_) {
      cudaSetDevice(rank.device);
      cudaFree(rank.send);
      cudaFree(rank.recv);
      cudaFree(rank.scratch);
      for (cudaEvent_t e : {rank.sent, rank.consumed, rank.done})
        if (e) cudaEventDestroy(e);
      if (rank.stream) cudaStreamDestroy(rank.stream);
    }
    ranks_.clear();
  }

  std::vector<Rank> ranks_;
  std::int64_t count_;
};

void copy_async(Rank& from_rank, const float* from, Rank& to_rank, float* to, std::int64_t elements) {
  if (elements == 0 || from == to) return;
  DLSYS_CUDA_CHECK(
      cudaMemcpyPeerAsync(to, to_rank.device, from, from_rank.device, elements * sizeof(float), from_rank.stream));
}

// One ring step for every rank: rank r sends chunk send_chunk(r) from `source(r)`; its neighbour either adds it
// (reduce-scatter) or keeps it in place (all-gather).
template <typename SendChunk, typename Source>
void ring_step(Ranks& ranks, bool reduce, bool first_step, SendChunk send_chunk, Source source) {
  const int n = ranks.size();
  const std::int64_t count = ranks.count();
  for (int r = 0; r < n; ++r) {  // sends
    Rank& me = ranks[r];
    Rank& next = ranks[next_rank(r, n)];
    DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
    if (!first_step) DLSYS_CUDA_CHECK(cudaStreamWaitEvent(me.stream, next.consumed, 0));  // neighbour's scratch is free
    const int c = send_chunk(r);
    const std::int64_t begin = chunk_begin(count, n, c), size = chunk_size(count, n, c);
    copy_async(me, source(r) + begin, next, reduce ? next.scratch : next.recv + begin, size);
    DLSYS_CUDA_CHECK(cudaEventRecord(me.sent, me.stream));
  }
  for (int r = 0; r < n; ++r) {  // receives
    Rank& me = ranks[r];
    const int prev = prev_rank(r, n);
    DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
    DLSYS_CUDA_CHECK(cudaStreamWaitEvent(me.stream, ranks[prev].sent, 0));
    if (reduce) {
      const int c = send_chunk(prev);
      const std::int64_t begin = chunk_begin(count, n, c), size = chunk_size(count, n, c);
      if (size > 0) {
        add_kernel<<<grid_for(size), 256, 0, me.stream>>>(me.recv + begin, me.send + begin, me.scratch, size);
        DLSYS_CUDA_CHECK(cudaGetLastError());
      }
    }
    DLSYS_CUDA_CHECK(cudaEventRecord(me.consumed, me.stream));
  }
}

void ring_collective(Ranks& ranks, Op op) {
  const int n = ranks.size();
  const std::int64_t count = ranks.count();
  if (n == 1) {
    DLSYS_CUDA_CHECK(cudaSetDevice(ranks[0].device));
    copy_async(ranks[0], ranks[0].send, ranks[0], ranks[0].recv, count);
    return;
  }
  bool first = true;
  if (op != Op::AllGather)
    for (int s = 0; s < n - 1; ++s, first = false)
      ring_step(
          ranks, true, first, [&](int r) { return reduce_scatter_send_chunk(r, s, n); },
          [&](int r) -> const float* { return s == 0 ? ranks[r].send : ranks[r].recv; });
  if (op == Op::AllGather)
    for (int r = 0; r < n; ++r) {
      const int c = owned_chunk(r, n);
      DLSYS_CUDA_CHECK(cudaSetDevice(ranks[r].device));
      copy_async(ranks[r], ranks[r].send + chunk_begin(count, n, c), ranks[r], ranks[r].recv + chunk_begin(count, n, c),
                 chunk_size(count, n, c));
    }
  if (op != Op::ReduceScatter)
    for (int s = 0; s < n - 1; ++s, first = false)
      ring_step(
          ranks, false, first, [&](int r) { return all_gather_send_chunk(r, s, n); },
          [&](int r) -> const float* { return ranks[r].recv; });
}

#if DLSYS_HAVE_NCCL
// NCCL gives NCCL-rank k chunk k; our ranks own chunk (r + 1) mod N, so our rank r is NCCL rank r + 1.
class NcclComms {
 public:
  explicit NcclComms(Ranks& ranks) : comms_(ranks.size()) {
    const int n = ranks.size();
    std::vector<int> devices(n);
    for (int k = 0; k < n; ++k) devices[k] = ranks[prev_rank(k, n)].device;
    DLSYS_NCCL_CHECK(ncclCommInitAll(comms_.data(), n, devices.data()));
  }
  ~NcclComms() {
    for (ncclComm_t comm : comms_)
      if (comm) ncclCommDestroy(comm);
  }
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;
  ncclComm_t of_rank(int r) const { return comms_[next_rank(r, int(comms_.size()))]; }

 private:
  std::vector<ncclComm_t> comms_;
};

void nccl_collective(Ranks& ranks, const NcclComms& comms, Op op) {
  const int n = ranks.size();
  const std::int64_t count = ranks.count();
  const std::int64_t chunk = count / n;  // NCCL's reduce-scatter and all-gather need count divisible by N
  DLSYS_NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    Rank& me = ranks[r];
    const std::int64_t owned = chunk_begin(count, n, owned_chunk(r, n));
    if (op == Op::AllReduce)
      DLSYS_NCCL_CHECK(ncclAllReduce(me.send, me.recv, count, ncclFloat, ncclSum, comms.of_rank(r), me.stream));
    else if (op == Op::ReduceScatter)
      DLSYS_NCCL_CHECK(
          ncclReduceScatter(me.send, me.recv + owned, chunk, ncclFloat, ncclSum, comms.of_rank(r), me.stream));
    else
      DLSYS_NCCL_CHECK(ncclAllGather(me.send + owned, me.recv, chunk, ncclFloat, comms.of_rank(r), me.stream));
  }
  DLSYS_NCCL_CHECK(ncclGroupEnd());
}
#endif

// Times `call` across all ranks' streams: rank 0's stream records start, every stream waits for it, and rank 0's
// stream waits for every stream's end before recording stop.
template <typename Call>
TimingStats time_all_ranks(Ranks& ranks, const Call& call, const MeasureOptions& options) {
  const int n = ranks.size();
  Rank& first = ranks[0];
  DLSYS_CUDA_CHECK(cudaSetDevice(first.device));
  const dlsys::cuda::TimingEvents events;
  std::vector<double> samples_us;
  for (int i = 0; i < options.warmup + std::max(1, options.repeats); ++i) {
    DLSYS_CUDA_CHECK(cudaSetDevice(first.device));
    DLSYS_CUDA_CHECK(cudaEventRecord(events.start, first.stream));
    for (int r = 1; r < n; ++r) {
      DLSYS_CUDA_CHECK(cudaSetDevice(ranks[r].device));
      DLSYS_CUDA_CHECK(cudaStreamWaitEvent(ranks[r].stream, events.start, 0));
    }
    call();
    for (int r = 1; r < n; ++r) {
      DLSYS_CUDA_CHECK(cudaSetDevice(ranks[r].device));
      DLSYS_CUDA_CHECK(cudaEventRecord(ranks[r].done, ranks[r].stream));
      DLSYS_CUDA_CHECK(cudaSetDevice(first.device));
      DLSYS_CUDA_CHECK(cudaStreamWaitEvent(first.stream, ranks[r].done, 0));
    }
    DLSYS_CUDA_CHECK(cudaSetDevice(first.device));
    DLSYS_CUDA_CHECK(cudaEventRecord(events.stop, first.stream));
    const double us = events.elapsed_us();
    if (i >= options.warmup) samples_us.push_back(us);
  }
  return summarize_us(std::move(samples_us), "cuda_event");
}

}  // namespace

bool nccl_compiled() {
#if DLSYS_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

Placement place_ranks(int n_ranks) {
  const int devices = dlsys::cuda::count_visible_devices();
  if (devices < 1) throw RunFailure("no CUDA device answers");
  Placement p;
  if (n_ranks == 1 || devices >= n_ranks) {
    p.devices = n_ranks;
    p.description =
        n_ranks == 1 ? "1 rank on GPU 0" : fmt::format("{} ranks, one per GPU (GPUs 0..{})", n_ranks, n_ranks - 1);
  } else {
    p.devices = 1;
    p.emulated = true;
    p.description = fmt::format(
        "{} ranks emulated on GPU 0 as {} buffers and {} streams ({} GPU{} visible; NCCL "
        "refuses two ranks on one GPU)",
        n_ranks, n_ranks, n_ranks, devices, devices == 1 ? "" : "s");
  }
  return p;
}

GpuMeasurement measure(Op op, Implementation implementation, int n_ranks, std::int64_t count,
                       const MeasureOptions& options, const std::vector<float*>& results) {
  GpuMeasurement m;
  m.placement = place_ranks(n_ranks);
  if (implementation == Implementation::Nccl && m.placement.emulated)
    throw BadInput(
        fmt::format("parameter 'algo': value 'library' (NCCL) needs one GPU per rank: n = {} but {}; "
                    "allowed here: ring",
                    n_ranks, m.placement.description));
  if (implementation == Implementation::Nccl && op != Op::AllReduce && count % n_ranks != 0)
    throw BadInput(fmt::format("parameter 'bytes': NCCL's {} needs a size divisible by 4 x N = {} bytes; got {} bytes",
                               op == Op::ReduceScatter ? "reduce-scatter" : "all-gather", 4 * n_ranks, 4 * count));
  Ranks ranks(m.placement, n_ranks, count);
#if DLSYS_HAVE_NCCL
  std::unique_ptr<NcclComms> comms;
  if (implementation == Implementation::Nccl) comms = std::make_unique<NcclComms>(ranks);
  auto call = [&] {
    if (comms)
      nccl_collective(ranks, *comms, op);
    else
      ring_collective(ranks, op);
  };
#else
  if (implementation == Implementation::Nccl) throw RunFailure("this build has no NCCL");
  auto call = [&] { ring_collective(ranks, op); };
#endif
  m.time = time_all_ranks(ranks, call, options);

  // The checked call: outputs poisoned first (all bits set is a NaN), so an element never written counts as wrong.
  for (int r = 0; r < n_ranks; ++r) {
    DLSYS_CUDA_CHECK(cudaSetDevice(ranks[r].device));
    DLSYS_CUDA_CHECK(
        cudaMemsetAsync(ranks[r].recv, 0xFF, std::max<std::int64_t>(count, 1) * sizeof(float), ranks[r].stream));
  }
  ranks.synchronize();
  time_all_ranks(ranks, call, MeasureOptions{.warmup = 0, .repeats = 1});
  for (int r = 0; r < n_ranks && r < int(results.size()); ++r) {
    DLSYS_CUDA_CHECK(cudaSetDevice(ranks[r].device));
    if (count > 0)
      DLSYS_CUDA_CHECK(cudaMemcpy(results[r], ranks[r].recv, count * sizeof(float), cudaMemcpyDeviceToHost));
  }
  return m;
}

double copy_bandwidth_gbps(int n_ranks, std::int64_t bytes) {
  const Placement placement = place_ranks(n_ranks);
  const int target_device = placement.emulated || n_ranks == 1 ? 0 : 1;
  // One source and one target buffer (a rank pair's worth: one placement, one rank per device), freed on every path.
  Ranks pair(Placement{target_device == 0 ? 1 : 2, target_device == 0, ""}, target_device == 0 ? 1 : 2,
             bytes / std::int64_t(sizeof(float)));
  Rank& from = pair[0];
  Rank& to = pair[pair.size() - 1];
  DLSYS_CUDA_CHECK(cudaSetDevice(from.device));
  auto copy = [&] { DLSYS_CUDA_CHECK(cudaMemcpyPeerAsync(to.recv, to.device, from.send, from.device, bytes, 0)); };
  const TimingStats t = dlsys::cuda::time_with_events(copy, MeasureOptions{.warmup = 2, .repeats = 5});
  return double(bytes) / (t.min_us * 1e3);
}

}  // namespace dlsys::collectives::cuda
