// The quantized GEMV kernels (kernels/quant/cuda) against the double reference of their own dequantized weights, at
// shapes chosen for each path: rows of 1, 31 and 33 (a warp's rows cut short), every shape of the kernel (rows per
// warp, warps per row, loads in flight) with its last block cut short, columns that split into whole 16-byte loads (32,
// 64, 1024, 4096) and that do not (1, 33, 1000), segments that divide the columns and that do not (48, 96 against
// 1024), the x-resident kernel at 1 to 512 loads per row and past its limit, every width of integer code (8, 5, 4, 3, 2
// bits), NF4, and per-tensor, per-row and per-block scales.
#include <doctest/doctest.h>

#include <vector>

#include "kernels/common/seeded_fill.h"
#include "kernels/quant/gemv.h"
#include "kernels/quant/gemv_cuda.h"

using namespace dlsys;
using quant::Granularity;
using quant::QuantSpec;
using quant::Scheme;

namespace {

// y from the GPU against the reference of q; y poisoned first so an unwritten row fails.
double gpu_error(const quant::QuantizedMatrix& q, const std::vector<float>& x, int shape) {
  std::vector<float> y(static_cast<std::size_t>(q.rows), 1e30f);
  std::vector<double> ref(y.size());
  quant::cuda::gemv_quantized(q, x.data(), y.data(), MeasureOptions{.warmup = 0, .repeats = 1}, shape);
  quant::gemv_reference(q, x.data(), ref.data());
  return quant::gemv_max_relative_error(q, x.data(), y.data(), ref.data());
}

void check_shape(std::int64_t rows, std::int64_t cols, const QuantSpec& spec, std::uint32_t seed,
                 int shape = quant::cuda::kLessonGemvShapeOfFormat) {
  std::vector<float> w(static_cast<std::size_t>(rows * cols)), x(static_cast<std::size_t>(cols));
  fill_seeded_uniform(w, seed, 0.05f);
  fill_seeded_uniform(x, seed + 1);
  const quant::QuantizedMatrix q = quant::quantize(w.data(), rows, cols, spec);
  const double err = gpu_error(q, x, shape);
  INFO(rows, " x ", cols, ": ", quant::scheme_name(spec.scheme), " ", spec.bits, " bits, ",
       quant::granularity_name(spec.granularity), " ", spec.block, ", kernel shape ", shape, ": error ", err);
  CHECK(err <= quant::gemv_error_tolerance(cols));
}

}  // namespace

TEST_CASE("CUDA quantized GEMV: every code width and scale layout at awkward shapes") {
  const QuantSpec specs[] = {
      {Scheme::Absmax, Granularity::Channel, 8, 64, false}, {Scheme::Affine, Granularity::Block, 8, 32, false},
      {Scheme::Affine, Granularity::Tensor, 5, 64, false},  {Scheme::Absmax, Granularity::Block, 4, 64, false},
      {Scheme::Affine, Granularity::Block, 4, 32, false},   {Scheme::Absmax, Granularity::Block, 4, 96, false},
      {Scheme::Affine, Granularity::Channel, 3, 64, false}, {Scheme::Absmax, Granularity::Block, 2, 128, false},
      {Scheme::Nf4, Granularity::Block, 4, 64, false},      {Scheme::Nf4, Granularity::Block, 4, 64, true},
      {Scheme::Nf4, Granularity::Channel, 4, 64, false},    {Scheme::Absmax, Granularity::Block, 4, 48, false},
  };
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1},    {1, 32},    {31, 33},  {33, 64},
                                                          {7, 1000}, {33, 1024}, {3, 4096}, {1000, 96}};
  std::uint32_t seed = 1;
  for (const auto& [rows, cols] : shapes)
    for (const QuantSpec& spec : specs) check_shape(rows, cols, spec, seed += 2);
}

