#include "lessons/tensor/tensor_steps.h"

#include "kernels/collectives/op.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/tensor/layer_ops.h"
#include "kernels/tensor/tp_layer.h"
#include "lessons/tensor/tensor_lesson.h"

namespace dlsys::tensor {

namespace {

double ring_bytes(collectives::Op op, int t, double elements) {
  const double share = double(t - 1) / t;
  return (op == collectives::Op::AllReduce ? 2 * share : share) * elements * 4;
}

// The real layer at a tiny shape with the chosen t and sp (one head per rank, three positions per rank): its rank 0's
// record of collectives, each scaled to the chosen shape. Every collective of the layer is over b s h elements but
// the norms' gradient all-reduce (4h); with s = 3t, s b h = 6t^2 never equals 4h = 8t, so the sizes tell which.
std::vector<LayerCollective> layer_collectives(const LayerShape& chosen) {
  const int t = chosen.ranks;
  const LayerShape tiny{
      .batch = 1, .seq = 3 * t, .hidden = 2 * t, .heads = t, .ranks = t, .sequence_parallel = chosen.sequence_parallel};
  MemoryLedger ledger;
  SingleThreadedBlas blas;
  TensorParallelLayer layer(tiny, ledger);
  const std::vector<RankStepTimes> times = layer.step();
  std::vector<LayerCollective> out;
  for (const CollectiveCall& call : times.front().calls) {
    const bool activation_sized = call.elements == tiny.tokens() * tiny.hidden;
    const std::int64_t elements = activation_sized ? chosen.tokens() * chosen.hidden : 4 * chosen.hidden;
    out.push_back(
        {collectives::op_name(call.op), call.site, call.backward, elements, ring_bytes(call.op, t, double(elements))});
  }
  return out;
}

std::vector<ScalingPoint> scaling(const LayerShape& chosen) {
  std::vector<ScalingPoint> out;
  for (int t = 1; t <= 64; t *= 2) {
    LayerShape s = chosen;
    s.ranks = t;
    const double n = double(s.tokens()), h = double(s.hidden), sbh = n * h;
    const double share = double(t - 1) / t;
    const double bytes = s.sequence_parallel ? 10 * share * sbh * 4 + 2 * share * 4 * h * 4 : 4 * 2 * share * sbh * 4;
    out.push_back({t, (72 * n * h * h + 12 * n * double(s.seq) * h) / t, bytes});
  }
  return out;
}

std::vector<ActivationPoint> activation(const LayerShape& chosen) {
  std::vector<ActivationPoint> out;
  for (int t = 1; t <= 64; t *= 2) {
    if (chosen.heads % t != 0) continue;
    LayerShape s = chosen;
    s.ranks = t;
    s.sequence_parallel = chosen.sequence_parallel && chosen.seq % t == 0;
    out.push_back({t, korthikanti_bytes(s, Parallelism::None).total(),
                   korthikanti_bytes(s, Parallelism::Tensor).total(),
                   korthikanti_bytes(s, Parallelism::TensorSequence).total(), lab_layer_bytes(s).total()});
  }
  return out;
}

// Equal time: 4 x 2 (t-1)/t x 2 s b h / B = (t-1)/t x (72 s b h^2 + 12 s^2 b h) / F, so h = (16 F / B - 12 s) / 72.
Crossover crossover(const std::string& hardware, double tflops, double link_gbps, std::int64_t seq) {
  const double h = (16.0 * tflops * 1e12 / (link_gbps * 1e9) - 12.0 * double(seq)) / 72.0;
  return {hardware, tflops, link_gbps, h > 0 ? h : 0};
}

}  // namespace

std::shared_ptr<const TensorSteps> make_steps(const TensorParams& params, const TensorTheory& theory) {
  auto steps = std::make_shared<TensorSteps>();
  steps->column = column_split(course_x(), course_w(), kCourseDim, kCourseRanks);
  steps->row = row_split(course_x(), course_w(), kCourseDim, kCourseRanks);
  const auto& y = steps->column.ranks.front().result;
  const auto& p0 = steps->row.ranks[0].local;
  const auto& p1 = steps->row.ranks[1].local;
  for (std::size_t i = 0; i < y.size(); ++i) {
    steps->gelu_of_y.push_back(gelu(double(y[i])));
    steps->sum_of_gelu_partials.push_back(gelu(double(p0[i])) + gelu(double(p1[i])));
  }
  steps->shape = params.shape;
  steps->theory = theory;
  steps->collectives = layer_collectives(steps->shape);
  steps->scaling = scaling(steps->shape);
  steps->activation = activation(steps->shape);
  // [EXT] NVIDIA H100 SXM datasheet: 989 TFLOP/s dense BF16, NVLink 4 900 GB/s both ways (450 each way); one
  // 400 Gb/s InfiniBand link per GPU (50 GB/s) between nodes, as on a DGX H100 (the course's errata E11, E12).
  steps->crossovers.push_back(crossover("H100 SXM, NVLink 4 inside a node", 989, 450, steps->shape.seq));
  steps->crossovers.push_back(crossover("H100 SXM, InfiniBand 400 Gb/s between nodes", 989, 50, steps->shape.seq));
  return steps;
}

}  // namespace dlsys::tensor
