#include "lessons/allreduce/allreduce_labels.h"

#include <fmt/format.h>

#include "engine/units.h"
#include "kernels/collectives/cost_model.h"

namespace dlsys::allreduce {

using collectives::Algorithm;
using collectives::AllReduceWay;
using collectives::Op;

std::string op_title(Op op) {
  switch (op) {
    case Op::AllReduce:
      return "all-reduce";
    case Op::ReduceScatter:
      return "reduce-scatter";
    case Op::AllGather:
      return "all-gather";
  }
  return "";
}

namespace {

// The formulas of one (op, algorithm), in N and S.
struct Formulas {
  std::string steps, steps_how;  // steps_how: empty for the ring
  std::string sender, bytes_sent;
  std::string model_bytes;  // what the model charges at 1/beta, when it is not the bytes sent
};

Formulas formulas(Op op, Algorithm algorithm) {
  switch (algorithm) {  // all-reduce only (validate refuses the others)
    case Algorithm::RecursiveDoubling:
      return {"log2 N", "N not a power of two: + 2 for the fold-in", "bytes sent by the busiest rank", "log2 N x S",
              ""};
    case Algorithm::Rabenseifner:
      return {"2 log2 N", "N not a power of two: + 2 for the fold-in", "bytes sent by the busiest rank", "2(N-1)/N x S",
              ""};
    case Algorithm::Direct:
      return {"2(N-1)", "one message at a time to each of N-1 peers, twice", "bytes sent per rank", "2(N-1)/N x S", ""};
    case Algorithm::Ring:
    case Algorithm::Naive:
      break;
  }
  if (algorithm == Algorithm::Ring) {
    const bool both_halves = op == Op::AllReduce;
    return {both_halves ? "2(N-1)" : "N-1", "", "bytes sent per rank", both_halves ? "2(N-1)/N x S" : "(N-1)/N x S",
            ""};
  }
  // Through rank 0: it takes N-1 messages in, then sends N-1 out, one after another.
  const std::string sender = "bytes sent by rank 0 (the busiest)";
  switch (op) {
    case Op::AllReduce:
      return {"2(N-1)", "N-1 messages into rank 0, then N-1 out", sender, "(N-1) x S",
              "2(N-1) x S: (N-1) x S in, then out"};
    case Op::ReduceScatter:
      return {"2(N-1)", "N-1 messages into rank 0, then N-1 out", sender, "(N-1)/N x S",
              "(N-1) x S in + (N-1)/N x S out"};
    case Op::AllGather:
      return {"2(N-1)", "N-1 messages into rank 0, then N-1 out", sender, "(N-1) x S",
              "(N-1)/N x S in + (N-1) x S out"};
  }
  return {};
}

}  // namespace

std::vector<LabelRow> cost_labels(Op op, const std::string& algo, int n, double bytes) {
  const Algorithm algorithm = collectives::algorithm_from_name(algo).value_or(Algorithm::Ring);
  const collectives::CollectiveCost cost = collectives::collective_cost(op, algorithm, n, bytes);
  const Formulas f = formulas(op, algorithm);
  std::vector<LabelRow> rows;
  if (algo == "library")
    rows.push_back({"algorithm", "NCCL picks its own; the model counts the ring's steps and bytes"});
  rows.push_back({fmt::format("steps  {}, N = {}{}", f.steps, n, f.steps_how.empty() ? "" : ": " + f.steps_how),
                  fmt::format("{}", cost.steps)});
  rows.push_back({fmt::format("{}  {}, S = {}", f.sender, f.bytes_sent, format_bytes_binary(bytes)),
                  format_bytes_both(cost.bytes_sent_per_rank)});
  if (!f.model_bytes.empty())
    rows.push_back(
        {fmt::format("bytes through rank 0's link  {}", f.model_bytes), format_bytes_both(cost.model_bytes)});
  // The fold-in puts S in and S out on the critical path besides what the busiest rank sends.
  const bool folded = cost.model_bytes != cost.bytes_sent_per_rank && f.model_bytes.empty();
  if (folded)
    rows.push_back(
        {"bytes on the critical path  the above + S in for the fold-in", format_bytes_both(cost.model_bytes)});
  rows.push_back(
      {fmt::format("alpha-beta model  t = steps x alpha + {} / beta", folded                  ? "critical-path bytes"
                                                                      : f.model_bytes.empty() ? "bytes sent"
                                                                                              : "bytes through rank 0"),
       fmt::format("t = {} alpha + {} / beta", cost.steps, format_bytes_decimal(cost.model_bytes))});
  const std::string factor = op == Op::AllReduce ? "2(N-1)/N" : "(N-1)/N";
  rows.push_back({algorithm == Algorithm::Naive
                      ? fmt::format("busbw factor  {}: the {}'s, for any algorithm (nccl-tests)", factor, op_title(op))
                      : fmt::format("busbw factor  {} (nccl-tests)", factor),
                  format_number(cost.busbw_factor, 4)});
  return rows;
}

std::vector<std::string> ways_headers() {
  return {"way to all-reduce", "links", "steps", "bytes sent by the busiest rank"};
}

std::vector<std::vector<std::string>> ways_rows(int n, double bytes) {
  struct Way {
    AllReduceWay way;
    const char* name;
    const char* links;
    const char* steps;
    const char* sent;
  };
  static const Way ways[] = {
      {AllReduceWay::ThroughRoot, "through rank 0 (a star)", "N-1", "2(N-1)", "(N-1) x S"},
      {AllReduceWay::FullExchange, "full exchange (a link per pair)", "N(N-1)/2", "1", "(N-1) x S"},
      {AllReduceWay::DirectPairs, "direct reduce-scatter + all-gather (a link per pair)", "N(N-1)/2", "2",
       "2(N-1)/N x S"},
      {AllReduceWay::Ring, "ring", "N", "2(N-1)", "2(N-1)/N x S"},
  };
  std::vector<std::vector<std::string>> rows;
  for (const Way& w : ways) {
    const collectives::WayCost c = collectives::all_reduce_way_cost(w.way, n, bytes);
    const auto with_value = [](const char* formula, int value) {
      const std::string v = std::to_string(value);
      return v == formula ? v : fmt::format("{} = {}", formula, v);
    };
    rows.push_back({w.name, with_value(w.links, c.links), with_value(w.steps, c.steps),
                    fmt::format("{} = {}", w.sent, format_bytes_decimal(c.bytes_sent_busiest_rank))});
  }
  return rows;
}

namespace {

// "r", "(r + 1) mod 4", "(r - 2) mod 4": the chunk rank r sends, with the step's offset filled in.
std::string chunk_of_rank(int offset, int n) {
  if (offset == 0) return "r";
  return fmt::format("(r {} {}) mod {}", offset > 0 ? '+' : '-', offset > 0 ? offset : -offset, n);
}

}  // namespace

std::string ring_caption(const collectives::RingStep& step, int n) {
  if (step.phase == "start") return "before any exchange: each rank holds only its own input";
  const int k = step.step + 1;  // counted from 1 on screen
  if (step.phase == "reduce_scatter")
    return fmt::format(
        "reduce-scatter, step k = {} of {}: rank r sends chunk (r - k + 1) mod N = {} to rank r + 1, which adds it", k,
        n - 1, chunk_of_rank(1 - k, n));
  return fmt::format(
      "all-gather, step k = {} of {}: rank r sends chunk (r - k + 2) mod N = {} to rank r + 1, which stores it", k,
      n - 1, chunk_of_rank(2 - k, n));
}

}  // namespace dlsys::allreduce
