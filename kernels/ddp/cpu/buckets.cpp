// Bucket assignment and the ring's exact byte count (see buckets.h).
#include "kernels/ddp/buckets.h"

#include <algorithm>

#include "kernels/collectives/ring_schedule.h"

namespace dlsys::ddp {

std::int64_t bucket_elements_for_bytes(std::int64_t bucket_bytes) {
  return std::max<std::int64_t>(2, bucket_bytes / 4 / 2 * 2);
}

std::vector<Bucket> assign_buckets(const training::StackShape& shape, std::int64_t bucket_elements) {
  const std::int64_t total = training::parameter_count(shape), per_layer = training::parameters_per_layer(shape);
  std::vector<Bucket> out;
  for (std::int64_t end = total; end > 0; end -= bucket_elements) {
    const std::int64_t begin = std::max<std::int64_t>(0, end - bucket_elements);
    out.push_back({begin, end, int(begin / per_layer), int((end - 1) / per_layer)});
  }
  return out;
}

std::int64_t bucket_count(const training::StackShape& shape, std::int64_t bucket_elements) {
  return (training::parameter_count(shape) + bucket_elements - 1) / bucket_elements;
}

std::int64_t ring_bytes_sent(std::int64_t words, int n, int rank, int bytes_per_word) {
  if (n <= 1) return 0;
  std::int64_t sent = 0;
  for (int s = 0; s < n - 1; ++s) {
    sent += collectives::chunk_size(words, n, collectives::reduce_scatter_send_chunk(rank, s, n));
    sent += collectives::chunk_size(words, n, collectives::all_gather_send_chunk(rank, s, n));
  }
  return sent * bytes_per_word;
}

}  // namespace dlsys::ddp
