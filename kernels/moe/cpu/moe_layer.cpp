#include "kernels/moe/moe_layer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace dlsys::moe {

namespace {

void copy_rows(const float* from, float* to, std::int64_t rows, std::int64_t hidden) {
  if (rows > 0) std::memcpy(to, from, std::size_t(rows * hidden) * sizeof(float));
}

// y[t] = sum over t's kept assignments (in choice order) of gate x the assignment's output row.
void weighted_sum(const Routing& routing, const std::vector<std::int64_t>& row_of, const float* rows,
                  std::int64_t hidden, float* y) {
  const int k = routing.top_k;
  std::fill(y, y + routing.tokens * hidden, 0.0f);
  for (std::int64_t t = 0; t < routing.tokens; ++t)
    for (int j = 0; j < k; ++j) {
      const auto at = std::size_t(t * k + j);
      if (row_of[at] < 0) continue;
      const float gate = routing.gate[at];
      const float* in = rows + row_of[at] * hidden;
      float* out = y + t * hidden;
      for (std::int64_t c = 0; c < hidden; ++c) out[c] += gate * in[c];
    }
}

// Rows in a buffer laid out expert by expert (global order), each expert's kept assignments by queue place: where
// each kept assignment sits, and where each expert's rows begin.
std::vector<std::int64_t> rows_by_expert(const Routing& routing, std::vector<std::int64_t>& expert_start) {
  expert_start.assign(routing.kept.size() + 1, 0);
  for (std::size_t e = 0; e < routing.kept.size(); ++e) expert_start[e + 1] = expert_start[e] + routing.kept[e];
  std::vector<std::int64_t> row_of(routing.slot.size(), -1);
  for (std::size_t a = 0; a < routing.slot.size(); ++a)
    if (routing.slot[a] >= 0) row_of[a] = expert_start[std::size_t(routing.expert[a])] + routing.slot[a];
  return row_of;
}

}  // namespace

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::Route:
      return "route";
    case Phase::Counts:
      return "counts";
    case Phase::Dispatch:
      return "dispatch";
    case Phase::Experts:
      return "experts";
    case Phase::Combine:
      return "combine";
    case Phase::Finish:
      return "finish";
  }
  return "?";
}

std::vector<Routing> reference_layer(const MoeShape& shape, const Router& router, const Experts& experts,
                                     const std::vector<const float*>& inputs, const std::vector<float*>& outputs) {
  const std::int64_t h = shape.hidden;
  const std::size_t groups = inputs.size();
  std::vector<Routing> routings;
  std::vector<std::vector<std::int64_t>> starts(groups), rows_of(groups);
  std::vector<std::vector<float>> sent(groups), returned(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    routings.push_back(route_tokens(router, inputs[g], shape.tokens, shape));
    rows_of[g] = rows_by_expert(routings[g], starts[g]);
    sent[g].resize(std::size_t(starts[g].back() * h));
    returned[g].resize(sent[g].size());
    for (std::size_t a = 0; a < rows_of[g].size(); ++a)
      if (rows_of[g][a] >= 0)
        copy_rows(inputs[g] + std::int64_t(a) / shape.top_k * h, sent[g].data() + rows_of[g][a] * h, 1, h);
  }
  std::vector<float> in, mid, out;
  for (int e = 0; e < shape.experts; ++e) {
    std::int64_t rows = 0;
    for (std::size_t g = 0; g < groups; ++g) rows += routings[g].kept[std::size_t(e)];
    in.resize(std::size_t(rows * h));
    mid.resize(std::size_t(rows * shape.ffn));
    out.resize(in.size());
    std::int64_t at = 0;
    for (std::size_t g = 0; g < groups; ++g) {
      const std::int64_t n = routings[g].kept[std::size_t(e)];
      copy_rows(sent[g].data() + starts[g][std::size_t(e)] * h, in.data() + at * h, n, h);
      at += n;
    }
    mlp_forward(experts.w1_of(e), experts.w2_of(e), h, shape.ffn, in.data(), rows, mid.data(), out.data());
    at = 0;
    for (std::size_t g = 0; g < groups; ++g) {
      const std::int64_t n = routings[g].kept[std::size_t(e)];
      copy_rows(out.data() + at * h, returned[g].data() + starts[g][std::size_t(e)] * h, n, h);
      at += n;
    }
  }
  for (std::size_t g = 0; g < groups; ++g) weighted_sum(routings[g], rows_of[g], returned[g].data(), h, outputs[g]);
  return routings;
}

ExpertParallelLayer::ExpertParallelLayer(const MoeShape& shape, const Router& router, const Experts& experts,
                                         collectives::RankGroup& comm, ExpertMlps* mlps)
    : shape_(shape),
      router_(router),
      comm_(comm),
      own_mlps_(mlps ? nullptr : std::make_unique<CpuExpertMlps>(experts, shape.ranks)),
      mlps_(mlps ? mlps : own_mlps_.get()),
      ranks_(std::size_t(shape.ranks)) {
  if (shape.ranks != comm.size() || shape.experts % shape.ranks != 0)
    throw std::invalid_argument("an expert-parallel layer needs E divisible by N and a group of N ranks");
}

