#pragma once
// The ring's own account of what it did: for every step, which chunk each rank sent and received, the rank's buffer
// afterwards and which ranks' inputs each chunk already contains. The lesson's step-through draws this record, so
// what the screen shows is what the implementation did (not a separate animation).
//
// Contributors travel with the data: a message carries the sender's bitmask for its chunk; a reduction ORs it into
// the receiver's mask, a copy replaces it.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/collectives.h"

namespace dlsys::collectives {

struct RankStep {
  int sent_chunk = -1;  // -1: nothing sent at this step
  int sent_to = -1;
  int received_chunk = -1;
  int received_from = -1;
  bool reduced = false;       // the received chunk was added (reduce-scatter) rather than copied (all-gather)
  std::vector<float> values;  // what the rank holds after the step: (count)
  std::vector<std::uint64_t> contributors;  // (n_ranks) per chunk: bit q set when rank q's input is summed in
};

struct RingStep {
  std::string phase;            // "start", "reduce_scatter" or "all_gather"
  int step = 0;                 // 0-based within its phase
  std::vector<RankStep> ranks;  // (n_ranks)
};

struct CollectiveRecord {
  Op op = Op::AllReduce;
  int n_ranks = 0;
  std::int64_t count = 0;                 // elements per rank
  std::vector<std::int64_t> chunk_begin;  // (n_ranks + 1): chunk c is [chunk_begin[c], chunk_begin[c + 1])
  std::vector<RingStep> steps;            // "start", then N-1 reduce-scatter and/or N-1 all-gather steps
};

// Filled by the ring while it runs. Each rank writes only its own entries, on its own thread: no lock.
class StepRecorder {
 public:
  StepRecorder(Op op, int n_ranks, std::int64_t count);

  // The rank's input, before any step.
  void start(int rank, const float* buffer);
  // The mask a rank sends with chunk `chunk`.
  std::uint64_t contributors(int rank, int chunk) const { return masks_[rank][chunk]; }
  // The rank has finished step `step` of `phase`: it sent `sent_chunk`, and received `received_chunk`, whose new values
  // (after adding or copying, (chunk size) floats) are at `received_values`. The ring keeps partial sums only in the
  // message it forwards, so the record keeps each rank's view: its input overlaid with every chunk it has produced.
  void record(int rank, const std::string& phase, int step, int sent_chunk, int received_chunk,
              std::uint64_t received_contributors, const float* received_values);

  const CollectiveRecord& result() const { return record_; }

 private:
  std::size_t row(const std::string& phase, int step) const;

  CollectiveRecord record_;
  std::vector<std::vector<std::uint64_t>> masks_;  // (n_ranks, n_ranks): current contributors per rank and chunk
  std::vector<std::vector<float>> held_;           // (n_ranks, count): what each rank holds now
};

// Runs the real ring (the same code the lesson times) on tiny inputs, in place, one segment per chunk (so a step is
// complete when its record is written), and returns its record.
// inputs: (n_ranks, count), every rank the same count; n_ranks from 1 to 64; count at most 4096.
CollectiveRecord record_ring(Op op, const std::vector<std::vector<float>>& inputs);
inline CollectiveRecord record_ring_allreduce(const std::vector<std::vector<float>>& inputs) {
  return record_ring(Op::AllReduce, inputs);
}
// Inputs that read well on screen: rank r's element i is (i + 1) * 10^r for up to 6 ranks, so every digit of a sum
// names one rank (1111 at i = 0 means ranks 0..3 are all in); beyond 6 ranks, (i + 1) + 100 * r.
std::vector<std::vector<float>> demo_inputs(int n_ranks, std::int64_t values_per_rank);
inline CollectiveRecord record_ring_allreduce(int n_ranks, std::int64_t values_per_rank) {
  return record_ring_allreduce(demo_inputs(n_ranks, values_per_rank));
}

}  // namespace dlsys::collectives
