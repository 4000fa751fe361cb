#pragma once
// Gradient buckets as DDP forms them: contiguous ranges of the flat gradient vector, cut from its END, because
// backward produces gradients last layer first. Bucket 0 covers the last layer's tail and is ready first; a bucket is
// ready when every layer it touches is, i.e. when the layer holding its first element is.
//
// Unlike PyTorch, which never splits one parameter tensor across two buckets, a bucket here is exactly `cap`
// elements (the last one, at the front of the vector, takes what is left), so buckets can be made as small as a
// latency-bound all-reduce needs.
#include <cstdint>
#include <vector>

#include "kernels/training/mlp_stack.h"

namespace dlsys::ddp {

struct Bucket {
  std::int64_t begin = 0, end = 0;  // [begin, end) of the flat gradient
  int lowest_layer = 0;             // the layer whose backward finishes the bucket (the last one to run)
  int highest_layer = 0;
  std::int64_t elements() const { return end - begin; }
};

// The elements a cap of `bucket_bytes` fp32 bytes holds: whole, even (16-bit wires pack two per word), at least 2.
std::int64_t bucket_elements_for_bytes(std::int64_t bucket_bytes);

// The buckets in the order they are reduced (reverse layer order), each `bucket_elements` long but the last.
std::vector<Bucket> assign_buckets(const training::StackShape& shape, std::int64_t bucket_elements);

// ceil(parameters / bucket_elements): the closed form assign_buckets must match.
std::int64_t bucket_count(const training::StackShape& shape, std::int64_t bucket_elements);

// Bytes rank `rank` sends in one ring all-reduce of `words` words of `bytes_per_word` each over `n_ranks` ranks: the
// reduce-scatter's N-1 chunks plus the all-gather's N-1 chunks, with the chunks of ring_schedule.h (which differ by one
// word when N does not divide `words`). 2 (N-1)/N x words x bytes_per_word exactly when N divides `words`.
std::int64_t ring_bytes_sent(std::int64_t words, int n_ranks, int rank, int bytes_per_word);

}  // namespace dlsys::ddp
