#pragma once
// Memory traffic of fused and unfused pointwise kernels, per element and in total, shared by the kernels' lesson,
// its step data and the tests. fp32 throughout: every read or write of an element is 4 bytes. Outputs are written
// with streaming stores (no read for ownership), so a write costs its 4 bytes and no more.
#include <cstdint>

#include "kernels/common/host_device.h"

namespace dlsys::fusion {

inline constexpr double kElementBytes = 4.0;

// The bias of y = ReLU(x + b) for x of shape (rows, cols): the course's code broadcasts a bias of shape (cols) over
// the rows (it stays in cache after its first use); a full-size bias has the shape of x and streams like x.
enum class Bias { Broadcast, Full };

// Global-memory operations per element, as the course lists them (E22: its "5 vs 3" counts b as an array read per
// element, which only a full-size bias is).
//   unfused: add (read x, read b, write t), then relu (read t, write y); fused: read x, read b, write y.
DLSYS_HOST_DEVICE constexpr int memory_ops_unfused(Bias bias) { return bias == Bias::Full ? 5 : 4; }
DLSYS_HOST_DEVICE constexpr int memory_ops_fused(Bias bias) { return bias == Bias::Full ? 3 : 2; }
inline constexpr int kLaunchesUnfused = 2;
inline constexpr int kLaunchesFused = 1;

// Bytes per element: 4 per memory operation that reaches main memory.
DLSYS_HOST_DEVICE constexpr double bytes_per_element_unfused(Bias bias) {
  return kElementBytes * memory_ops_unfused(bias);
}
DLSYS_HOST_DEVICE constexpr double bytes_per_element_fused(Bias bias) { return kElementBytes * memory_ops_fused(bias); }

// Whole-array traffic for (rows, cols): per element, plus a broadcast bias read once by the one kernel that uses it.
DLSYS_HOST_DEVICE constexpr double bias_bytes_once(Bias bias, std::int64_t cols) {
  return bias == Bias::Broadcast ? kElementBytes * double(cols) : 0.0;
}
DLSYS_HOST_DEVICE constexpr double bytes_unfused(Bias bias, std::int64_t rows, std::int64_t cols) {
  return bytes_per_element_unfused(bias) * double(rows) * double(cols) + bias_bytes_once(bias, cols);
}
DLSYS_HOST_DEVICE constexpr double bytes_fused(Bias bias, std::int64_t rows, std::int64_t cols) {
  return bytes_per_element_fused(bias) * double(rows) * double(cols) + bias_bytes_once(bias, cols);
}

// x.cos().cos(): two kernels each read and write every element ("4 global accesses"), one fused kernel reads and
// writes it once ("2").
inline constexpr int kCosCosAccessesUnfused = 4;
inline constexpr int kCosCosAccessesFused = 2;

// A chain of L pointwise operations: unfused, each is its own pass (read 4 B, write 4 B); fused, one pass.
DLSYS_HOST_DEVICE constexpr double chain_bytes_per_element_unfused(std::int64_t length) {
  return 2.0 * kElementBytes * double(length);
}
inline constexpr double kChainBytesPerElementFused = 2.0 * kElementBytes;

// The chain's operation l (0-based): v <- a_l v + c_l. |a_l| < 1, so values stay near [-2, 2] for any length.
DLSYS_HOST_DEVICE constexpr float chain_a(int l) { return 1.0f - 1.0f / float(l + 4); }
DLSYS_HOST_DEVICE constexpr float chain_c(int l) { return 0.5f / float(l + 2); }

}  // namespace dlsys::fusion