TEST_CASE("CUDA quantized GEMV: every kernel shape, the last block and the last warp cut short") {
  // Row counts that leave every shape's last block partly empty (1, 5, 37, 1001 rows) and a warp's rows cut short;
  // 96 columns: 6 int8 loads per row or 3 int4 loads, fewer than the lanes of one warp; segments of 32, 64 and 96
  // codes: 1, 2 and 3 int4 loads per scale (and 2, 4, 6 int8 loads).
  const QuantSpec specs[] = {
      {Scheme::Absmax, Granularity::Channel, 8, 64, false}, {Scheme::Affine, Granularity::Block, 8, 32, false},
      {Scheme::Absmax, Granularity::Block, 4, 64, false},   {Scheme::Affine, Granularity::Block, 4, 96, false},
      {Scheme::Affine, Granularity::Block, 4, 32, false},   {Scheme::Nf4, Granularity::Block, 4, 32, false},
      {Scheme::Nf4, Granularity::Block, 4, 64, true},
  };
  for (int shape = 0; shape < quant::cuda::kGemvVariantCount; ++shape)
    for (const std::int64_t rows : {std::int64_t(1), std::int64_t(5), std::int64_t(37), std::int64_t(1001)})
      for (const QuantSpec& spec : specs) check_shape(rows, 96, spec, std::uint32_t(rows + 7 * shape), shape);
}

TEST_CASE("CUDA quantized GEMV: every kernel shape on rows long enough for several steps of loads per lane") {
  // 8192 int4 columns: 256 loads per row; 8192 int8 columns: 512; 4160 int4 columns: 130 loads, a last step
  // partly past the row's end for every shape.
  for (int shape = 0; shape < quant::cuda::kGemvVariantCount; ++shape)
    for (const std::int64_t cols : {std::int64_t(8192), std::int64_t(4160)})
      for (const QuantSpec& spec : {QuantSpec{Scheme::Absmax, Granularity::Channel, 8, 64, false},
                                    QuantSpec{Scheme::Affine, Granularity::Block, 4, 64, false},
                                    QuantSpec{Scheme::Nf4, Granularity::Block, 4, 64, false}})
        check_shape(13, cols, spec, 5, shape);
}

TEST_CASE("CUDA quantized GEMV: the x-resident kernel at awkward sizes") {
  // Columns: one load per row (16 int8 or 32 int4 columns), a last warp partly idle (4160 int4 columns: 130 loads;
  // 1040 int8: 65), the largest block (512 loads: 16384 int4 or 8192 int8 columns), one load past it (the fallback
  // shape) and rows that do not split into loads (1000: the general kernel); rows 1, 7 (a batch cut short) and 1001
  // (many batches per block); segments of 32, 64 and 128 codes and per row, with and without zero points.
  const QuantSpec specs[] = {
      {Scheme::Absmax, Granularity::Channel, 8, 64, false}, {Scheme::Affine, Granularity::Block, 8, 32, false},
      {Scheme::Affine, Granularity::Block, 8, 128, false},  {Scheme::Absmax, Granularity::Block, 4, 64, false},
      {Scheme::Affine, Granularity::Block, 4, 32, false},   {Scheme::Affine, Granularity::Block, 4, 128, false},
      {Scheme::Affine, Granularity::Channel, 4, 64, false}, {Scheme::Nf4, Granularity::Block, 4, 64, false},
      {Scheme::Nf4, Granularity::Block, 4, 32, true},       {Scheme::Nf4, Granularity::Channel, 4, 64, false},
  };
  const std::int64_t cols_list[] = {16, 32, 1000, 1040, 4160, 8192, 8208, 16384, 16416};
  std::uint32_t seed = 101;
  for (int variant = quant::cuda::kGemvShapeCount; variant < quant::cuda::kGemvVariantCount; ++variant)
    for (const std::int64_t rows : {std::int64_t(1), std::int64_t(7), std::int64_t(1001)})
      for (const std::int64_t cols : cols_list)
        for (const QuantSpec& spec : specs) {
          if (rows * cols > std::int64_t(1) << 23) continue;  // 1001 rows: up to 8208 columns
          check_shape(rows, cols, spec, seed += 2, variant);
        }
}
