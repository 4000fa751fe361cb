// The mesh's model, its shards and its closed forms (see mesh_model.h).
#include "kernels/mesh/mesh_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/ddp/buckets.h"

namespace dlsys::mesh {

std::string model_problem(const MeshModel& m) {
  const MeshShape& s = m.mesh;
  if (s.dp < 1 || s.tp < 1 || s.pp < 1) return "parameters 'dp', 'tp', 'pp': each must be at least 1";
  if (m.layers % s.pp != 0)
    return fmt::format(
        "parameter 'layers': value '{}' is not a multiple of pp = {}, so the stages would differ; allowed: a multiple "
        "of pp",
        m.layers, s.pp);
  if (m.hidden % s.tp != 0)
    return fmt::format(
        "parameter 'hidden': value '{}' is not a multiple of tp = {}, so the shards would differ; allowed: a multiple "
        "of tp",
        m.hidden, s.tp);
  if (m.batch % (s.dp * m.micro_batches) != 0)
    return fmt::format(
        "parameter 'batch': value '{}' is not a multiple of dp x micro_batches = {} x {}, so the micro-batches "
        "would differ; allowed: a multiple of {}",
        m.batch, s.dp, m.micro_batches, s.dp * m.micro_batches);
  return "";
}

namespace {

// Where layer `local` of stage p sits in the full vector, and the columns of W1 that shard t holds.
struct LayerPlace {
  std::int64_t w1 = 0, w2 = 0;  // offsets of the layer's W1 (h, f) and W2 (f, h) in the full vector
  std::int64_t first = 0;       // first column of W1 (and row of W2) of the shard
};
LayerPlace place_of(const MeshModel& m, const MeshCoord& c, int local) {
  const training::StackShape stack = m.stack();
  const std::int64_t w1 = training::layer_offset(stack, c.p * m.layers_per_stage() + local);
  return {w1, w1 + std::int64_t(m.hidden) * m.inner(), std::int64_t(c.t) * m.inner_per_rank()};
}

}  // namespace

std::vector<float> shard_of(const MeshModel& m, const MeshCoord& c, const std::vector<float>& full) {
  std::vector<float> shard(std::size_t(m.shard_elements()));
  const std::int64_t f = m.inner(), fs = m.inner_per_rank(), h = m.hidden;
  for (int k = 0; k < m.layers_per_stage(); ++k) {
    const LayerPlace at = place_of(m, c, k);
    float* w1 = shard.data() + k * m.layer_shard_elements();
    for (std::int64_t i = 0; i < h; ++i) std::copy_n(full.data() + at.w1 + i * f + at.first, fs, w1 + i * fs);
    std::copy_n(full.data() + at.w2 + at.first * h, fs * h, w1 + h * fs);
  }
  return shard;
}

void place_shard(const MeshModel& m, const MeshCoord& c, const float* shard, std::vector<float>& full) {
  const std::int64_t f = m.inner(), fs = m.inner_per_rank(), h = m.hidden;
  for (int k = 0; k < m.layers_per_stage(); ++k) {
    const LayerPlace at = place_of(m, c, k);
    const float* w1 = shard + k * m.layer_shard_elements();
    for (std::int64_t i = 0; i < h; ++i) std::copy_n(w1 + i * fs, fs, full.data() + at.w1 + i * f + at.first);
    std::copy_n(w1 + h * fs, fs * h, full.data() + at.w2 + at.first * h);
  }
}

RankCosts rank_costs(const MeshModel& m, const MeshCoord& c) {
  const MeshShape& s = m.mesh;
  const std::int64_t rows = m.rows_per_micro_batch(), h = m.hidden, fs = m.inner_per_rank();
  const std::int64_t activation = rows * h;  // floats of one (rows, h) activation or gradient
  const int lp = m.layers_per_stage();
  // The groups run the lab's ring through TpGroup, which puts group rank r at ring position r - 1.
  const auto position = [](int r, int n) { return (r + n - 1) % n; };
  RankCosts k;
  k.tp_all_reduces = s.tp > 1 ? 2 * lp * m.micro_batches : 0;  // one tp rank has nothing to add up
  k.tp_bytes = k.tp_all_reduces * ddp::ring_bytes_sent(activation, s.tp, position(c.t, s.tp), 4);
  k.dp_buckets = s.dp > 1 ? lp : 0;
  k.dp_bytes = lp * ddp::ring_bytes_sent(m.layer_shard_elements(), s.dp, position(c.d, s.dp), 4);
  k.pp_messages = (c.p + 1 < s.pp ? m.micro_batches : 0) + (c.p > 0 ? m.micro_batches : 0);
  k.pp_bytes = k.pp_messages * activation * 4;
  k.weight_bytes = m.shard_elements() * 4;
  k.gradient_bytes = k.weight_bytes;
  k.micro_batches_in_flight = std::min(s.pp - c.p, m.micro_batches);
  const bool last = c.p == s.pp - 1;
  k.stash_bytes = 4 * rows * (lp * (h + fs) + (last ? h : 0));
  k.activation_bytes = k.micro_batches_in_flight * k.stash_bytes;
  k.scratch_bytes = 4 * rows * (2 * h + fs);
  return k;
}

}  // namespace dlsys::mesh
