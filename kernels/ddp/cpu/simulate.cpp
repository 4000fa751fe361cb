#include "kernels/ddp/simulate.h"

#include <fmt/format.h>

#include <algorithm>

namespace dlsys::ddp {

std::vector<OpSpan> simulate_step(const TrainConfig& c, const AssumedRates& rates) {
  const double rows = double(c.global_batch) / c.ranks, w = c.shape.width;
  // Per layer and row: forward 4 w^2 FLOP (two GEMMs), backward 8 w^2 (input and weight gradients of both).
  const double forward_us = 4 * rows * w * w * c.shape.layers / (rates.gflops * 1e3);
  const double backward_layer_us = 8 * rows * w * w / (rates.gflops * 1e3);
  const int wire = wire_bytes_per_element(c.wire);
  std::vector<OpSpan> out{{0, false, "F", "F", 0, forward_us}};
  std::vector<double> ready_at(std::size_t(c.shape.layers));
  double t = forward_us;
  for (int layer = c.shape.layers - 1; layer >= 0; --layer) {
    out.push_back({0, false, "B", fmt::format("B{}", layer), t, t + backward_layer_us});
    t += backward_layer_us;
    ready_at[std::size_t(layer)] = t;
  }
  const double backward_end = t;
  double comm_free = 0;
  const std::vector<Bucket> buckets =
      c.mode == SyncMode::Ddp ? assign_buckets(c.shape, c.bucket_elements) : std::vector<Bucket>{};
  for (std::size_t b = 0; b < buckets.size() && c.ranks > 1; ++b) {
    const double bytes = double(buckets[b].elements()) * wire;
    const double ring_us = 2.0 * (c.ranks - 1) * (rates.latency_us + bytes / c.ranks / (rates.link_gbps * 1e3));
    const double start = std::max(comm_free, ready_at[std::size_t(buckets[b].lowest_layer)]);
    out.push_back({0, true, "all_reduce", fmt::format("bucket {}", b), start, start + ring_us});
    comm_free = start + ring_us;
  }
  const double opt_start = std::max(backward_end, comm_free);
  const double opt_us = 12.0 * double(training::parameter_count(c.shape)) / (rates.optimizer_gbps * 1e3);
  out.push_back({0, false, "optimizer", "SGD", opt_start, opt_start + opt_us});
  return out;
}

}  // namespace dlsys::ddp
