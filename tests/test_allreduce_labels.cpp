// The words and numbers the allreduce steps show: built from the operation and the algorithm chosen, never the ring
// all-reduce's whatever the parameters, and with the ring's steps counted from 1 in agreement with its own record.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/params.h"
#include "kernels/collectives/ring_schedule.h"
#include "lessons/allreduce/allreduce_labels.h"
#include "lessons/allreduce/allreduce_steps.h"
#include "lessons/registry.h"

using namespace dlsys;
using namespace dlsys::allreduce;
using collectives::Op;

namespace {

using Rows = std::vector<std::vector<std::string>>;

Rows as_rows(const std::vector<LabelRow>& labels) {
  Rows rows;
  for (const LabelRow& row : labels) rows.push_back({row.label, row.value});
  return rows;
}

constexpr double kS = 16.0 * 1048576;  // 16 MiB: the ring all-reduce sends 1.5 S = 24 MiB per rank at N = 4

}  // namespace

TEST_CASE("cost labels: the ring all-reduce, N = 4, S = 16 MiB") {
  CHECK(as_rows(cost_labels(Op::AllReduce, "ring", 4, kS)) ==
        Rows{{"steps  2(N-1), N = 4", "6"},
             {"bytes sent per rank  2(N-1)/N x S, S = 16 MiB", "25.17 MB (24 MiB)"},
             {"alpha-beta model  t = steps x alpha + bytes sent / beta", "t = 6 alpha + 25.17 MB / beta"},
             {"busbw factor  2(N-1)/N (nccl-tests)", "1.5"}});
}

TEST_CASE("cost labels: the ring reduce-scatter and all-gather take one half each: N-1 steps, (N-1)/N x S") {
  for (Op op : {Op::ReduceScatter, Op::AllGather}) {
    INFO(op_title(op));
    CHECK(as_rows(cost_labels(op, "ring", 4, kS)) ==
          Rows{{"steps  N-1, N = 4", "3"},
               {"bytes sent per rank  (N-1)/N x S, S = 16 MiB", "12.58 MB (12 MiB)"},
               {"alpha-beta model  t = steps x alpha + bytes sent / beta", "t = 3 alpha + 12.58 MB / beta"},
               {"busbw factor  (N-1)/N (nccl-tests)", "0.75"}});
  }
}

TEST_CASE("cost labels: the library is modelled as a ring, and says so") {
  const Rows ring = as_rows(cost_labels(Op::AllReduce, "ring", 4, kS));
  const Rows library = as_rows(cost_labels(Op::AllReduce, "library", 4, kS));
  REQUIRE(library.size() == ring.size() + 1);
  CHECK(library[0] == std::vector<std::string>{"algorithm",
                                               "NCCL picks its own; the model counts the ring's steps "
                                               "and bytes"});
  CHECK(Rows(library.begin() + 1, library.end()) == ring);
  CHECK(as_rows(cost_labels(Op::ReduceScatter, "library", 4, kS))[1][0] == "steps  N-1, N = 4");
}

TEST_CASE("cost labels: the naive all-reduce counts rank 0, its link in then out") {
  CHECK(as_rows(cost_labels(Op::AllReduce, "naive", 4, kS)) ==
        Rows{{"steps  2(N-1), N = 4: N-1 messages into rank 0, then N-1 out", "6"},
             {"bytes sent by rank 0 (the busiest)  (N-1) x S, S = 16 MiB", "50.33 MB (48 MiB)"},
             {"bytes through rank 0's link  2(N-1) x S: (N-1) x S in, then out", "100.66 MB (96 MiB)"},
             {"alpha-beta model  t = steps x alpha + bytes through rank 0 / beta", "t = 6 alpha + 100.66 MB / beta"},
             {"busbw factor  2(N-1)/N: the all-reduce's, for any algorithm (nccl-tests)", "1.5"}});
}

TEST_CASE("cost labels: the naive reduce-scatter and all-gather") {
  CHECK(as_rows(cost_labels(Op::ReduceScatter, "naive", 4, kS)) ==
        Rows{{"steps  2(N-1), N = 4: N-1 messages into rank 0, then N-1 out", "6"},
             {"bytes sent by rank 0 (the busiest)  (N-1)/N x S, S = 16 MiB", "12.58 MB (12 MiB)"},
             {"bytes through rank 0's link  (N-1) x S in + (N-1)/N x S out", "62.91 MB (60 MiB)"},
             {"alpha-beta model  t = steps x alpha + bytes through rank 0 / beta", "t = 6 alpha + 62.91 MB / beta"},
             {"busbw factor  (N-1)/N: the reduce-scatter's, for any algorithm (nccl-tests)", "0.75"}});
  CHECK(as_rows(cost_labels(Op::AllGather, "naive", 4, kS)) ==
        Rows{{"steps  2(N-1), N = 4: N-1 messages into rank 0, then N-1 out", "6"},
             {"bytes sent by rank 0 (the busiest)  (N-1) x S, S = 16 MiB", "50.33 MB (48 MiB)"},
             {"bytes through rank 0's link  (N-1)/N x S in + (N-1) x S out", "62.91 MB (60 MiB)"},
             {"alpha-beta model  t = steps x alpha + bytes through rank 0 / beta", "t = 6 alpha + 62.91 MB / beta"},
             {"busbw factor  (N-1)/N: the all-gather's, for any algorithm (nccl-tests)", "0.75"}});
}

