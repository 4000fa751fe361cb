// The parts of the tensor devices (tensor_devices.h) that are not one-line forwarders: where the CPU ranks ran, the
// activation bytes the ledger holds for each, and the notes and caveats each device gives a run. No CUDA call is made
// here.
#include "kernels/tensor/tensor_devices.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/backend.h"

namespace dlsys::tensor {

RankPlacement CpuRankLayers::placement() const {
  const int t = layer_.shape().ranks;
  return {.ranks = t,
          .description = fmt::format("{} rank{} as CPU threads in one process, the lab's ring through shared memory", t,
                                     t == 1 ? "" : "s"),
          .emulated = true,
          .nccl = false};
}

std::int64_t CpuRankLayers::activation_bytes(int rank) const {
  return ledger_.current_bytes(fmt::format("activations rank {}", rank));
}

std::vector<std::string> CpuTensor::notes(const std::vector<RankPlacement>& ran) {
  const int hardware = describe_cpu().threads;
  std::vector<std::string> out{
      "ranks are CPU threads in one process, one OpenBLAS thread each (as one GPU each); collectives are the lab's "
      "ring, copying through shared memory; times per step are the slowest rank's"};
  int most = 1;
  for (const RankPlacement& p : ran) most = std::max(most, p.ranks);
  if (most > hardware)
    out.push_back(
        fmt::format("t = {} ranks time-share {} hardware threads: their per-rank times include waiting for a core",
                    most, hardware));
  out.push_back(
      "checked against the unsharded layer on one rank in double: max |sharded - unsharded| / max |unsharded| per "
      "tensor (output, input gradient, every weight gradient)");
  return out;
}

std::vector<std::string> CudaTensor::notes(const std::vector<RankPlacement>& ran) {
  std::vector<std::string> out{
      "ranks on the GPU: each with its shards in device memory, its GEMMs on cuBLAS (fp32, no TF32) on its own handle "
      "and stream, layer norm, softmax, dropout and GeLU as CUDA kernels; times per rank from CUDA events on its "
      "stream, per step the slowest rank's"};
  std::string last;
  bool nccl = false;
  for (const RankPlacement& p : ran) {
    nccl |= p.nccl;
    if (p.ranks > 1 && p.description != last) {
      out.push_back(fmt::format("t = {}: {}", p.ranks, p.description));
      last = p.description;
    }
  }
  if (nccl)
    out.push_back(
        "NCCL's own traffic is not visible to the lab: with NCCL the bytes shown are what the lab's ring copies for "
        "the same call, 2(t-1)/t or (t-1)/t of the buffer");
  else
    out.push_back(
        "collectives are the lab's ring on the GPU: one chunk copied to the neighbour per step, added there by a "
        "kernel; the bytes are counted from those copies");
  out.push_back(
      "checked against the unsharded layer on one CPU thread in double: max |sharded - unsharded| / max |unsharded| "
      "per tensor (output, input gradient, every weight gradient), the GPU ranks' results copied back");
  return out;
}

std::optional<std::string> CudaTensor::compute_scaling_caveat(double t2_over_t1, std::int64_t hidden) {
  // Ranks emulated as streams of one GPU share its SMs: splitting a GEMM that already leaves the GPU idle (small h)
  // gives more, smaller launches, not less time per rank.
  if (!(t2_over_t1 >= 0.9)) return std::nullopt;  // a NaN ratio (no time measured) says nothing either
  return fmt::format(
      "On this GPU per-rank compute did not fall with t (t = 2 took {:.2f}x the time of t = 1): the ranks are "
      "streams of one GPU sharing its SMs, and at h = {} each GEMM is too small to fill it, so splitting it "
      "gives more, smaller kernel launches rather than less time; a GPU per rank and a larger h are where the "
      "1/t shows",
      t2_over_t1, hidden);
}

}  // namespace dlsys::tensor
