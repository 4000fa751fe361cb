// ZeRO's closed forms against the course's and the paper's numbers, and the sharded training against them: each
// rank's ledger equals the formula to the byte at every stage, the links count the ring's elements, and every stage
// ends with stage 0's weights bit for bit.
#include <doctest/doctest.h>

#include <cstring>

#include "engine/params.h"
#include "kernels/collectives/communicator.h"
#include "kernels/tensor/tp_layer.h"
#include "kernels/zero/sharded_training.h"
#include "kernels/zero/zero_memory.h"
#include "lessons/registry.h"
#include "lessons/zero/zero_calculator.h"
#include "lessons/zero/zero_steps.h"

using namespace dlsys;
using namespace dlsys::zero;

TEST_CASE("zero: 16 bytes a parameter, the course's 7B -> 112 GB and GPT-3's 700 GB of fp32 weights vs 2.8 TB") {
  CHECK(kWeightBytes + kGradientBytes + kOptimizerBytes == 16);
  CHECK(model_state_bytes(0, 7e9, 1).total() == 112e9);
  CHECK(model_state_bytes(0, 7e9, 64).total() == 112e9);  // DDP: N changes nothing
  CHECK(175e9 * 4 == 700e9);
  CHECK(model_state_bytes(0, 175e9, 1).total() == 2.8e12);
}

TEST_CASE("zero: the paper's figure 1, Psi = 7.5B, N = 64: 120, 31.4, 16.6, 1.9 GB, exactly") {
  CHECK(model_state_bytes(0, 7.5e9, 64).total() == 120e9);
  CHECK(model_state_bytes(1, 7.5e9, 64).total() == 31.40625e9);
  CHECK(model_state_bytes(2, 7.5e9, 64).total() == 16.640625e9);
  CHECK(model_state_bytes(3, 7.5e9, 64).total() == 1.875e9);
  // By kind at stage 2: 2 Psi of weights whole, gradients and optimizer split.
  const ModelStateBytes s2 = model_state_bytes(2, 7.5e9, 64);
  CHECK(s2.weights == 15e9);
  CHECK(s2.gradients == 2 * 7.5e9 / 64);
  CHECK(s2.optimizer == 12 * 7.5e9 / 64);
}

TEST_CASE("zero: exact factors vs the lecture's 4x, 8x, Nx (errata E15) and communication 2, 2, 2, 3 Psi") {
  CHECK(reduction_factor(1, 8) == doctest::Approx(16.0 / 5.5));
  CHECK(reduction_factor(2, 8) == doctest::Approx(16.0 / 3.75));
  CHECK(reduction_factor(1, 64) == doctest::Approx(3.82).epsilon(0.002));
  CHECK(reduction_factor(2, 64) == doctest::Approx(7.21).epsilon(0.002));
  CHECK(reduction_factor(3, 64) == doctest::Approx(64));
  CHECK(reduction_limit(1, 64) == 4);
  CHECK(reduction_limit(2, 64) == 8);
  CHECK(reduction_factor(1, 1e9) == doctest::Approx(4).epsilon(1e-6));
  CHECK(comm_elements_per_step(0, 100) == 200);
  CHECK(comm_elements_per_step(1, 100) == 200);
  CHECK(comm_elements_per_step(2, 100) == 200);
  CHECK(comm_elements_per_step(3, 100) == 300);
  CHECK(ring_comm_elements_per_step(3, 100, 4) == 225);
}

TEST_CASE("zero: exact bytes for the lab's stack equal the double formulas") {
  for (int stage = 0; stage <= 3; ++stage)
    for (int n : {1, 2, 4, 8}) {
      const std::int64_t psi = 8 * 2 * 64 * 64;
      CHECK(double(exact_model_state_bytes(stage, psi, n).total()) == model_state_bytes(stage, double(psi), n).total());
    }
}

TEST_CASE("zero: the calculator's smallest N and stage") {
  zero_lesson::CalculatorInput in;
  in.parameters = 175e9;
  in.gpu_bytes = 80e9;
  CHECK(zero_lesson::min_ranks_to_fit(in, 3) == 35);  // 2.8 TB / 80 GB
  CHECK(zero_lesson::min_ranks_to_fit(in, 2) == 0);   // 350 GB of 16-bit weights stay whole
  CHECK(zero_lesson::min_stage_to_fit(in, 64) == 3);
  CHECK(zero_lesson::min_stage_to_fit(in, 8) == -1);
  in.parameters = 7.5e9;
  CHECK(zero_lesson::min_stage_to_fit(in, 64) == 1);  // 31.4 GB
  CHECK(zero_lesson::min_ranks_to_fit(in, 1) == 2);   // 30 + 90/N <= 80
  CHECK(zero_lesson::min_ranks_to_fit(in, 0) == 0);   // 120 GB at any N
  // Activations: s b h (34 + 5 a s / h) a layer, or with checkpointing 2 s b h a layer plus one full layer.
  in.shape_known = true;
  in.layers = 32;
  in.hidden = 4096;
  in.heads = 32;
  in.seq = 4096;
  in.micro_batch = 1;
  const double sbh = 4096.0 * 4096;
  CHECK(zero_lesson::activation_bytes(in) == 32 * sbh * (34 + 5 * 32 * 4096 / 4096.0));
  in.checkpointing = true;
  CHECK(zero_lesson::activation_bytes(in) == 32 * 2 * sbh + sbh * (34 + 5 * 32));
}

