#include "kernels/tensor/tp_group.h"

#include "engine/measure.h"

namespace dlsys::tensor {

TpGroup::TpGroup(int ranks, MemoryLedger& ledger, const collectives::CommOptions& options) : ranks_(ranks) {
  if (ranks > 1) group_ = collectives::make_thread_group(ranks, ledger, options);
}

void TpGroup::abort() {
  if (group_) group_->shared_memory_links()->abort_links();
}

void TpGroup::run(const std::function<void(int rank)>& work) {
  if (!group_) return work(0);
  group_->run_on_ranks([&](int position) { work(rank_at(position)); });
}

CollectiveCall TpGroup::call(collectives::Op op, int rank, float* buffer, std::int64_t count) {
  CollectiveCall c{.op = op, .elements = count};
  if (!group_) return c;  // one rank: its buffer already is the result
  const int position = position_of(rank);
  // Only this rank's thread writes its outgoing links' counters, so it may read them between its own calls.
  const std::int64_t sent_before = group_->bytes_sent_by(position);
  const Stopwatch watch;
  group_->ring(position, op, buffer, buffer, count);
  c.time_us = watch.elapsed_us();
  c.bytes_sent = group_->bytes_sent_by(position) - sent_before;
  return c;
}

CollectiveCall TpGroup::all_reduce(int rank, float* buffer, std::int64_t count) {
  return call(collectives::Op::AllReduce, rank, buffer, count);
}
CollectiveCall TpGroup::reduce_scatter(int rank, float* buffer, std::int64_t count) {
  return call(collectives::Op::ReduceScatter, rank, buffer, count);
}
CollectiveCall TpGroup::all_gather(int rank, float* buffer, std::int64_t count) {
  return call(collectives::Op::AllGather, rank, buffer, count);
}

}  // namespace dlsys::tensor
