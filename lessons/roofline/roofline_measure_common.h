#pragma once
// Constants and helpers the roofline run's stages share.
#include <cstdint>

#include "kernels/common/stores.h"

namespace dlsys::roofline {

// Outputs of arrays from 4 MiB up (past any core's private caches) are written with streaming stores, so their
// traffic is the bytes counted; smaller ones through the caches, where they stay.
inline constexpr double kStreamingFromBytes = 4.0 * 1024 * 1024;
Stores stores_for(double array_bytes);

// Outputs are checked against their references at this many evenly spread elements.
inline constexpr std::int64_t kErrorSamples = 4096;
// Largest error (relative to the values' size) a kernel may show and still be right: fp32 rounding of a few
// operations, or of a dot product's terms, is far below it.
inline constexpr double kErrorTolerance = 1e-4;

// The softmax rows are this long (16 KiB: a row stays in the first-level cache between its passes).
inline constexpr std::int64_t kSoftmaxCols = 4096;

// Ceilings (STREAM, FMA chains) take at least this many timed calls, whatever the repeats asked for.
inline constexpr int kCeilingRepeats = 8;

// Tiny calls are timed in batches of at least this many microseconds.
inline constexpr double kOverheadBatchUs = 200;

}  // namespace dlsys::roofline
