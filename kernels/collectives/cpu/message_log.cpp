// The message log, the entry point that runs any of the five all-reduces with it, and a small logged run.
#include <algorithm>
#include <stdexcept>

#include "kernels/collectives/collective_algorithms.h"

namespace dlsys::collectives {

int MessageLog::max_steps() const {
  std::size_t most = 0;
  for (const auto& steps : ranks_) most = std::max(most, steps.size());
  return static_cast<int>(most);
}

std::int64_t MessageLog::bytes_sent(int rank) const {
  std::int64_t bytes = 0;
  for (const MessageStep& step : ranks_.at(static_cast<std::size_t>(rank))) bytes += step.sent_bytes;
  return bytes;
}

std::int64_t MessageLog::max_bytes_sent() const {
  std::int64_t most = 0;
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) most = std::max(most, bytes_sent(r));
  return most;
}

int MessageLog::max_messages_sent() const {
  int most = 0;
  for (const auto& steps : ranks_)
    most = std::max(most, static_cast<int>(std::count_if(steps.begin(), steps.end(),
                                                         [](const MessageStep& s) { return s.sent_to >= 0; })));
  return most;
}

void run_logged(Communicator& comm, Algorithm algorithm, const RankBuffers& buffers, MessageLog* log) {
  const int n = comm.size();
  if (algorithm == Algorithm::Ring) {
    if (log != nullptr) throw std::invalid_argument("run_logged: the ring keeps its own step record (step_record.h)");
    return run_collective(comm, Op::AllReduce, algorithm, buffers);
  }
  if (buffers.send.size() != static_cast<std::size_t>(n) || buffers.recv.size() != static_cast<std::size_t>(n) ||
      buffers.count < 0)
    throw std::invalid_argument("run_logged: one send and one recv buffer per rank, count >= 0");
  if (n > 2 && algorithm != Algorithm::Naive)
    (void)comm.link(2, 1);  // neither ring nor star: throws without every pair's link
  comm.run_on_ranks([&](int rank) {
    switch (algorithm) {
      case Algorithm::RecursiveDoubling:
        return recursive_doubling_rank(comm, rank, buffers, log);
      case Algorithm::Rabenseifner:
        return rabenseifner_rank(comm, rank, buffers, log);
      case Algorithm::Direct:
        return direct_rank(comm, rank, buffers, log);
      case Algorithm::Naive:
        return naive_rank(comm, rank, Op::AllReduce, buffers, log);
      case Algorithm::Ring:
        return;
    }
  });
}

MessageLog log_allreduce(Algorithm algorithm, const std::vector<std::vector<float>>& inputs,
                         std::vector<std::vector<float>>* outputs, std::int64_t segment_bytes) {
  const int n = static_cast<int>(inputs.size());
  if (n < 1 || n > 16) throw std::invalid_argument("log_allreduce: between 1 and 16 ranks");
  const std::int64_t count = static_cast<std::int64_t>(inputs.front().size());
  if (count > (1 << 16)) throw std::invalid_argument("log_allreduce: at most 65536 values per rank");
  std::vector<std::vector<float>> results(inputs.size(), std::vector<float>(static_cast<std::size_t>(count)));
  RankBuffers buffers{{}, {}, count};
  for (int r = 0; r < n; ++r) {
    if (static_cast<std::int64_t>(inputs[r].size()) != count)
      throw std::invalid_argument("log_allreduce: ranks differ in count");
    buffers.send.push_back(inputs[r].data());
    buffers.recv.push_back(results[r].data());
  }
  MemoryLedger ledger;
  Communicator comm(n, ledger, CommOptions{.segment_bytes = segment_bytes, .full_mesh = true});
  MessageLog log(n);
  run_logged(comm, algorithm, buffers, &log);
  if (outputs) *outputs = std::move(results);
  return log;
}

}  // namespace dlsys::collectives
