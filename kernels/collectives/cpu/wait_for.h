#pragma once
// How a rank waits for another, in three phases, because one policy cannot serve both a quiet machine and a shared
// one:
//   1. Spin on the counter with pause instructions. When both ranks have a core of their own the data arrives within
//      a microsecond or two, far sooner than a wake-up from sleep. The spin budget adapts per thread: a spin that ends
//      with the data doubles it, one that runs dry halves it. When another process holds the peer's core, spinning
//      never pays, and it costs twice: the spinning rank burns the time slice the scheduler would have used to run it
//      promptly once the data came.
//   2. Yield the core (std::this_thread::yield, sched_yield on Linux) for up to kYieldWindowUs: with more ranks than
//      hardware threads the rank it waits for is often the one waiting for this core, and a yielding rank stays
//      cheap to resume.
//   3. Sleep on a C++20 atomic wait (a futex) until the counter changes.
// Measured with `dlsys-lab run allreduce --set n=2 --set sizes=4KiB,64KiB,1MiB` on a 2-core VM, 4 KiB per call: with
// both cores busy compiling, polling 26 us before sleeping took 130-590 us (in all but one of nine runs), sleeping at
// once 7-8 us, the three phases 2.7-8.8 us; idle, all of them took 2.7-8 us. With n = 4 on the same busy cores: 23-42
// us before, 17-30 us now.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace dlsys::collectives::detail {

inline constexpr int kMaxSpins = 2000;     // pause instructions, tens of microseconds at most
inline constexpr int kMinSpins = 32;       // so that a thread whose spins keep failing can still learn they pay again
inline constexpr int kYieldWindowUs = 50;  // how long phase 2 lasts

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Returns once ready(counter) holds. `spin`: allow phase 1 (only worth it when every rank has a hardware thread).
template <typename Ready>
void wait_for(const std::atomic<std::uint32_t>& counter, bool spin, Ready ready) {
  if (ready(counter.load(std::memory_order_acquire))) return;
  if (spin) {
    thread_local int spin_budget = kMaxSpins;
    for (int i = 0; i < spin_budget; ++i) {
      cpu_relax();
      if (ready(counter.load(std::memory_order_acquire))) {
        spin_budget = std::min(kMaxSpins, 2 * spin_budget);
        return;
      }
    }
    spin_budget = std::max(kMinSpins, spin_budget / 2);
  }
  const auto yield_until = std::chrono::steady_clock::now() + std::chrono::microseconds(kYieldWindowUs);
  for (int i = 1;; ++i) {
    std::this_thread::yield();
    if (ready(counter.load(std::memory_order_acquire))) return;
    if (i % 8 == 0 && std::chrono::steady_clock::now() > yield_until) break;  // reading the clock costs a little too
  }
  for (std::uint32_t seen = counter.load(std::memory_order_acquire); !ready(seen);
       seen = counter.load(std::memory_order_acquire))
    counter.wait(seen, std::memory_order_acquire);
}

}  // namespace dlsys::collectives::detail
