#pragma once
// The CUDA matmul kernels, callable from code that never includes a CUDA header. They live in the CUDA library
// (engine/cuda_plugin.h); the calls below reach it through cuda/matmul_cuda_calls.cpp, which throws RunFailure with
// cuda_status().reason where the library is absent. The kernels themselves are the ladder of ladder.h; the files in
// cuda/ say what each teaches.
#include <memory>

#include "engine/measure.h"
#include "kernels/matmul/ladder.h"
#include "kernels/matmul/tile_math.h"

namespace dlsys::matmul::cuda {

// A and B copied to device 0 once, C allocated there; every rung is then timed on the same operands, and the bf16
// rungs on copies of A and B rounded to bf16 once, on the device, before any timing (the lab kernel and cuBLAS get
// the same bf16 operands). Device memory is freed when this leaves scope, also when a later call throws.
inline constexpr int kTunedWarpTile = -1;

class DeviceOperands {
 public:
  virtual ~DeviceOperands() = default;

  // options.warmup untimed calls, then options.repeats timed with CUDA events; C holds the last call's product.
  // `warp_tile` picks the configuration of Rung::WarpTiled (an index into kWarpTiles). Throws RunFailure with the
  // CUDA or cuBLAS error when anything fails.
  // kTunedWarpTile runs best_warp_tile().
  virtual TimingStats time(Rung rung, const MeasureOptions& options, int warp_tile = kLessonWarpTile) = 0;
  // The fastest configuration of kWarpTiles at this shape on this device: every one timed (one warm-up, two timed
  // calls, the faster counts) on the first call, the same answer after.
  virtual int best_warp_tile() = 0;
  // Fills C with NaN bit patterns, so an element a kernel leaves unwritten shows as a wrong result.
  virtual void poison_output() = 0;
  virtual void download_output(float* c) = 0;  // c: (m, n) row-major
};
std::unique_ptr<DeviceOperands> make_device_operands(const Shape& shape, const float* a, const float* b);

inline constexpr int kSmemTile = kSmemTileEdge;  // the tiled rung's square tile, beside the CPU's tiled variant's

}  // namespace dlsys::matmul::cuda
