// Placement of ranks on GPUs and the lab's GPU ring's steps (see gpu_ring_plan.h).
#include "kernels/collectives/gpu_ring_plan.h"

#include <fmt/format.h>

#include "kernels/collectives/ring_schedule.h"

namespace dlsys::collectives {

GpuPlacement plan_gpu_placement(int ranks, int visible_gpus, bool nccl_compiled) {
  GpuPlacement p;
  p.ranks = ranks;
  if (ranks == 1) {
    p.description = "1 rank on GPU 0 (nothing to exchange)";
    return p;
  }
  if (visible_gpus >= ranks) {
    p.devices = ranks;
    p.collectives = nccl_compiled ? GpuCollectives::Nccl : GpuCollectives::Ring;
    p.description = fmt::format("{} ranks, one per GPU (GPUs 0..{}), collectives by {}", ranks, ranks - 1,
                                gpu_collectives_name(p.collectives));
    return p;
  }
  p.emulated = true;
  p.description = fmt::format(
      "{} ranks emulated on GPU 0 as {} CUDA streams ({} GPU{} visible): they share its SMs and memory, and the "
      "lab's ring copies inside one GPU, not over NVLink or PCIe",
      ranks, ranks, visible_gpus, visible_gpus == 1 ? "" : "s");
  return p;
}

std::string gpu_collectives_name(GpuCollectives c) { return c == GpuCollectives::Nccl ? "NCCL" : "the lab's ring"; }

std::vector<std::vector<RingTransfer>> gpu_ring_steps(Op op, int ranks, std::int64_t count) {
  std::vector<std::vector<RingTransfer>> steps;
  if (ranks < 2) return steps;
  auto rank_at = [&](int position) { return (position + 1) % ranks; };
  auto add_step = [&](bool reduce, int s) {
    std::vector<RingTransfer>& step = steps.emplace_back();
    for (int p = 0; p < ranks; ++p) {
      const int c = reduce ? reduce_scatter_send_chunk(p, s, ranks) : all_gather_send_chunk(p, s, ranks);
      step.push_back({.from = rank_at(p),
                      .to = rank_at(next_rank(p, ranks)),
                      .begin = chunk_begin(count, ranks, c),
                      .size = chunk_size(count, ranks, c),
                      .reduce = reduce});
    }
  };
  if (op != Op::AllGather)
    for (int s = 0; s < ranks - 1; ++s) add_step(true, s);
  if (op != Op::ReduceScatter)
    for (int s = 0; s < ranks - 1; ++s) add_step(false, s);
  return steps;
}

std::int64_t gpu_ring_elements_sent(Op op, int ranks, int rank, std::int64_t count) {
  std::int64_t elements = 0;
  for (const std::vector<RingTransfer>& step : gpu_ring_steps(op, ranks, count))
    for (const RingTransfer& t : step)
      if (t.from == rank) elements += t.size;
  return elements;
}

std::int64_t gpu_ring_landing_elements(int ranks, std::int64_t count) {
  if (ranks < 2) return 1;
  return std::max<std::int64_t>(1, chunk_size(count, ranks, 0));  // chunk 0 is never smaller than another
}

}  // namespace dlsys::collectives
