#pragma once
// Runs that would take hours are refused before they start, with the estimate, as sizes that cannot fit in memory
// are. The estimate is work / rate: floating-point operations counted from the sizes, divided by a CPU rate chosen on
// the fast side of what one desktop core does, so a refusal means the run is surely long. The limit is a parameter
// (max_minutes) the user can raise.
#include <string>

#include "engine/params.h"

namespace dlsys {

// The "max_minutes" parameter every lesson with long runs declares.
ParamSpec max_minutes_param();

// CPU rates for the estimates, GFLOP/s per thread.
inline constexpr double kNaiveLoopGflopsPerThread = 1.0;   // textbook loops and double references
inline constexpr double kTiledLoopGflopsPerThread = 16.0;  // cache-tiled kernels
inline constexpr double kBlasGflopsPerThread = 64.0;       // OpenBLAS sgemm with AVX2 FMA

// Seconds for `flop` operations at `gflops_per_thread` on `threads` threads.
double estimated_seconds(double flop, double gflops_per_thread, int threads);

// Throws BadInput when `estimated_s` is over max_minutes; `work` says what was counted ("2 m n k FLOP per call, ...")
// and `smaller` which parameters shrink it.
void refuse_if_longer_than_limit(const ParamValues& params, double estimated_s, const std::string& work,
                                 const std::string& smaller);
// The same against a limit already read (a lesson's typed parameters).
void refuse_if_longer_than(double limit_min, double estimated_s, const std::string& work, const std::string& smaller);

}  // namespace dlsys
