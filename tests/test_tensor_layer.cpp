// The tensor-parallel kernels: the course's 4x4 example through the real column and row splits, the activation
// formulas as exact numbers, the sharded layer against the unsharded double layer at awkward sizes, the double layer's
// own gradients against finite differences, and the bytes the ledger and the links count against their formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/ledger.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/tensor/layer_ops.h"
#include "kernels/tensor/linear_split.h"
#include "kernels/tensor/tp_layer.h"

using namespace dlsys;
using namespace dlsys::tensor;

TEST_CASE("tensor: the course's column split gathers y = [6, 14, 27, 24] on both ranks") {
  const LinearSplitRecord r = column_split(course_x(), course_w(), kCourseDim, kCourseRanks);
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].w == std::vector<float>{1, 2, 3, 4, 2, 0, -1, 4});  // W_left, the course's
  CHECK(r.ranks[1].w == std::vector<float>{5, 6, 7, 8, 3, 1, 8, 2});   // W_right
  CHECK(r.ranks[0].x == std::vector<float>{1, 2, 0, 1});
  CHECK(r.ranks[1].x == std::vector<float>{1, 2, 0, 1});
  CHECK(r.ranks[0].local == std::vector<float>{6, 14});
  CHECK(r.ranks[1].local == std::vector<float>{27, 24});
  for (const auto& rank : r.ranks) CHECK(rank.result == std::vector<float>{6, 14, 27, 24});
}

TEST_CASE("tensor: the course's row split all-reduces partials [7, 10, 19, 22] + [-1, 4, 8, 2]") {
  const LinearSplitRecord r = row_split(course_x(), course_w(), kCourseDim, kCourseRanks);
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].x == std::vector<float>{1, 2});
  CHECK(r.ranks[1].x == std::vector<float>{0, 1});
  CHECK(r.ranks[0].local == std::vector<float>{7, 10, 19, 22});
  CHECK(r.ranks[1].local == std::vector<float>{-1, 4, 8, 2});
  for (const auto& rank : r.ranks) CHECK(rank.result == std::vector<float>{6, 14, 27, 24});
}

TEST_CASE("tensor: splits over four ranks, and refused shapes") {
  const LinearSplitRecord c = column_split(course_x(), course_w(), kCourseDim, 4);
  for (const auto& rank : c.ranks) CHECK(rank.result == std::vector<float>{6, 14, 27, 24});
  const LinearSplitRecord r = row_split(course_x(), course_w(), kCourseDim, 4);
  for (const auto& rank : r.ranks) CHECK(rank.result == std::vector<float>{6, 14, 27, 24});
  CHECK_THROWS(column_split(course_x(), course_w(), kCourseDim, 3));
}

TEST_CASE("tensor: Korthikanti et al.'s activation bytes, exact") {
  // s = 512, b = 1, h = 1024, a = 16, t = 2: s b h = 524,288 and 5 a s / h = 40.
  LayerShape s{.batch = 1, .seq = 512, .hidden = 1024, .heads = 16, .ranks = 2};
  CHECK(korthikanti_bytes(s, Parallelism::None).total() == 524288ll * (34 + 40));
  CHECK(korthikanti_bytes(s, Parallelism::Tensor).total() == 524288ll * (10 + 12 + 20));
  CHECK(korthikanti_bytes(s, Parallelism::TensorSequence).total() == 524288ll * (17 + 20));
  // GPT-3 175B's shape (a = 96, s = 2048, h = 12288), b = 1, t = 8: 5 a s / (h t) = 10.
  LayerShape gpt3{.batch = 1, .seq = 2048, .hidden = 12288, .heads = 96, .ranks = 8};
  CHECK(korthikanti_bytes(gpt3, Parallelism::None).total() == 25165824ll * (34 + 80));
  CHECK(korthikanti_bytes(gpt3, Parallelism::Tensor).total() == 578813952ll);          // s b h (10 + 3 + 10)
  CHECK(korthikanti_bytes(gpt3, Parallelism::TensorSequence).total() == 358612992ll);  // s b h (4.25 + 10)
  // t = 1: tensor parallelism changes nothing.
  s.ranks = 1;
  CHECK(korthikanti_bytes(s, Parallelism::Tensor).total() == korthikanti_bytes(s, Parallelism::None).total());
}

