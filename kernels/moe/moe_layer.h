#pragma once
// The mixture-of-experts layer twice: on one rank (the reference), and expert-parallel over a rank group, where rank r
// holds experts [r E/N, (r + 1) E/N) and its own micro-batch. A forward pass over the ranks is six phases:
//   route    - the router on the rank's tokens; each kept assignment's token copied into the dispatch buffer, laid
//              out by destination rank, then expert, then place in the expert's queue;
//   counts   - an all-to-all of E/N counts per peer: how many rows each of its experts will receive;
//   dispatch - the all-to-all of the rows (each peer's block for the experts it holds);
//   experts  - for each local expert, its rows gathered from every source (rank 0's first), its MLP, the outputs put
//              back where the rows came in;
//   combine  - the reverse all-to-all: every output row back to the rank its token lives on;
//   finish   - each token's output: the sum of its kept assignments' outputs times their gates.
// The reference routes each rank's tokens as its own group (the same capacity), gathers each expert's rows in the same
// order and runs the same MLP, so the two agree to the last bit unless the BLAS treats a row differently by the
// matrix it is in.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/collectives/rank_group.h"
#include "kernels/moe/experts.h"
#include "kernels/moe/router.h"

namespace dlsys::moe {

// outputs[g] (tokens, H) of groups inputs[g] (tokens, H), g = 0..N-1, on this thread; the routing of each group.
std::vector<Routing> reference_layer(const MoeShape& shape, const Router& router, const Experts& experts,
                                     const std::vector<const float*>& inputs, const std::vector<float*>& outputs);

enum class Phase { Route, Counts, Dispatch, Experts, Combine, Finish };
inline constexpr int kPhases = 6;
const char* phase_name(Phase phase);

class ExpertParallelLayer {
 public:
  // `comm` carries the all-to-alls (on threads: a group with a crossbar); the router and experts are shared memory
  // that each rank reads its own part of. `mlps` runs the experts' MLPs (on a GPU, say); none: mlp_forward on this
  // CPU.
  ExpertParallelLayer(const MoeShape& shape, const Router& router, const Experts& experts, collectives::RankGroup& comm,
                      ExpertMlps* mlps = nullptr);

  // One phase on rank `rank`: route reads x (tokens, H), finish writes y (tokens, H).
  void run_phase(int rank, Phase phase, const float* x, float* y);
  // Every phase in order.
  void forward(int rank, const float* x, float* y);

  // A local rank's routing at its last route (over processes, this process's rank only).
  const Routing& routing(int rank) const { return ranks_[std::size_t(rank)].routing; }
  // Floats of the dispatch from rank `from` (a local rank) to rank `to` at its last route; `to` = `from`: the block
  // kept on the rank.
  std::int64_t dispatch_floats(int from, int to) const;

 private:
  struct RankState {
    Routing routing;
    std::vector<std::int64_t> row_of;          // (tokens, k): the kept assignment's row in `send`, -1 when dropped
    std::vector<std::int64_t> send_counts;     // floats per destination rank
    std::vector<float> send;                   // by destination, expert, queue place: (rows, H)
    std::vector<float> counts_out, counts_in;  // (N, E/N): rows per (destination | source, local expert)
    std::vector<std::int64_t> recv_counts;     // floats per source rank
    std::vector<float> recv;                   // by source, local expert, queue place: (rows, H)
    std::vector<float> expert_in, expert_out;
    std::vector<float> back;      // the experts' outputs, laid out as recv
    std::vector<float> returned;  // the outputs of this rank's rows, laid out as send
  };
  void route(int rank, const float* x);
  void compute_experts(int rank);
  void finish(int rank, float* y);

  MoeShape shape_;
  const Router& router_;
  collectives::RankGroup& comm_;
  std::unique_ptr<ExpertMlps> own_mlps_;  // when none was given
  ExpertMlps* mlps_ = nullptr;
  std::vector<RankState> ranks_;
};

}  // namespace dlsys::moe
