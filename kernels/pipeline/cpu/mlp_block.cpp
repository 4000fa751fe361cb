// MLP block forward, input gradient and weight gradient on OpenBLAS sgemm (see mlp_block.h).
#include "kernels/pipeline/mlp_block.h"

#include <cblas.h>

#include <cstring>

namespace dlsys::pipeline::mlp {

void forward(int rows, int width, int inner, const float* w1, const float* w2, const float* x, float* a, float* y,
             Residual residual) {
  const int w = width, f = inner;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, f, w, 1.0f, x, w, w1, f, 0.0f, a, f);
  for (long i = 0; i < long(rows) * f; ++i) a[i] = a[i] > 0.0f ? a[i] : 0.0f;
  const bool add = residual == Residual::Add;
  if (add) std::memcpy(y, x, sizeof(float) * rows * w);  // the residual
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, w, f, 1.0f, a, f, w2, w, add ? 1.0f : 0.0f, y, w);
}

void backward_input(int rows, int width, int inner, const float* w1, const float* w2, const float* a, const float* dy,
                    float* dz, float* dx, Residual residual) {
  const int w = width, f = inner;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, f, w, 1.0f, dy, w, w2, w, 0.0f, dz, f);
  for (long i = 0; i < long(rows) * f; ++i)
    if (!(a[i] > 0.0f)) dz[i] = 0.0f;  // relu'(z) = [z > 0] = [a > 0]
  const bool add = residual == Residual::Add;
  if (add) std::memcpy(dx, dy, sizeof(float) * rows * w);  // the residual passes dy straight through
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, w, f, 1.0f, dz, f, w1, f, add ? 1.0f : 0.0f, dx, w);
}

void backward_weight(int rows, int width, int inner, const float* x, const float* a, const float* dy, const float* dz,
                     float* dw1, float* dw2) {
  const int w = width, f = inner;
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, f, w, rows, 1.0f, a, f, dy, w, 1.0f, dw2, w);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, w, f, rows, 1.0f, x, w, dz, f, 1.0f, dw1, f);
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