TEST_CASE("tensor: the lab layer's activation formula is what its buffers hold") {
  for (bool sp : {false, true})
    for (int t : {1, 2, 3, 6}) {
      const LayerShape s{.batch = 2, .seq = 6, .hidden = 12, .heads = 6, .ranks = t, .sequence_parallel = sp};
      CAPTURE(t);
      CAPTURE(sp);
      const RankBufferCounts c = rank_buffer_counts(s);
      CHECK(4 * c.activation_values + c.activation_mask_bytes == lab_layer_bytes(s).total());
    }
  const LayerShape s{.batch = 1, .seq = 512, .hidden = 1024, .heads = 16, .ranks = 2};
  CHECK(lab_layer_bytes(s).total() == 40894464);  // s b h (18 + 24 + 36)
  LayerShape sp = s;
  sp.sequence_parallel = true;
  CHECK(lab_layer_bytes(sp).total() == 36175872);  // s b h (33 + 36)
}

namespace {

std::vector<TensorError> run_and_compare(const LayerShape& shape, MemoryLedger& ledger) {
  SingleThreadedBlas blas;
  const RankLayer<double> reference = stepped_reference_layer(shape, ledger);
  TensorParallelLayer layer(shape, ledger);
  layer.step();
  return compare_with_reference(layer, reference);
}

}  // namespace

TEST_CASE("tensor: the sharded layer matches the unsharded double layer at awkward sizes") {
  for (bool sp : {false, true})
    for (int t : {1, 2, 3, 6}) {
      // b = 2, s = 6, h = 12, a = 6: head dim 2, three heads per rank at t = 2, one at t = 6.
      const LayerShape shape{.batch = 2, .seq = 6, .hidden = 12, .heads = 6, .ranks = t, .sequence_parallel = sp};
      CAPTURE(t);
      CAPTURE(sp);
      MemoryLedger ledger;
      for (const TensorError& e : run_and_compare(shape, ledger)) {
        CAPTURE(e.name);
        CHECK(e.max_rel_err < 1e-5);
      }
    }
  // A longer sequence and several heads per rank.
  MemoryLedger ledger;
  const LayerShape shape{.batch = 3, .seq = 20, .hidden = 40, .heads = 4, .ranks = 4, .sequence_parallel = true};
  for (const TensorError& e : run_and_compare(shape, ledger)) CHECK(e.max_rel_err < 1e-5);
}

TEST_CASE("tensor: a wrong shard is caught by the comparison") {
  SingleThreadedBlas blas;
  MemoryLedger ledger;
  const LayerShape shape{.batch = 1, .seq = 4, .hidden = 8, .heads = 2, .ranks = 2};
  const RankLayer<double> reference = stepped_reference_layer(shape, ledger);
  TensorParallelLayer layer(shape, ledger);
  const_cast<RankLayer<float>&>(layer.rank(1)).parameter(Parameter::W2)[3] += 0.5f;
  layer.step();
  double worst = 0;
  for (const TensorError& e : compare_with_reference(layer, reference)) worst = std::max(worst, e.max_rel_err);
  CHECK(worst > 1e-2);
}

namespace {

// L = sum(out * dout): its gradient is what the backward pass computes, with dout the gradient from above.
double loss(RankLayer<double>& layer, const std::vector<double>& dout) {
  layer.step();
  double sum = 0;
  for (std::size_t i = 0; i < dout.size(); ++i) sum += layer.output()[i] * dout[i];
  return sum;
}

}  // namespace

