#include "kernels/collectives/communicator.h"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "engine/thread_start.h"
#include "kernels/collectives/cpu/wait_for.h"

namespace dlsys::collectives {

namespace {

std::set<std::pair<int, int>> link_pairs(int n_ranks, bool full_mesh) {
  std::set<std::pair<int, int>> pairs;
  if (full_mesh) {
    for (int from = 0; from < n_ranks; ++from)
      for (int to = 0; to < n_ranks; ++to)
        if (from != to) pairs.insert({from, to});
    return pairs;
  }
  for (int r = 0; r < n_ranks && n_ranks > 1; ++r) {
    pairs.insert({r, (r + 1) % n_ranks});  // ring
    if (r != 0) {
      pairs.insert({r, 0});  // star around rank 0
      pairs.insert({0, r});
    }
  }
  return pairs;
}

std::int64_t slot_elements(const CommOptions& options) {
  return std::max<std::int64_t>(1, options.segment_bytes / static_cast<std::int64_t>(sizeof(float)));
}

}  // namespace

std::int64_t Communicator::link_bytes(int n_ranks, const CommOptions& options) {
  return static_cast<std::int64_t>(link_pairs(n_ranks, options.full_mesh).size()) * options.slots_per_channel *
         slot_elements(options) * static_cast<std::int64_t>(sizeof(float));
}

Communicator::Communicator(int n_ranks, MemoryLedger& ledger, const CommOptions& options)
    : n_ranks_(n_ranks),
      segment_elements_(slot_elements(options)),
      polls_(options.poll && n_ranks <= static_cast<int>(std::thread::hardware_concurrency())),
      full_mesh_(options.full_mesh) {
  if (n_ranks < 1) throw std::invalid_argument("a communicator needs at least one rank");
  for (const auto& pair : link_pairs(n_ranks, options.full_mesh))
    links_.emplace(pair, std::make_unique<Channel>(ledger, segment_elements_, options.slots_per_channel, polls_,
                                                   options.link_gbps));
  start_threads(
      threads_, 1, n_ranks, [this](int r) { rank_loop(r); }, [this] { stop_rank_threads(); },
      "the rank threads of the communicator");
}

Communicator::~Communicator() {
  stop_rank_threads();
  for (auto& thread : threads_) thread.join();
}

void Communicator::stop_rank_threads() {
  stopping_ = true;
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
}

Channel& Communicator::link(int from, int to) {
  const auto it = links_.find({from, to});
  if (it == links_.end()) throw std::logic_error(fmt::format("no link from rank {} to rank {}", from, to));
  return *it->second;
}

std::int64_t Communicator::bytes_sent_by(int rank) const {
  std::int64_t bytes = 0;
  for (const auto& [pair, channel] : links_)
    if (pair.first == rank) bytes += channel->bytes_sent();
  return bytes;
}

std::int64_t Communicator::bytes_received_by(int rank) const {
  std::int64_t bytes = 0;
  for (const auto& [pair, channel] : links_)
    if (pair.second == rank) bytes += channel->bytes_sent();
  return bytes;
}

void Communicator::run_on_ranks(const std::function<void(int rank)>& work) {
  work_ = &work;
  first_error_ = nullptr;
  remaining_.store(static_cast<std::uint32_t>(n_ranks_ - 1), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);  // publishes work_ to the rank threads
  generation_.notify_all();
  run_rank(0);  // the caller is rank 0, as the process that launches a collective is one of its ranks
  detail::wait_for(remaining_, polls_, [](std::uint32_t left) { return left == 0; });
  if (first_error_) std::rethrow_exception(first_error_);
}

void Communicator::run_rank(int rank) {
  try {
    (*work_)(rank);
  } catch (...) {
    {
      const std::lock_guard lock(error_mutex_);
      if (!first_error_) first_error_ = std::current_exception();  // the failure itself, before its peers' PeerFailed
    }
    // Its peers may be waiting for this rank's messages: they stop with PeerFailed instead of waiting forever.
    abort_links();
  }
}

void Communicator::abort_links() {
  for (auto& [pair, channel] : links_) channel->abort();
}

void Communicator::rank_loop(int rank) {
  std::uint32_t seen = 0;
  for (;;) {
    detail::wait_for(generation_, polls_, [seen](std::uint32_t now) { return now != seen; });
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_) return;
    run_rank(rank);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_one();
  }
}

}  // namespace dlsys::collectives