void ExpertParallelLayer::route(int rank, const float* x) {
  RankState& s = ranks_[std::size_t(rank)];
  const std::int64_t h = shape_.hidden;
  const int per_rank = shape_.experts_per_rank();
  s.routing = route_tokens(router_, x, shape_.tokens, shape_);
  std::vector<std::int64_t> starts;
  s.row_of = rows_by_expert(s.routing, starts);  // global expert order is destination-major already
  s.send.resize(std::size_t(starts.back() * h));
  for (std::size_t a = 0; a < s.row_of.size(); ++a)
    if (s.row_of[a] >= 0) copy_rows(x + std::int64_t(a) / shape_.top_k * h, s.send.data() + s.row_of[a] * h, 1, h);
  s.send_counts.assign(std::size_t(shape_.ranks), 0);
  s.counts_out.resize(std::size_t(shape_.experts));
  for (int e = 0; e < shape_.experts; ++e) {
    s.send_counts[std::size_t(e / per_rank)] += s.routing.kept[std::size_t(e)] * h;
    s.counts_out[std::size_t(e)] = float(s.routing.kept[std::size_t(e)]);  // exact below 2^24 rows
  }
  s.returned.resize(s.send.size());
}

void ExpertParallelLayer::compute_experts(int rank) {
  RankState& s = ranks_[std::size_t(rank)];
  const std::int64_t h = shape_.hidden;
  const int per_rank = shape_.experts_per_rank(), n = shape_.ranks;
  const auto rows_from = [&](int source, int local) {
    return std::int64_t(s.counts_in[std::size_t(source * per_rank + local)]);
  };
  // Where the rows of (source, local expert) begin in recv (and back).
  std::vector<std::int64_t> start(std::size_t(n * per_rank) + 1, 0);
  for (int i = 0; i < n * per_rank; ++i)
    start[std::size_t(i) + 1] = start[std::size_t(i)] + rows_from(i / per_rank, i % per_rank);
  s.back.resize(s.recv.size());
  for (int local = 0; local < per_rank; ++local) {
    std::int64_t rows = 0;
    for (int p = 0; p < n; ++p) rows += rows_from(p, local);
    s.expert_in.resize(std::size_t(rows * h));
    s.expert_out.resize(s.expert_in.size());
    std::int64_t at = 0;
    for (int p = 0; p < n; ++p) {
      copy_rows(s.recv.data() + start[std::size_t(p * per_rank + local)] * h, s.expert_in.data() + at * h,
                rows_from(p, local), h);
      at += rows_from(p, local);
    }
    mlps_->forward(rank, rank * per_rank + local, s.expert_in.data(), rows, s.expert_out.data());
    at = 0;
    for (int p = 0; p < n; ++p) {
      copy_rows(s.expert_out.data() + at * h, s.back.data() + start[std::size_t(p * per_rank + local)] * h,
                rows_from(p, local), h);
      at += rows_from(p, local);
    }
  }
}

void ExpertParallelLayer::finish(int rank, float* y) {
  const RankState& s = ranks_[std::size_t(rank)];
  weighted_sum(s.routing, s.row_of, s.returned.data(), shape_.hidden, y);
}

void ExpertParallelLayer::run_phase(int rank, Phase phase, const float* x, float* y) {
  RankState& s = ranks_[std::size_t(rank)];
  const int per_rank = shape_.experts_per_rank(), n = shape_.ranks;
  switch (phase) {
    case Phase::Route:
      return route(rank, x);
    case Phase::Counts: {
      const std::vector<std::int64_t> each(std::size_t(n), per_rank);
      s.counts_in.resize(std::size_t(n * per_rank));
      return comm_.all_to_all(rank, s.counts_out.data(), each, s.counts_in.data(), each);
    }
    case Phase::Dispatch: {
      s.recv_counts.assign(std::size_t(n), 0);
      for (int i = 0; i < n * per_rank; ++i)
        s.recv_counts[std::size_t(i / per_rank)] += std::int64_t(s.counts_in[std::size_t(i)]) * shape_.hidden;
      std::int64_t total = 0;
      for (std::int64_t c : s.recv_counts) total += c;
      s.recv.resize(std::size_t(total));
      return comm_.all_to_all(rank, s.send.data(), s.send_counts, s.recv.data(), s.recv_counts);
    }
    case Phase::Experts:
      return compute_experts(rank);
    case Phase::Combine:
      return comm_.all_to_all(rank, s.back.data(), s.recv_counts, s.returned.data(), s.send_counts);
    case Phase::Finish:
      return finish(rank, y);
  }
}

void ExpertParallelLayer::forward(int rank, const float* x, float* y) {
  for (int p = 0; p < kPhases; ++p) run_phase(rank, Phase(p), x, y);
}

std::int64_t ExpertParallelLayer::dispatch_floats(int from, int to) const {
  return ranks_[std::size_t(from)].send_counts[std::size_t(to)];
}

}  // namespace dlsys::moe
