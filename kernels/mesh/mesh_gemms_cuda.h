#pragma once
// The mesh's ranks' products on GPU 0, for code that never includes a CUDA header: cuBLAS sgemm, fp32, no TF32.
// Without the CUDA library the call (cuda/mesh_gemms_cuda_calls.cpp) throws RunFailure saying why.
//
// One GPU serves every rank: the ranks are emulated, each a host thread with its own stream, cuBLAS handle, copy of
// its weight shard and operand buffers on GPU 0. A product uploads its operands, except one that lies in the rank's
// shard (the copy on the GPU is used), and downloads its result; the copy of the shard is uploaded again whenever
// the rank reports a change (weights_changed), after each optimizer step.
#include <cstdint>
#include <memory>

#include "kernels/mesh/rank_gemms.h"

namespace dlsys::mesh::cuda {

// For `ranks` ranks, each with a shard of `shard_elements` floats and products whose operands and result each hold at
// most `most_operand_elements` floats (a larger one throws RunFailure). Device memory is freed on every path, also
// when this throws.
std::unique_ptr<RankGemms> make_gpu_rank_gemms(int ranks, std::int64_t shard_elements,
                                               std::int64_t most_operand_elements);

// What make_gpu_rank_gemms allocates: 4 ranks (shard + 3 most_operand) bytes (the shard, a, b and c).
constexpr std::int64_t gpu_rank_gemms_bytes(int ranks, std::int64_t shard_elements,
                                            std::int64_t most_operand_elements) {
  return 4 * std::int64_t(ranks) * (shard_elements + 3 * most_operand_elements);
}

}  // namespace dlsys::mesh::cuda
