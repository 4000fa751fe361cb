#pragma once
// The process's address-space limit (ulimit -v, RLIMIT_AS) against what is about to be mapped. OpenBLAS maps a
// buffer for each thread that calls into it, and when that mmap fails it retries forever instead of failing. So the
// room for those buffers is checked before the lab calls into OpenBLAS, and a run that would not fit under the limit
// ends as a run failure (exit 3) naming it, not as a process that hangs.
#include <string>

namespace dlsys {

// What each thread that calls into OpenBLAS maps for its buffer (BUFFER_SIZE of its x86-64 builds, 32 << 22 bytes).
inline constexpr double kOpenBlasBufferBytes = 128.0 * (1 << 20);

struct AddressSpace {
  double limit_bytes = 0;   // RLIMIT_AS's soft limit; 0 when there is none
  double mapped_bytes = 0;  // the process's virtual size now
  bool limited() const { return limit_bytes > 0; }
};
AddressSpace address_space();

// Throws RunFailure naming the limit when `run_bytes` more, plus an OpenBLAS buffer for each of `blas_threads` threads
// that are about to call into it, would not fit under the address-space limit. `what` says what is about to run.
void require_address_space(double run_bytes, int blas_threads, const std::string& what);

// openblas_set_num_threads(threads), after checking that the buffers of threads it would add fit under the limit
// (each maps its buffer when it first works).
void set_openblas_threads(int threads);

// Before a run (and before the first call into OpenBLAS): checks that the buffers of OpenBLAS's own threads fit under
// the limit and has them mapped now, once, so that the run's allocations, not OpenBLAS's, are what meets the limit (a
// failed allocation is a run failure; a failed mmap inside OpenBLAS is a hang). Without a limit it does nothing.
void reserve_openblas_buffers(const std::string& what);

}  // namespace dlsys
