// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::mesh::cuda {

std::unique_ptr<RankGemms> make_gpu_rank_gemms(int ranks, std::int64_t shard_elements,
                                               std::int64_t most_operand_elements, int devices) {
  return cuda_kernels().mesh.make_gpu_rank_gemms(ranks, shard_elements, most_operand_elements, devices);
}

}  // namespace dlsys::mesh::cuda
