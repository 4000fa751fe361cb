#include "kernels/tensor/tp_group.h"

#include "engine/measure.h"
#include "kernels/collectives/collectives.h"

namespace dlsys::tensor {

TpGroup::TpGroup(int ranks, MemoryLedger& ledger) : ranks_(ranks) {
  if (ranks > 1) comm_ = std::make_unique<collectives::Communicator>(ranks, ledger);
}

void TpGroup::run(const std::function<void(int rank)>& work) {
  if (!comm_) return work(0);
  comm_->run_on_ranks([&](int position) { work(rank_at(position)); });
}

CollectiveCall TpGroup::call(collectives::Op op, int rank, float* buffer, std::int64_t count) {
  CollectiveCall c{.op = op, .elements = count};
  if (!comm_) return c;  // one rank: its buffer already is the result
  const int position = position_of(rank);
  collectives::RankBuffers buffers;
  buffers.send.assign(static_cast<std::size_t>(ranks_), nullptr);
  buffers.recv.assign(static_cast<std::size_t>(ranks_), nullptr);
  buffers.send[position] = buffer;
  buffers.recv[position] = buffer;
  buffers.count = count;
  // Only this rank's thread writes its outgoing links' counters, so it may read them between its own calls.
  const std::int64_t sent_before = comm_->bytes_sent_by(position);
  const Stopwatch watch;
  collectives::ring_rank(*comm_, position, op, buffers, nullptr);
  c.time_us = watch.elapsed_us();
  c.bytes_sent = comm_->bytes_sent_by(position) - sent_before;
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
