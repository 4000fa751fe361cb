#pragma once
// The two places a matmul's kernels run, behind one interface that the matmul lesson and the roofline's placed
// kernels are written against (they choose the device once, by the run's backend):
//   CPU   the three variants (naive, tiled, blas) on the worker threads, each call timed with steady_clock.
//   CUDA  the GPU ladder (ladder.h), each call timed with CUDA events on operands uploaded once per shape.
// A device names the kernels it offers, counts what each moves through main memory, and times them on one shape's
// operands. Without CUDA in the build (or its library) the CUDA device's calls throw RunFailure saying why, and the
// CUDA backend is never chosen.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend.h"
#include "engine/measure.h"
#include "kernels/matmul/ladder.h"
#include "kernels/matmul/tile_math.h"

namespace dlsys::matmul {

// A kernel a device offers.
struct DeviceKernel {
  std::string key;     // the `impl` choice and the JSON prefix: "naive" -> naive_gflops
  std::string kernel;  // its name in the code on this device: "v2_tiled", "v3_smem_tiled", "cublasSgemm"
  Precision precision = Precision::Fp32;
  bool library = false;  // the vendor's kernel that the others of its precision are measured against
  Rung rung{};           // on a GPU, its rung of the ladder
};

// One shape's A and B placed on the device once, and the host's C: every kernel is timed on the same numbers.
class ShapeOperands {
 public:
  virtual ~ShapeOperands() = default;
  // options.warmup untimed calls, then options.repeats timed. With `fetch_output` the last product ends up in the
  // host's C (on a GPU, C is filled with NaN first, so an element a kernel leaves unwritten shows as wrong).
  virtual TimingStats time(const DeviceKernel& kernel, const MeasureOptions& options, bool fetch_output) = 0;
  // The warp-tiled configuration the device tuned at this shape (the one time() runs); none where it has no such
  // kernel.
  virtual std::optional<WarpTile> tuned_warp_tile() = 0;
};

class MatmulDevice {
 public:
  virtual ~MatmulDevice() = default;
  virtual const char* timer() const = 0;  // "steady_clock" or "cuda_event", as the run's JSON names it
  virtual const DeviceInfo& info() const = 0;
  // The roofline's slope and what it is: on the CPU a stream that only reads, measured now on the kernels' threads
  // with its data flushed from the caches (kernels/hardware/hardware.h), not a copy's bytes per second, which the
  // kernels' reads outrun; on a GPU its datasheet bandwidth.
  virtual double roof_bandwidth_gbps() const = 0;
  virtual const char* roof_bandwidth_source() const = 0;
  // The edge of the tiled variant's square tiles, as its byte count assumes them.
  virtual int tiled_kernel_tile() const = 0;
  // Below this a call's fixed costs (waking threads, a launch) still bend time against n away from n^3.
  virtual double slope_min_time_us() const = 0;
  // Whether a call's launch and the wait for its result can weigh as much as the arithmetic at the sweep's sizes.
  virtual bool calls_are_launches() const = 0;
  // The kernels whose key `wanted` accepts, in the order the lesson reports them.
  virtual std::vector<DeviceKernel> kernels(const std::function<bool(std::string_view key)>& wanted) const = 0;
  // Bytes `kernel` moves through main memory at `shape` (closed forms); `warp_tile`: the configuration it ran.
  virtual double bytes(const DeviceKernel& kernel, const Shape& shape, const WarpTile& warp_tile) const = 0;
  virtual std::string traffic(const DeviceKernel& kernel) const = 0;  // one line on how bytes() counts
  // a, b and c are the host's (m x k, k x n, m x n, row-major) and outlive the operands.
  virtual std::unique_ptr<ShapeOperands> operands(const Shape& shape, const float* a, const float* b,
                                                  float* c) const = 0;
};

// The device of `backend`; `threads` runs the CPU variants, `tile` is the CPU tiled variant's tile as its byte count
// assumes it, `check_cancelled` runs between repeats on the CPU and before each timing on a GPU.
std::unique_ptr<MatmulDevice> make_matmul_device(BackendKind backend, int threads, int tile,
                                                 std::function<void()> check_cancelled);

}  // namespace dlsys::matmul
