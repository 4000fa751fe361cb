#pragma once
// Where the mesh's ranks run the products of their MLP blocks (kernels/pipeline/mlp_block.h) when not on their own
// threads' OpenBLAS: a GPU that every rank shares (mesh_gemms_cuda.h). The rank threads, the ReLU and the residual, the
// all-reduces, the pipeline's messages and the optimizer stay on the host either way.
#include <cstdint>

namespace dlsys::mesh {

class RankGemms {
 public:
  virtual ~RankGemms() = default;
  // Rank `rank`'s shard of `elements` floats at `host`, as it stands now: called before its first product and after
  // every update of the shard, never during one of the rank's products. Products whose operand lies in it may read the
  // copy.
  virtual void weights_changed(int rank, const float* host, std::int64_t elements) = 0;
  // c (m, n) = op(a) op(b) + beta c for rank `rank` (pipeline::mlp::BlockGemm's contract); returns once c is on the
  // host. A rank's calls come from one thread at a time; different ranks call at once.
  virtual void gemm(int rank, bool trans_a, bool trans_b, int m, int n, int k, const float* a, const float* b,
                    float beta, float* c) = 0;
  // Bytes allocated on a GPU for them, cuBLAS's own workspaces not included.
  virtual std::int64_t device_bytes() const = 0;
};

}  // namespace dlsys::mesh
