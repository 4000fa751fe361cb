#pragma once
// A tensor-parallel group of CPU ranks: t rank threads (collectives::RankGroup) and the three collectives the layer
// needs, called from inside each rank's own work, as a GPU rank calls NCCL between its kernels. Every call is
// the lab's ring (kernels/collectives), so the bytes really move through the links and are counted by them.
//
// Chunk c of a buffer belongs to rank c: reduce-scatter leaves rank r the sum of chunk r, and all-gather takes rank r's
// contribution from chunk r. (The ring hands chunk (p + 1) mod t to its position p, so rank r sits at position r - 1.)
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "kernels/collectives/op.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/tensor/step_times.h"

namespace dlsys::tensor {

class TpGroup {
 public:
  // `options`: how the links wait and cut messages (the mesh lesson turns polling off when its ranks outnumber cores).
  TpGroup(int ranks, MemoryLedger& ledger, const collectives::CommOptions& options = {});
  int size() const { return ranks_; }
  bool polls() const { return ranks_ > 1 && group_->shared_memory_links()->polls(); }

  // Runs work(rank) on every rank at once and returns when all have finished (rank 0's work on a rank thread or the
  // caller, whichever the ring position says). An exception on any rank is rethrown here.
  void run(const std::function<void(int rank)>& work);

  // In place, on `count` floats of rank `rank`'s buffer; each returns the call as the rank saw it.
  CollectiveCall all_reduce(int rank, float* buffer, std::int64_t count);
  CollectiveCall reduce_scatter(int rank, float* buffer, std::int64_t count);  // rank r keeps chunk r of the sum
  CollectiveCall all_gather(int rank, float* buffer, std::int64_t count);      // rank r brings chunk r

  // For ranks run by threads of their own (not run()): a rank that fails calls this, so its peers waiting in a
  // collective stop (PeerFailed) instead of waiting forever. The group cannot be used afterwards.
  void abort();

 private:
  CollectiveCall call(collectives::Op op, int rank, float* buffer, std::int64_t count);
  int position_of(int rank) const { return (rank + ranks_ - 1) % ranks_; }
  int rank_at(int position) const { return (position + 1) % ranks_; }

  int ranks_;
  std::unique_ptr<collectives::RankGroup> group_;  // none for one rank: nothing to exchange
};

}  // namespace dlsys::tensor
