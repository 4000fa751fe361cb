#pragma once
// The work a pipeline stage does: MLP blocks with a residual, fp32, row-major, on OpenBLAS sgemm.
//   forward          y = x + relu(x W1) W2                       F: two GEMMs
//   backward_input   dz = (dy W2^T) * [a > 0],  dx = dy + dz W1^T   B: two GEMMs (the input gradient)
//   backward_weight  dW2 += a^T dy,  dW1 += x^T dz                W: two GEMMs (the weight gradient)
// so F, B and W cost about the same, and a full backward (B then W) about twice a forward.
// Buffers: x, a, y, dy, dz, dx: (rows, hidden); w1, w2, dw1, dw2: (hidden, hidden).
// The same block widened in the middle (the course's 1024 -> 4096 -> 1024): x, y, dy, dx: (rows, width); a, dz:
// (rows, inner); w1, dw1: (width, inner); w2, dw2: (inner, width). The square calls are these with inner = width.
//
// Split over t tensor-parallel ranks (Megatron-LM's MLP), w1 is a shard of columns and w2 the matching shard of rows:
// each rank's y and dx are partial sums that an all-reduce adds up. Only one rank may then carry the residual (x in
// y, dy in dx), or the sum would hold it t times: the others pass Residual::Leave.
//
// The products go through a BlockGemm: OpenBLAS on the calling thread unless a caller runs them elsewhere (the mesh's
// ranks on a GPU); the ReLU, its mask and the residual stay on the host either way.
#include <functional>

namespace dlsys::pipeline::mlp {

enum class Residual { Add, Leave };

// c (m, n) = op(a) op(b) + beta c, all row-major and packed: op(a) (m, k) is a, or with trans_a the transpose of a
// stored (k, m); op(b) (k, n) likewise.
using BlockGemm = std::function<void(bool trans_a, bool trans_b, int m, int n, int k, const float* a, const float* b,
                                     float beta, float* c)>;
// cblas_sgemm on the calling thread.
const BlockGemm& openblas_gemm();

void forward(int rows, int width, int inner, const float* w1, const float* w2, const float* x, float* a, float* y,
             Residual residual = Residual::Add, const BlockGemm& gemm = openblas_gemm());
void backward_input(int rows, int width, int inner, const float* w1, const float* w2, const float* a, const float* dy,
                    float* dz, float* dx, Residual residual = Residual::Add, const BlockGemm& gemm = openblas_gemm());
void backward_weight(int rows, int width, int inner, const float* x, const float* a, const float* dy, const float* dz,
                     float* dw1, float* dw2, const BlockGemm& gemm = openblas_gemm());

void forward(int rows, int hidden, const float* w1, const float* w2, const float* x, float* a, float* y);
void backward_input(int rows, int hidden, const float* w1, const float* w2, const float* a, const float* dy, float* dz,
                    float* dx);
// Accumulates (+=) into dw1 and dw2: weight gradients add up over micro-batches.
void backward_weight(int rows, int hidden, const float* x, const float* a, const float* dy, const float* dz, float* dw1,
                     float* dw2);

}  // namespace dlsys::pipeline::mlp
