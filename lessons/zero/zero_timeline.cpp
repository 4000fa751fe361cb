// The order of one training step's operations at each ZeRO stage, from the parameters alone: what `export` writes
// without a run. Costs are in units, not times: a layer's forward 1, its backward 2 (input and weight gradients), a
// collective of one layer 1 per (N-1)/N of it sent (an all-reduce 2), the optimizer step 1 per layer it updates
// (stage 0: all of them; stages 1-3: 1/N of each). Every rank runs the same list, so one lane is drawn per rank.
#include <fmt/format.h>

#include "lessons/zero/zero_lesson.h"

namespace dlsys {

namespace {

void add(Timeline& tl, int lanes, double& t, double cost, const char* kind, const std::string& label) {
  for (int lane = 0; lane < lanes; ++lane) tl.spans.push_back({lane, t, t + cost, kind, -1, 0, label, 0});
  t += cost;
}

Timeline stage_timeline(int stage, int layers, int ranks) {
  Timeline tl;
  tl.name = fmt::format("stage {} (op order, theory)", stage);
  tl.source = "theory";
  tl.mode = "simulated";
  tl.time_unit = "units";
  const int lanes = std::min(ranks, 4);
  for (int r = 0; r < lanes; ++r) tl.lanes.push_back(fmt::format("rank {}", r));
  const double share = double(ranks - 1) / ranks;  // of a layer, sent per rank by one reduce-scatter or all-gather
  double t = 0;
  for (int l = 0; l < layers; ++l) {
    if (stage == 3) add(tl, lanes, t, share, "all_gather", fmt::format("AG{}", l));
    add(tl, lanes, t, 1, "F", fmt::format("F{}", l));
  }
  for (int l = layers - 1; l >= 0; --l) {
    if (stage == 3) add(tl, lanes, t, share, "all_gather", fmt::format("AG{}", l));
    add(tl, lanes, t, 2, "B", fmt::format("B{}", l));
    if (stage == 0)
      add(tl, lanes, t, 2 * share, "all_reduce", fmt::format("AR{}", l));
    else
      add(tl, lanes, t, share, "reduce_scatter", fmt::format("RS{}", l));
  }
  add(tl, lanes, t, stage == 0 ? double(layers) : double(layers) / ranks, "optimizer", "Adam");
  if (stage == 1 || stage == 2)
    for (int l = 0; l < layers; ++l) add(tl, lanes, t, share, "all_gather", fmt::format("AG{}", l));
  return tl;
}

}  // namespace

std::vector<Timeline> ZeroLesson::theory_timelines(const ParamValues& values) const {
  return zero_op_order(read_params(values));
}

std::vector<Timeline> zero_op_order(const zero_lesson::ZeroParams& p) {
  std::vector<Timeline> out;
  for (int stage = 0; stage <= 3; ++stage) out.push_back(stage_timeline(stage, p.layers, p.n));
  return out;
}

}  // namespace dlsys
