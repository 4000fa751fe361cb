// Double-precision references for the roofline kernels: plain loops, one element at a time, no vectors.
#include <algorithm>
#include <cmath>

#include "kernels/roofline/roofline.h"

namespace dlsys::roofline {

void softmax_rows_reference(double* y, const float* x, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    double m = -INFINITY, sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) m = std::max(m, double(row[c]));
    for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(double(row[c]) - m);
    for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(double(row[c]) - m) / sum;
  }
}

void gemv_bf16_reference(double* y, const std::uint16_t* w, const float* x, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += double(from_bf16(w[r * cols + c])) * double(x[c]);
    y[r] = sum;
  }
}

}  // namespace dlsys::roofline
