#include "kernels/collectives/step_record.h"

#include <algorithm>
#include <stdexcept>

namespace dlsys::collectives {

StepRecorder::StepRecorder(Op op, int n_ranks, std::int64_t count) {
  record_.op = op;
  record_.n_ranks = n_ranks;
  record_.count = count;
  for (int c = 0; c <= n_ranks; ++c) record_.chunk_begin.push_back(chunk_begin(count, n_ranks, c));
  const int steps_per_phase = n_ranks - 1;
  const auto add_rows = [&](const char* phase, int rows) {
    for (int s = 0; s < rows; ++s) record_.steps.push_back({phase, s, std::vector<RankStep>(n_ranks)});
  };
  add_rows("start", 1);
  if (op != Op::AllGather) add_rows("reduce_scatter", steps_per_phase);
  if (op != Op::ReduceScatter) add_rows("all_gather", steps_per_phase);

  // At the start a rank's chunks hold only its own input; for all-gather only its owned chunk holds anything.
  masks_.assign(n_ranks, std::vector<std::uint64_t>(n_ranks, 0));
  held_.assign(n_ranks, std::vector<float>(static_cast<std::size_t>(count), 0.0f));
  for (int r = 0; r < n_ranks; ++r)
    for (int c = 0; c < n_ranks; ++c)
      if (op != Op::AllGather || c == owned_chunk(r, n_ranks)) masks_[r][c] = std::uint64_t{1} << r;
}

std::size_t StepRecorder::row(const std::string& phase, int step) const {
  if (phase == "start") return 0;
  const std::size_t reduce_scatter_rows = record_.op == Op::AllGather ? 0 : record_.n_ranks - 1;
  return 1 + (phase == "reduce_scatter" ? 0 : reduce_scatter_rows) + static_cast<std::size_t>(step);
}

void StepRecorder::start(int rank, const float* buffer) {
  held_[rank].assign(buffer, buffer + record_.count);
  record(rank, "start", 0, -1, -1, 0, nullptr);
}

void StepRecorder::record(int rank, const std::string& phase, int step, int sent_chunk, int received_chunk,
                          std::uint64_t received_contributors, const float* received_values) {
  const int n = record_.n_ranks;
  const bool reduced = phase == "reduce_scatter";
  if (received_chunk >= 0) {
    std::uint64_t& mask = masks_[rank][received_chunk];
    mask = reduced ? (mask | received_contributors) : received_contributors;
    const std::int64_t begin = record_.chunk_begin[received_chunk], end = record_.chunk_begin[received_chunk + 1];
    std::copy(received_values, received_values + (end - begin), held_[rank].begin() + begin);
  }
  RankStep& entry = record_.steps.at(row(phase, step)).ranks.at(rank);
  entry.sent_chunk = sent_chunk;
  entry.sent_to = sent_chunk >= 0 ? next_rank(rank, n) : -1;
  entry.received_chunk = received_chunk;
  entry.received_from = received_chunk >= 0 ? prev_rank(rank, n) : -1;
  entry.reduced = reduced && received_chunk >= 0;
  entry.values = held_[rank];
  entry.contributors = masks_[rank];
}

CollectiveRecord record_ring(Op op, const std::vector<std::vector<float>>& inputs) {
  const int n = static_cast<int>(inputs.size());
  if (n < 1 || n > 64) throw std::invalid_argument("record_ring: between 1 and 64 ranks");
  const std::int64_t count = static_cast<std::int64_t>(inputs.front().size());
  if (count > 4096) throw std::invalid_argument("record_ring: at most 4096 values per rank");
  for (const auto& input : inputs)
    if (static_cast<std::int64_t>(input.size()) != count)
      throw std::invalid_argument("record_ring: ranks differ in count");

  std::vector<std::vector<float>> buffers = inputs;  // in place: the buffer a rank holds is the one it shows
  RankBuffers rank_buffers{{}, {}, count};
  for (auto& buffer : buffers) {
    rank_buffers.send.push_back(buffer.data());
    rank_buffers.recv.push_back(buffer.data());
  }
  MemoryLedger ledger;
  Communicator comm(n, ledger, CommOptions{.segment_bytes = std::max<std::int64_t>(4, count * 4)});
  StepRecorder recorder(op, n, count);
  run_collective(comm, op, Algorithm::Ring, rank_buffers, &recorder);
  return recorder.result();
}

std::vector<std::vector<float>> demo_inputs(int n_ranks, std::int64_t values_per_rank) {
  std::vector<std::vector<float>> inputs(n_ranks, std::vector<float>(static_cast<std::size_t>(values_per_rank)));
  float power_of_ten = 1;
  for (int r = 0; r < n_ranks; ++r, power_of_ten *= 10)
    for (std::int64_t i = 0; i < values_per_rank; ++i)
      inputs[r][i] = n_ranks <= 6 ? float(i + 1) * power_of_ten : float(i + 1 + 100 * r);
  return inputs;
}

}  // namespace dlsys::collectives
