#pragma once
// The host-side decisions of the CUDA tensor-parallel layer (tensor_cuda.h), kept apart so they are tested on the CPU:
// where t ranks go on the GPUs there are, which collectives they use, what each rank allocates in device memory, and
// how many bytes the lab's GPU ring copies per rank for one call. Plain C++17: the CUDA file includes it.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/op.h"
#include "kernels/tensor/layer_shape.h"

namespace dlsys::tensor {

enum class GpuCollectives { Ring, Nccl };

struct GpuPlacement {
  int ranks = 1;
  int devices = 1;        // GPUs the ranks use
  bool emulated = false;  // several ranks share GPU 0, one CUDA stream each
  GpuCollectives collectives = GpuCollectives::Ring;
  std::string description;  // for the screen and the report
};

// t ranks on `visible_gpus` GPUs: one GPU each when there are enough (NCCL between them when compiled, else the
// lab's ring over peer copies); otherwise all on GPU 0 as streams, the ring's copies inside one GPU (NCCL refuses two
// ranks on one GPU).
GpuPlacement plan_gpu_placement(int ranks, int visible_gpus, bool nccl_compiled);
std::string gpu_collectives_name(GpuCollectives c);  // "the lab's ring", "NCCL"

// Floats of the ring's landing buffer: the largest chunk of any collective of the layer (s b h, or the norms' 4h when
// s b < 4), 1 with one rank.
std::int64_t gpu_landing_floats(const LayerShape& shape);
// Device bytes one rank allocates: the CPU rank's buffers (rank_buffer_counts, fp32), the ring's landing buffer and
// two floats per local row for the layer norms' backward (mean, 1/std).
std::int64_t gpu_rank_device_bytes(const LayerShape& shape);
// What GPU 0 must hold for the whole group: every rank when they are emulated there, else one rank; plus a margin
// per rank on it for its cuBLAS handle and workspace.
std::int64_t gpu0_bytes_needed(const LayerShape& shape, const GpuPlacement& placement);
inline constexpr std::int64_t kGpuRankMarginBytes = 64ll << 20;

// One copy of the lab's GPU ring: rank `from` sends elements [begin, begin + size) of its buffer to rank `to`, which
// adds them into the same range of its own buffer (reduce, through a landing buffer) or stores them there.
struct RingTransfer {
  int from = 0, to = 0;
  std::int64_t begin = 0, size = 0;
  bool reduce = false;
};
// The ring's steps for one in-place call on `count` floats of every rank's buffer, in order; a step is one transfer
// out of and one into every rank, all concurrent. The schedule is ring_schedule.h's over ring positions; rank r sits
// at position r - 1, so that rank r keeps (reduce-scatter) or brings (all-gather) chunk r, as TpGroup's ranks do.
std::vector<std::vector<RingTransfer>> gpu_ring_steps(collectives::Op op, int ranks, std::int64_t count);
// Bytes the ring copies out of `rank` for one call: n - 1 chunks for a reduce-scatter or an all-gather, both for an
// all-reduce.
std::int64_t gpu_ring_bytes_sent(collectives::Op op, int ranks, int rank, std::int64_t count);

}  // namespace dlsys::tensor
