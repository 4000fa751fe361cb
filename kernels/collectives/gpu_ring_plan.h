#pragma once
// The host-side plan of collectives between ranks on GPUs, shared by every GPU path that has ranks (tensor, ddp,
// zero) and tested on the CPU: where N ranks go on the GPUs there are, which collectives they use, and the steps and
// bytes of the lab's ring when it runs as copies between CUDA streams (cuda/stream_ring.h executes them). Plain C++17.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/op.h"

namespace dlsys::collectives {

enum class GpuCollectives { Ring, Nccl };

struct GpuPlacement {
  int ranks = 1;
  int devices = 1;        // GPUs the ranks use
  bool emulated = false;  // several ranks share GPU 0, one CUDA stream each
  GpuCollectives collectives = GpuCollectives::Ring;
  std::string description;  // for the screen and the report
};

// N ranks on `visible_gpus` GPUs: one GPU each when there are enough (NCCL between them when compiled, else the
// lab's ring over peer copies); otherwise all on GPU 0 as streams, the ring's copies inside one GPU (NCCL refuses two
// ranks on one GPU).
GpuPlacement plan_gpu_placement(int ranks, int visible_gpus, bool nccl_compiled);
std::string gpu_collectives_name(GpuCollectives c);  // "the lab's ring", "NCCL"

// One copy of the lab's GPU ring: rank `from` sends elements [begin, begin + size) of its buffer to rank `to`, which
// adds them into the same range of its own buffer (reduce, through a landing buffer) or stores them there.
struct RingTransfer {
  int from = 0, to = 0;
  std::int64_t begin = 0, size = 0;
  bool reduce = false;
};
// The ring's steps for one in-place call on `count` elements of every rank's buffer, in order; a step is one transfer
// out of and one into every rank, all concurrent. The schedule is ring_schedule.h's over ring positions; rank r sits
// at position r - 1, so that rank r keeps (reduce-scatter) or brings (all-gather) chunk r (chunk_begin/chunk_size).
std::vector<std::vector<RingTransfer>> gpu_ring_steps(Op op, int ranks, std::int64_t count);
// Elements the ring copies out of `rank` for one call: n - 1 chunks for a reduce-scatter or an all-gather, both for
// an all-reduce.
std::int64_t gpu_ring_elements_sent(Op op, int ranks, int rank, std::int64_t count);
// The same in fp32 bytes.
inline std::int64_t gpu_ring_bytes_sent(Op op, int ranks, int rank, std::int64_t count) {
  return gpu_ring_elements_sent(op, ranks, rank, count) * std::int64_t(sizeof(float));
}
// The largest chunk any rank receives in one call on `count` elements (the landing buffer it needs); 1 with one rank.
std::int64_t gpu_ring_landing_elements(int ranks, std::int64_t count);

}  // namespace dlsys::collectives