namespace {

ZeroConfig small_config(int stage, int ranks) {
  ZeroConfig c;
  c.shape = {.layers = 3, .width = 32};
  c.ranks = ranks;
  c.stage = stage;
  c.rows_per_rank = 3;
  c.steps = 3;
  return c;
}

}  // namespace

TEST_CASE("zero: each rank's ledger holds exactly the formula's model states, at every stage") {
  const tensor::SingleThreadedBlas blas;
  for (int ranks : {1, 2, 4})
    for (int stage = 0; stage <= 3; ++stage) {
      CAPTURE(ranks);
      CAPTURE(stage);
      const ZeroConfig c = small_config(stage, ranks);
      const ZeroTraining t = train_sharded(c);
      const std::int64_t psi = training::parameter_count(c.shape);
      const ExactModelStateBytes formula = exact_model_state_bytes(stage, psi, ranks);
      REQUIRE(t.peaks.size() == std::size_t(ranks));
      for (const RankPeakBytes& p : t.peaks) {
        CHECK(p.weights == formula.weights);
        CHECK(p.gradients == formula.gradients);
        CHECK(p.optimizer == formula.optimizer);
        CHECK(p.model_states == formula.total());
      }
      // Stage 3 gathers one layer at a time into "comm": one layer's fp32 values at the peak.
      if (stage == 3) CHECK(t.peaks[0].comm == 4 * training::parameters_per_layer(c.shape));
    }
}

TEST_CASE("zero: the links count the ring's elements, 2 (N-1)/N Psi or 3 (N-1)/N Psi per rank per step") {
  const tensor::SingleThreadedBlas blas;
  for (int stage = 0; stage <= 3; ++stage) {
    const ZeroConfig c = small_config(stage, 4);
    const ZeroTraining t = train_sharded(c);
    const std::int64_t psi = training::parameter_count(c.shape);
    const std::int64_t elements = (stage == 3 ? 3 : 2) * psi / 4 * 3;
    for (std::int64_t bytes : t.comm_bytes_last_step) CHECK(bytes == 4 * elements);
    CHECK(t.collectives.size() == std::size_t((stage == 0 ? 1 : stage == 3 ? 3 : 2) * c.shape.layers));
  }
}

TEST_CASE("zero: every stage's final weights equal stage 0's bit for bit, bf16 and fp16, and training moves them") {
  const tensor::SingleThreadedBlas blas;
  for (precision::Format dtype : {precision::Format::Bf16, precision::Format::Fp16})
    for (int ranks : {2, 4}) {
      ZeroConfig c0 = small_config(0, ranks);
      c0.dtype = dtype;
      const ZeroTraining base = train_sharded(c0);
      CHECK(base.losses.back() < base.losses.front());
      const std::vector<float> initial = training::initial_weights(c0.shape, c0.seed);
      CHECK(std::memcmp(initial.data(), base.master_weights.data(), initial.size() * 4) != 0);
      for (int stage = 1; stage <= 3; ++stage) {
        ZeroConfig c = c0;
        c.stage = stage;
        const ZeroTraining t = train_sharded(c);
        CAPTURE(stage);
        REQUIRE(t.master_weights.size() == base.master_weights.size());
        CHECK(std::memcmp(t.master_weights.data(), base.master_weights.data(), base.master_weights.size() * 4) == 0);
        CHECK(t.losses == base.losses);
      }
    }
}

TEST_CASE("zero: uneven shards and stages outside 0-3 are refused") {
  CHECK_FALSE(shards_evenly({.layers = 2, .width = 10}, 3));  // 200 weights a layer
  CHECK(shards_evenly({.layers = 2, .width = 10}, 8));
  CHECK_THROWS(train_sharded(small_config(4, 2)));
  ZeroConfig c = small_config(1, 3);
  c.shape.width = 10;
  CHECK_THROWS(train_sharded(c));
}

TEST_CASE("zero: the steps carry the chosen mode and stage, so a view reads neither by its key") {
  const Lesson& lesson = find_lesson("zero");
  for (const char* mode : {"run", "theory"}) {
    CAPTURE(mode);
    const auto params = ParamValues::parse(lesson.params(), {std::string("mode=") + mode, "stage=2"});
    const auto steps = std::dynamic_pointer_cast<const zero_lesson::ZeroSteps>(lesson.step_data(params));
    REQUIRE(steps != nullptr);
    CHECK((steps->mode == zero_lesson::Mode::Theory) == (std::string(mode) == "theory"));
    CHECK(steps->theory.stage == 2);
  }
}