TEST_CASE("tensor: the double layer's gradients match finite differences") {
  SingleThreadedBlas blas;
  MemoryLedger ledger;
  const LayerShape shape{.batch = 2, .seq = 3, .hidden = 4, .heads = 2, .ranks = 1};
  RankLayer<double> layer(shape, 0, ledger, "", nullptr);
  // The gradient from above, as the layer fills it from its global indices.
  std::vector<double> dout(static_cast<std::size_t>(shape.tokens() * shape.hidden));
  for (std::size_t i = 0; i < dout.size(); ++i) dout[i] = site_uniform(Site::OutputGradient, i, 1.0f);
  layer.step();
  struct Grad {
    Parameter which;
    std::vector<double> analytic;
  };
  std::vector<Grad> grads;
  auto copy = [](const double* p, std::size_t n) { return std::vector<double>(p, p + n); };
  grads.push_back({Parameter::Wqkv, copy(layer.grad_wqkv(), layer.parameter(Parameter::Wqkv).size())});
  grads.push_back({Parameter::Wo, copy(layer.grad_wo(), layer.parameter(Parameter::Wo).size())});
  grads.push_back({Parameter::W1, copy(layer.grad_w1(), layer.parameter(Parameter::W1).size())});
  grads.push_back({Parameter::W2, copy(layer.grad_w2(), layer.parameter(Parameter::W2).size())});
  grads.push_back({Parameter::Norms, copy(layer.grad_norms(), layer.parameter(Parameter::Norms).size())});
  const std::vector<double> dx = copy(layer.input_gradient(), dout.size());
  const double eps = 1e-6;
  // The loss's central difference in one value (a weight or an input), the value put back after.
  auto numeric_gradient = [&](double& value) {
    const double keep = value;
    value = keep + eps;
    const double up = loss(layer, dout);
    value = keep - eps;
    const double down = loss(layer, dout);
    value = keep;
    return (up - down) / (2 * eps);
  };
  for (Grad& g : grads) {
    std::span<double> p = layer.parameter(g.which);
    for (std::size_t i = 0; i < p.size(); ++i) {
      CAPTURE(static_cast<int>(g.which));
      CAPTURE(i);
      CHECK(g.analytic[i] == doctest::Approx(numeric_gradient(p[i])).epsilon(1e-6).scale(1.0));
    }
  }
  std::span<double> x = layer.input();
  for (std::size_t i = 0; i < x.size(); ++i)
    CHECK(dx[i] == doctest::Approx(numeric_gradient(x[i])).epsilon(1e-6).scale(1.0));
}

TEST_CASE("tensor: the ledger's activations and the links' bytes equal their formulas") {
  for (bool sp : {false, true}) {
    SingleThreadedBlas blas;
    MemoryLedger ledger;
    const LayerShape shape{.batch = 2, .seq = 8, .hidden = 16, .heads = 4, .ranks = 4, .sequence_parallel = sp};
    CAPTURE(sp);
    TensorParallelLayer layer(shape, ledger);
    for (int r = 0; r < 4; ++r)
      CHECK(ledger.current_bytes("activations rank " + std::to_string(r)) == lab_layer_bytes(shape).total());
    const std::vector<RankStepTimes> times = layer.step();
    const std::int64_t sbh = shape.tokens() * shape.hidden;
    for (const RankStepTimes& rank : times) {
      int activation_sized = 0;
      for (const CollectiveCall& call : rank.calls) {
        CAPTURE(call.site);
        const double factor = call.op == collectives::Op::AllReduce ? 2.0 * 3 / 4 : 3.0 / 4;
        CHECK(double(call.bytes_sent) == factor * double(call.elements) * 4);
        if (call.elements == sbh) ++activation_sized;
      }
      // Without SP: 2 all-reduces forward and 2 backward. With SP: 2 all-gathers and 2 reduce-scatters forward, and
      // backward the same plus 2 all-gathers of the inputs kept split, plus one all-reduce of the norms' 4h gradients.
      CHECK(activation_sized == (sp ? 10 : 4));
      CHECK(rank.calls.size() == std::size_t(sp ? 11 : 4));
    }
  }
}
