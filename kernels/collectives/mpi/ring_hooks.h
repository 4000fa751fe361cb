#pragma once
// What the ring between processes tells a recorder at each step (record_mpi.cpp); the timed ring has none, and then
// sends no contributor masks at all.
#include <cstdint>

#include "kernels/collectives/op.h"

namespace dlsys::collectives::mpi {

struct RingHooks {
  virtual ~RingHooks() = default;
  // The contributors mask the rank sends with `chunk` (it travels beside the data as a message of its own).
  virtual std::uint64_t mask_to_send(int chunk) = 0;
  // The rank finished step `step` of `phase`: it sent `sent_chunk` and `received_chunk` now holds `values`.
  virtual void stepped(const char* phase, int step, int sent_chunk, int received_chunk, std::uint64_t received_mask,
                       const float* values) = 0;
};

void ring_with_hooks(Op op, const float* send, float* recv, std::int64_t count, RingHooks* hooks);

}  // namespace dlsys::collectives::mpi
