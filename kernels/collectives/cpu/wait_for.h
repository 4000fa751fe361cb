#pragma once
// How a rank waits for another: poll a counter briefly (a wake-up from sleep costs microseconds, more than a segment
// takes to arrive when both ranks have a core), then sleep on it with a C++20 atomic wait (a futex).
#include <atomic>
#include <cstdint>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace dlsys::collectives::detail {

// Returns once ready(counter) holds. `poll`: try for about 100 us of pause instructions before sleeping.
template <typename Ready>
void wait_for(const std::atomic<std::uint32_t>& counter, bool poll, Ready ready) {
  constexpr int kPolls = 2000;
  for (int i = 0; poll && i < kPolls; ++i) {
    if (ready(counter.load(std::memory_order_acquire))) return;
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
  for (std::uint32_t seen = counter.load(std::memory_order_acquire); !ready(seen);
       seen = counter.load(std::memory_order_acquire))
    counter.wait(seen, std::memory_order_acquire);
}

}  // namespace dlsys::collectives::detail
