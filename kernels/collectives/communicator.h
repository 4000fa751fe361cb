#pragma once
// A group of CPU ranks: the calling thread is rank 0 and ranks 1..N-1 each have a long-lived thread of their own (like
// one process per GPU), with the channels between them.
// Links exist for the two patterns the lessons use: the ring (r -> r+1) and the star around rank 0 (r <-> 0); with
// CommOptions::full_mesh, between every pair (a crossbar, for recursive doubling, Rabenseifner and direct).
// Threads live as long as the communicator, so timing a collective does not time thread start-up.
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "engine/ledger.h"
#include "kernels/collectives/channel.h"

namespace dlsys::collectives {

struct CommOptions {
  // Messages are cut into segments of this size: the unit of pipelining. Small enough to stay in cache between the
  // sender's copy and the receiver's reduction, large enough that a handshake per segment costs little.
  std::int64_t segment_bytes = 256 << 10;
  // Segments in flight per link. At least 4, which keeps the ring free of deadlock when neighbouring chunks differ by
  // one segment (see ring.cpp).
  int slots_per_channel = 4;
  // Let waiting ranks spin before they yield and sleep when every rank has a hardware thread of its own (never when
  // they share one: the rank waited for may need this very core).
  bool poll = true;
  // A link between every ordered pair of ranks, N(N-1) of them (their slots grow as N^2: callers bound N).
  bool full_mesh = false;
  // 0: a link is as fast as the copy into its slot. > 0: every link also emulates a wire of this many GB/s per
  // direction, one message at a time: a message reaches its receiver bytes / link_gbps after the wire is free of the
  // one before, and the receiver sleeps until then. Rank threads of one CPU otherwise move data at memory speed and
  // spend a core on it; a network moves it at link speed while the cores compute.
  double link_gbps = 0;
};

class Communicator {
 public:
  Communicator(int n_ranks, MemoryLedger& ledger, const CommOptions& options = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int size() const { return n_ranks_; }
  bool polls() const { return polls_; }  // waiting ranks spin before they yield and sleep
  std::int64_t segment_elements() const { return segment_elements_; }
  // The link from one rank to another; exists for ring neighbours and for pairs that include rank 0 (every pair with
  // full_mesh).
  Channel& link(int from, int to);
  // Runs work(rank) on every rank at once (rank 0 on the calling thread) and returns when all have finished. An
  // exception thrown on a rank is rethrown here (the first one); it also aborts every link, so ranks waiting on one
  // stop (PeerFailed) and the communicator cannot be used again.
  void run_on_ranks(const std::function<void(int rank)>& work);
  // Wakes every rank waiting on a link, which then throws PeerFailed, and leaves the links unusable: for ranks run by
  // threads other than the communicator's own (a device mesh), whose failure run_on_ranks does not see.
  void abort_links();
  // Bytes rank `rank` has copied into its outgoing links since the communicator was made.
  std::int64_t bytes_sent_by(int rank) const;
  // Bytes the links into rank `rank` have carried since the communicator was made.
  std::int64_t bytes_received_by(int rank) const;
  bool full_mesh() const { return full_mesh_; }

  // Memory the links of an n-rank communicator hold, so callers can refuse sizes that cannot fit before allocating.
  static std::int64_t link_bytes(int n_ranks, const CommOptions& options);

 private:
  void rank_loop(int rank);
  void run_rank(int rank);
  void stop_rank_threads();  // wakes every rank thread so it returns

  int n_ranks_;
  std::int64_t segment_elements_;
  bool polls_;
  bool full_mesh_;
  std::map<std::pair<int, int>, std::unique_ptr<Channel>> links_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* work_ = nullptr;
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> remaining_{0};
  std::atomic<bool> stopping_{false};
  std::mutex error_mutex_;
  std::exception_ptr first_error_;
};

}  // namespace dlsys::collectives
