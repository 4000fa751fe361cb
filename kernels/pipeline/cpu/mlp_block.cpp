// MLP block forward, input gradient and weight gradient on OpenBLAS sgemm (see mlp_block.h).
#include "kernels/pipeline/mlp_block.h"

#include <cblas.h>

#include <cstring>

namespace dlsys::pipeline::mlp {

const BlockGemm& openblas_gemm() {
  static const BlockGemm gemm = [](bool trans_a, bool trans_b, int m, int n, int k, const float* a, const float* b,
                                   float beta, float* c) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
                a, trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
  };
  return gemm;
}

void forward(int rows, int width, int inner, const float* w1, const float* w2, const float* x, float* a, float* y,
             Residual residual, const BlockGemm& gemm) {
  const int w = width, f = inner;
  gemm(false, false, rows, f, w, x, w1, 0.0f, a);
  for (long i = 0; i < long(rows) * f; ++i) a[i] = a[i] > 0.0f ? a[i] : 0.0f;
  const bool add = residual == Residual::Add;
  if (add) std::memcpy(y, x, sizeof(float) * rows * w);  // the residual
  gemm(false, false, rows, w, f, a, w2, add ? 1.0f : 0.0f, y);
}

void backward_input(int rows, int width, int inner, const float* w1, const float* w2, const float* a, const float* dy,
                    float* dz, float* dx, Residual residual, const BlockGemm& gemm) {
  const int w = width, f = inner;
  gemm(false, true, rows, f, w, dy, w2, 0.0f, dz);
  for (long i = 0; i < long(rows) * f; ++i)
    if (!(a[i] > 0.0f)) dz[i] = 0.0f;  // relu'(z) = [z > 0] = [a > 0]
  const bool add = residual == Residual::Add;
  if (add) std::memcpy(dx, dy, sizeof(float) * rows * w);  // the residual passes dy straight through
  gemm(false, true, rows, w, f, dz, w1, add ? 1.0f : 0.0f, dx);
}

void backward_weight(int rows, int width, int inner, const float* x, const float* a, const float* dy, const float* dz,
                     float* dw1, float* dw2, const BlockGemm& gemm) {
  const int w = width, f = inner;
  gemm(true, false, f, w, rows, a, dy, 1.0f, dw2);
  gemm(true, false, w, f, rows, x, dz, 1.0f, dw1);
}

void forward(int rows, int hidden, const float* w1, const float* w2, const float* x, float* a, float* y) {
  forward(rows, hidden, hidden, w1, w2, x, a, y);
}

void backward_input(int rows, int hidden, const float* w1, const float* w2, const float* a, const float* dy, float* dz,
                    float* dx) {
  backward_input(rows, hidden, hidden, w1, w2, a, dy, dz, dx);
}

void backward_weight(int rows, int hidden, const float* x, const float* a, const float* dy, const float* dz, float* dw1,
                     float* dw2) {
  backward_weight(rows, hidden, hidden, x, a, dy, dz, dw1, dw2);
}

}  // namespace dlsys::pipeline::mlp
