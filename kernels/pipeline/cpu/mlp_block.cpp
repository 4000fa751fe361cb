// MLP block forward, input gradient and weight gradient on OpenBLAS sgemm (see mlp_block.h).
#include "kernels/pipeline/mlp_block.h"

#include <cblas.h>

#include <cstring>

namespace dlsys::pipeline::mlp {

void forward(int rows, int hidden, const float* w1, const float* w2, const float* x, float* a, float* y) {
  const int h = hidden;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, h, h, 1.0f, x, h, w1, h, 0.0f, a, h);
  for (long i = 0; i < long(rows) * h; ++i) a[i] = a[i] > 0.0f ? a[i] : 0.0f;
  std::memcpy(y, x, sizeof(float) * rows * h);  // the residual
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, h, h, 1.0f, a, h, w2, h, 1.0f, y, h);
}

void backward_input(int rows, int hidden, const float* w1, const float* w2, const float* a, const float* dy, float* dz,
                    float* dx) {
  const int h = hidden;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, h, h, 1.0f, dy, h, w2, h, 0.0f, dz, h);
  for (long i = 0; i < long(rows) * h; ++i)
    if (!(a[i] > 0.0f)) dz[i] = 0.0f;             // relu'(z) = [z > 0] = [a > 0]
  std::memcpy(dx, dy, sizeof(float) * rows * h);  // the residual passes dy straight through
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, h, h, 1.0f, dz, h, w1, h, 1.0f, dx, h);
}

void backward_weight(int rows, int hidden, const float* x, const float* a, const float* dy, const float* dz, float* dw1,
                     float* dw2) {
  const int h = hidden;
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h, h, rows, 1.0f, a, h, dy, h, 1.0f, dw2, h);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h, h, rows, 1.0f, x, h, dz, h, 1.0f, dw1, h);
}

}  // namespace dlsys::pipeline::mlp
