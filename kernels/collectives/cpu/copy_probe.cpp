#include "kernels/collectives/copy_probe.h"

#include <vector>

#include "engine/measure.h"
#include "engine/parallel.h"
#include "kernels/collectives/cpu/streaming_stores.h"

namespace dlsys::collectives {

double streaming_copy_bandwidth_gbps(int threads, std::int64_t bytes_per_thread) {
  const std::int64_t count = bytes_per_thread / static_cast<std::int64_t>(sizeof(float));
  std::vector<std::vector<float>> sources(threads), targets(threads);
  parallel_for(threads, threads, [&](std::int64_t begin, std::int64_t end) {
    for (auto t = begin; t < end; ++t) {
      sources[t].assign(count, 1.0f);  // touch every page before timing
      targets[t].assign(count, 0.0f);
    }
  });
  const TimingStats stats = measure(
      [&] {
        parallel_for(threads, threads, [&](std::int64_t begin, std::int64_t end) {
          for (auto t = begin; t < end; ++t) detail::copy_results(targets[t].data(), nullptr, sources[t].data(), count);
        });
      },
      MeasureOptions{.warmup = 1, .repeats = 5});
  return static_cast<double>(count * sizeof(float)) * threads / (stats.min_us * 1e3);
}

}  // namespace dlsys::collectives
