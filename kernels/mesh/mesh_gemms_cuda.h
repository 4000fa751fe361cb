#pragma once
// The mesh's ranks' products on GPUs, for code that never includes a CUDA header: cuBLAS sgemm, fp32, no TF32.
// Without the CUDA library the call (cuda/mesh_gemms_cuda_calls.cpp) throws RunFailure saying why.
//
// Each rank is a host thread with its own stream, cuBLAS handle, copy of its weight shard and operand buffers on its
// GPU: rank r on GPU r mod `devices`, so with one device every rank shares GPU 0 (emulated) and with a GPU per rank
// each has its own. A product uploads its operands, except one that lies in the rank's shard (the copy on the GPU is
// used), and downloads its result; the copy of the shard is uploaded again whenever the rank reports a change
// (weights_changed), after each optimizer step.
#include <cstdint>
#include <memory>

#include "kernels/mesh/rank_gemms.h"

namespace dlsys::mesh::cuda {

// For `ranks` ranks, each with a shard of `shard_elements` floats and products whose operands and result each hold at
// most `most_operand_elements` floats (a larger one throws RunFailure), on `devices` GPUs. Device memory is freed on
// every path, also when this throws.
std::unique_ptr<RankGemms> make_gpu_rank_gemms(int ranks, std::int64_t shard_elements,
                                               std::int64_t most_operand_elements, int devices = 1);

// What make_gpu_rank_gemms allocates over all its GPUs: 4 ranks (shard + 3 most_operand) bytes (the shard, a, b and
// c), a rank's share on its own GPU.
constexpr std::int64_t gpu_rank_gemms_bytes(int ranks, std::int64_t shard_elements,
                                            std::int64_t most_operand_elements) {
  return 4 * std::int64_t(ranks) * (shard_elements + 3 * most_operand_elements);
}

}  // namespace dlsys::mesh::cuda