TEST_CASE("the step data carries the cost labels of the chosen op and algorithm") {
  const Lesson& lesson = find_lesson("allreduce");
  const ParamValues p = ParamValues::parse(lesson.params(), {"n=4", "bytes=16MiB", "op=reduce_scatter", "algo=naive"});
  const std::shared_ptr<const StepData> data = lesson.step_data(p);
  const auto* steps = dynamic_cast<const AllreduceSteps*>(data.get());
  REQUIRE(steps != nullptr);
  CHECK(steps->op_title == "reduce-scatter");
  CHECK(steps->algo == "naive");
  REQUIRE(!steps->cost_rows.empty());
  CHECK(steps->cost_rows[0].label == "steps  2(N-1), N = 4: N-1 messages into rank 0, then N-1 out");
  CHECK(steps->cost_rows[0].value == "6");
}

TEST_CASE("the ways to all-reduce, counted one way: bytes sent by the busiest rank, links, steps") {
  CHECK(ways_headers() ==
        std::vector<std::string>{"way to all-reduce", "links", "steps", "bytes sent by the busiest rank"});
  // N = 4, S = 1 MiB = 1,048,576 B: (N-1) x S = 3.15 MB, 2(N-1)/N x S = 1.57 MB (1.5 x S = 1,572,864 B).
  CHECK(ways_rows(4, 1048576) ==
        Rows{{"through rank 0 (a star)", "N-1 = 3", "2(N-1) = 6", "(N-1) x S = 3.15 MB"},
             {"full exchange (a link per pair)", "N(N-1)/2 = 6", "1", "(N-1) x S = 3.15 MB"},
             {"direct reduce-scatter + all-gather (a link per pair)", "N(N-1)/2 = 6", "2", "2(N-1)/N x S = 1.57 MB"},
             {"ring", "N = 4", "2(N-1) = 6", "2(N-1)/N x S = 1.57 MB"}});
}

TEST_CASE("the ring's captions count steps from 1: step k sends chunk (r - k + 1) mod N, then (r - k + 2) mod N") {
  const collectives::CollectiveRecord record = collectives::record_ring_allreduce(4, 4);
  std::vector<std::string> captions;
  for (const auto& row : record.steps) captions.push_back(ring_caption(row, 4));
  CHECK(captions == std::vector<std::string>{
                        "before any exchange: each rank holds only its own input",
                        "reduce-scatter, step k = 1 of 3: rank r sends chunk (r - k + 1) mod N = r to rank r + 1, "
                        "which adds it",
                        "reduce-scatter, step k = 2 of 3: rank r sends chunk (r - k + 1) mod N = (r - 1) mod 4 to rank "
                        "r + 1, which adds it",
                        "reduce-scatter, step k = 3 of 3: rank r sends chunk (r - k + 1) mod N = (r - 2) mod 4 to rank "
                        "r + 1, which adds it",
                        "all-gather, step k = 1 of 3: rank r sends chunk (r - k + 2) mod N = (r + 1) mod 4 to rank r + "
                        "1, which stores it",
                        "all-gather, step k = 2 of 3: rank r sends chunk (r - k + 2) mod N = r to rank r + 1, which "
                        "stores it",
                        "all-gather, step k = 3 of 3: rank r sends chunk (r - k + 2) mod N = (r - 1) mod 4 to rank r + "
                        "1, which stores it"});
  // The 1-based formulas on screen pick the chunks the real ring sent, for every N the step-through draws.
  for (int n = 2; n <= kMaxRanksShown; ++n) {
    const collectives::CollectiveRecord r = collectives::record_ring_allreduce(n, n);
    for (const auto& row : r.steps) {
      if (row.phase == "start") continue;
      const int k = row.step + 1;
      for (int rank = 0; rank < n; ++rank) {
        INFO("n=", n, " phase=", row.phase, " k=", k, " rank=", rank);
        const int expected = collectives::mod(rank - k + (row.phase == "reduce_scatter" ? 1 : 2), n);
        CHECK(row.ranks[rank].sent_chunk == expected);
      }
    }
  }
}
