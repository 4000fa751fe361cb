// Recursive doubling and Rabenseifner's all-reduce on CPU ranks, with the fold-in for N not a power of two
// (collective_algorithms.h says what each does and where it comes from).
#include <cstring>

#include "kernels/collectives/collective_algorithms.h"
#include "kernels/collectives/cpu/exchange.h"

namespace dlsys::collectives {

namespace {

constexpr std::int64_t kFloatBytes = sizeof(float);

// The fold-in: which ranks sit out, and each remaining rank's number among the p that run the power-of-two part.
struct Fold {
  int p = 1;      // ranks in the power-of-two part
  int extra = 0;  // N - p: ranks 0, 2, .., 2(extra - 1) hand their data to their odd neighbour and sit out
  bool sits_out(int rank) const { return rank < 2 * extra && rank % 2 == 0; }
  int id_of(int rank) const { return rank < 2 * extra ? rank / 2 : rank - extra; }
  int rank_of(int id) const { return id < extra ? 2 * id + 1 : id + extra; }
};

Fold fold_of(int n) {
  Fold f;
  f.p = power_of_two_below(n);
  f.extra = n - f.p;
  return f;
}

void log_step(MessageLog* log, int rank, MessageStep step) {
  if (log) log->add(rank, std::move(step));
}

// Before the power-of-two part: an even rank below 2e hands its buffer to rank + 1 and is done until the result comes
// back; rank + 1 adds it to its own input. Returns false for a rank that sits out. `current` is where the rank's
// partial sum is: its send buffer until something is added into recv.
bool fold_in(Communicator& comm, int rank, const Fold& f, const RankBuffers& b, const float*& current,
             MessageLog* log) {
  if (rank >= 2 * f.extra) return true;
  const std::int64_t count = b.count;
  if (f.sits_out(rank)) {
    send_range(comm.link(rank, rank + 1), b.send[rank], count);
    log_step(log, rank, {"fold_in", rank + 1, count * kFloatBytes, -1, 0, false});
    return false;
  }
  receive_range(comm.link(rank - 1, rank), b.recv[rank], b.send[rank], count);
  log_step(log, rank, {"fold_in", -1, 0, rank - 1, count * kFloatBytes, true});
  current = b.recv[rank];
  return true;
}

// After it: the odd rank sends the finished sum back to the even rank that sat out.
void fold_out(Communicator& comm, int rank, const Fold& f, const RankBuffers& b, MessageLog* log) {
  if (rank >= 2 * f.extra) return;
  const std::int64_t count = b.count;
  if (f.sits_out(rank)) {
    receive_range(comm.link(rank + 1, rank), b.recv[rank], nullptr, count);
    log_step(log, rank, {"fold_out", -1, 0, rank + 1, count * kFloatBytes, false});
  } else {
    send_range(comm.link(rank, rank - 1), b.recv[rank], count);
    log_step(log, rank, {"fold_out", rank - 1, count * kFloatBytes, -1, 0, false});
  }
}

void copy_whole(float* target, const float* source, std::int64_t count) {
  if (target != source && count > 0) std::memcpy(target, source, static_cast<std::size_t>(count) * sizeof(float));
}

// Both algorithms around their power-of-two phase: N folded onto p = 2^k ranks; each rank left in calls
// `phase(f, id, current)` with its id among the p and the buffer its partial sum is in; then the result goes back out
// to the folded-away ranks.
template <class Phase>
void run_folded(Communicator& comm, int rank, const RankBuffers& b, MessageLog* log, const Phase& phase) {
  const Fold f = fold_of(comm.size());
  const float* current = b.send[rank];
  if (fold_in(comm, rank, f, b, current, log)) phase(f, f.id_of(rank), current);
  fold_out(comm, rank, f, b, log);
}

}  // namespace

int power_of_two_below(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

void recursive_doubling_rank(Communicator& comm, int rank, const RankBuffers& b, MessageLog* log) {
  run_folded(comm, rank, b, log, [&](const Fold& f, int id, const float* current) {
    const std::int64_t count = b.count;
    float* recv = b.recv[rank];
    for (int mask = 1; mask < f.p; mask *= 2) {
      const int partner = f.rank_of(id ^ mask);
      // The whole partial sum goes out while the partner's comes in and is added: both then hold the same sum.
      detail::exchange(comm.link(rank, partner), current, count, comm.link(partner, rank), recv, current, count);
      log_step(log, rank, {"exchange", partner, count * kFloatBytes, partner, count * kFloatBytes, true});
      current = recv;
    }
    copy_whole(recv, current, count);  // N = 1: the input is the result
  });
}

void rabenseifner_rank(Communicator& comm, int rank, const RankBuffers& b, MessageLog* log) {
  run_folded(comm, rank, b, log, [&](const Fold& f, int id, const float* current) {
    const std::int64_t count = b.count;
    float* recv = b.recv[rank];
    // The buffer is cut into p chunks (sizes differ by at most one element); a rank works on the chunks [lo, hi).
    const auto at = [&](int chunk) { return chunk_begin(count, f.p, chunk); };
    int lo = 0, hi = f.p;
    // Recursive halving: at distance p/2, p/4, .., 1 the rank keeps the half of its window on its side of the partner
    // and sends the other half, which the partner keeps; it adds the partner's copy of its own half.
    for (int mask = f.p / 2; mask >= 1; mask /= 2) {
      const int partner = f.rank_of(id ^ mask);
      const int mid = lo + (hi - lo) / 2;
      const bool upper = (id & mask) != 0;
      const int send_lo = upper ? lo : mid, send_hi = upper ? mid : hi;
      const int keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
      const std::int64_t send_n = at(send_hi) - at(send_lo), keep_n = at(keep_hi) - at(keep_lo);
      detail::exchange(comm.link(rank, partner), current + at(send_lo), send_n, comm.link(partner, rank),
                       recv + at(keep_lo), current + at(keep_lo), keep_n);
      log_step(log, rank, {"reduce_scatter", partner, send_n * kFloatBytes, partner, keep_n * kFloatBytes, true});
      lo = keep_lo;
      hi = keep_hi;
      current = recv;
    }
    copy_whole(recv, current, count);  // N = 1: nothing was exchanged
    // Recursive doubling all-gather: the windows grow back, distance 1, 2, .., p/2; partners' windows are adjacent.
    for (int mask = 1; mask < f.p; mask *= 2) {
      const int partner = f.rank_of(id ^ mask);
      const int size = hi - lo;
      const int partner_lo = lo ^ mask;  // windows of `size` = mask chunks start at a multiple of it
      const std::int64_t send_n = at(hi) - at(lo), recv_n = at(partner_lo + size) - at(partner_lo);
      detail::exchange(comm.link(rank, partner), recv + at(lo), send_n, comm.link(partner, rank), recv + at(partner_lo),
                       nullptr, recv_n);
      log_step(log, rank, {"all_gather", partner, send_n * kFloatBytes, partner, recv_n * kFloatBytes, false});
      lo = std::min(lo, partner_lo);
      hi = lo + 2 * size;
    }
  });
}

}  // namespace dlsys::collectives
