// The ring between processes, recorded step by step (mpi_collectives.h). Each rank keeps a recorder of its own rank
// alone (its masks are what it sends) and logs what it did; rank 0 gathers every rank's input and log and replays
// them into one recorder. A rank's entries depend only on its own calls, in its own order, so the replay gives the
// record the ranks made.
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/collectives/mpi/mpi_check.h"
#include "kernels/collectives/mpi/ring_hooks.h"
#include "kernels/collectives/mpi_collectives.h"

namespace dlsys::collectives::mpi {

namespace {

// A log is doubles: floats and small integers are exact in them; a mask travels as two 32-bit halves.
class LoggingHooks final : public RingHooks {
 public:
  LoggingHooks(StepRecorder& recorder, int rank, std::int64_t count, int n, std::vector<double>& log)
      : recorder_(recorder), rank_(rank), count_(count), n_(n), log_(log) {}
  std::uint64_t mask_to_send(int chunk) override { return recorder_.contributors(rank_, chunk); }
  void stepped(const char* phase, int step, int sent_chunk, int received_chunk, std::uint64_t mask,
               const float* values) override {
    recorder_.record(rank_, phase, step, sent_chunk, received_chunk, mask, values);
    const bool reduce_scatter = std::string(phase) == "reduce_scatter";
    for (double v : {reduce_scatter ? 0.0 : 1.0, double(step), double(sent_chunk), double(received_chunk),
                     double(mask & 0xffffffffu), double(mask >> 32)})
      log_.push_back(v);
    log_.insert(log_.end(), values, values + chunk_size(count_, n_, received_chunk));
  }

 private:
  StepRecorder& recorder_;
  int rank_;
  std::int64_t count_;
  int n_;
  std::vector<double>& log_;
};

void replay(StepRecorder& recorder, int rank, const double* log, std::size_t length, std::int64_t count, int n) {
  std::vector<float> values(log, log + count);
  recorder.start(rank, values.data());
  std::size_t at = static_cast<std::size_t>(count);
  while (at + 6 <= length) {
    const char* phase = log[at] == 0 ? "reduce_scatter" : "all_gather";
    const int step = int(log[at + 1]), sent = int(log[at + 2]), received = int(log[at + 3]);
    const std::uint64_t mask = std::uint64_t(log[at + 4]) | (std::uint64_t(log[at + 5]) << 32);
    at += 6;
    const std::int64_t m = chunk_size(count, n, received);
    values.assign(log + at, log + at + m);
    at += static_cast<std::size_t>(m);
    recorder.record(rank, phase, step, sent, received, mask, values.data());
  }
}

}  // namespace

CollectiveRecord record_ring(Op op, const std::vector<float>& input) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const std::int64_t count = static_cast<std::int64_t>(input.size());
  if (count > 4096 || n > 64) throw std::invalid_argument("record_ring: at most 64 ranks and 4096 values per rank");

  StepRecorder mine(op, n, count);
  mine.start(rank, input.data());
  std::vector<double> log(input.begin(), input.end());  // the input first, then one entry per step
  LoggingHooks hooks(mine, rank, count, n, log);
  std::vector<float> recv(static_cast<std::size_t>(count), 0.0f);
  ring_with_hooks(op, input.data(), recv.data(), count, &hooks);

  const int length = static_cast<int>(log.size());
  std::vector<int> lengths(static_cast<std::size_t>(n)), offsets(static_cast<std::size_t>(n));
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  int total = 0;
  for (int r = 0; r < n; ++r) offsets[r] = std::exchange(total, total + lengths[r]);
  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(total) : 0);
  check(MPI_Gatherv(log.data(), length, MPI_DOUBLE, all.data(), lengths.data(), offsets.data(), MPI_DOUBLE, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  if (rank != 0) return {};
  StepRecorder everyone(op, n, count);
  for (int r = 0; r < n; ++r)
    replay(everyone, r, all.data() + offsets[r], static_cast<std::size_t>(lengths[r]), count, n);
  return everyone.result();
}

}  // namespace dlsys::collectives::mpi
