// The tensor-parallel layer on the GPU: outputs and every gradient against the unsharded double layer for t = 1, 2, 4
// with and without sequence parallelism at awkward sizes, the bytes the GPU ring copies against the closed forms, the
// activations held in device memory against the lab's formula, and the lesson run end to end on --backend cuda.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/ledger.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/tensor/tensor_cuda.h"
#include "kernels/tensor/tp_layer.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;
using namespace dlsys::tensor;

namespace {

struct GpuCheck {
  std::vector<TensorError> errors;
  std::vector<RankStepTimes> times;
  std::int64_t activation_bytes = 0;
  bool ranks_equal_activations = true;
  GpuPlacement placement;
};

GpuCheck run_on_gpu(const LayerShape& shape) {
  SingleThreadedBlas blas;
  MemoryLedger ledger;
  const RankLayer<double> reference = stepped_reference_layer(shape, ledger);
  const std::unique_ptr<cuda::GpuTensorLayer> layer_on_gpus = cuda::make_gpu_tensor_layer(shape);
  cuda::GpuTensorLayer& layer = *layer_on_gpus;
  GpuCheck out;
  out.placement = layer.placement();
  layer.step();  // twice: the second step must start from the same inputs and give the same results
  out.times = layer.step();
  out.activation_bytes = layer.activation_bytes(0);
  for (int r = 1; r < shape.ranks; ++r)
    out.ranks_equal_activations &= layer.activation_bytes(r) == out.activation_bytes;
  const std::vector<cuda::HostRankCopy> copies = layer.results();
  std::vector<RankResults> views;
  for (const cuda::HostRankCopy& c : copies)
    views.push_back({c.rank, c.output.data(), c.input_gradient.data(), c.grad_wqkv.data(), c.grad_wo.data(),
                     c.grad_w1.data(), c.grad_w2.data(), c.grad_norms.data()});
  out.errors = compare_with_reference(shape, views, reference);
  return out;
}

}  // namespace

TEST_CASE("GPU tensor layer: outputs and gradients match the unsharded double layer, t = 1, 2, 4, SP off and on") {
  for (bool sp : {false, true})
    for (int t : {1, 2, 4}) {
      // b = 3, s = 12, h = 36, a = 4: head dim 9, a block of 32 threads never covers a row exactly.
      const LayerShape shape{.batch = 3, .seq = 12, .hidden = 36, .heads = 4, .ranks = t, .sequence_parallel = sp};
      CAPTURE(t);
      CAPTURE(sp);
      const GpuCheck c = run_on_gpu(shape);
      REQUIRE(c.errors.size() == 7);
      for (const TensorError& e : c.errors) {
        CAPTURE(e.name);
        CHECK(e.max_rel_err <= 1e-4);  // NaN fails this too
      }
      CHECK(c.activation_bytes == lab_layer_bytes(shape).total());
      CHECK(c.ranks_equal_activations);
      CHECK(c.placement.emulated == (t > 1 && t > c.placement.devices));
      REQUIRE(c.times.size() == std::size_t(t));
      for (const RankStepTimes& r : c.times) {
        CHECK(r.step_us > 0);
        CHECK(r.compute_us > 0);
        CHECK(r.comm_us >= 0);
      }
    }
}

TEST_CASE("GPU tensor layer: a longer sequence, several heads per rank, rows wider than a block") {
  const LayerShape shape{.batch = 2, .seq = 300, .hidden = 320, .heads = 8, .ranks = 4, .sequence_parallel = true};
  const GpuCheck c = run_on_gpu(shape);
  for (const TensorError& e : c.errors) {
    CAPTURE(e.name);
    CHECK(e.max_rel_err <= 1e-4);
  }
}

TEST_CASE("GPU tensor layer: two tokens per rank, where the norms' all-reduce has the ring's largest chunk") {
  const LayerShape shape{.batch = 1, .seq = 2, .hidden = 8, .heads = 2, .ranks = 2, .sequence_parallel = true};
  const GpuCheck c = run_on_gpu(shape);
  for (const TensorError& e : c.errors) {
    CAPTURE(e.name);
    CHECK(e.max_rel_err <= 1e-4);
  }
}

TEST_CASE("GPU tensor layer: bytes per collective are the ring's 2(t-1)/t or (t-1)/t of the buffer, x 4 B") {
  for (bool sp : {false, true})
    for (int t : {2, 4}) {
      const LayerShape shape{.batch = 2, .seq = 8, .hidden = 32, .heads = 4, .ranks = t, .sequence_parallel = sp};
      CAPTURE(t);
      CAPTURE(sp);
      const GpuCheck c = run_on_gpu(shape);
      const std::int64_t sbh = shape.tokens() * shape.hidden;
      for (const RankStepTimes& r : c.times) {
        REQUIRE(r.calls.size() == (sp ? 11u : 4u));
        std::int64_t total = 0;
        for (const CollectiveCall& call : r.calls) {
          const std::int64_t share = (t - 1) * call.elements / t * 4;
          CHECK(call.bytes_sent == (call.op == collectives::Op::AllReduce ? 2 * share : share));
          total += call.bytes_sent;
        }
        // Without SP four all-reduces of s b h; with SP ten halves of s b h and the norms' 4h all-reduce.
        CHECK(total == (sp ? 10 * (t - 1) * sbh / t * 4 + 2 * (t - 1) * 4 * shape.hidden / t * 4
                           : 4 * 2 * (t - 1) * sbh / t * 4));
      }
    }
}

TEST_CASE("tensor on --backend cuda --quick: runs, says where the ranks ran, error within 1e-4") {
  std::vector<std::string> args{"run", "tensor", "--backend", "cuda", "--quick", "--json", "-"};
  const auto r = testing::run_cli_captured(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["backend"]["kind"] == "cuda");
  CHECK(j["backend"]["timer"] == "cuda_event");
  const auto& m = j["measured"];
  CHECK(m["on_gpu"] == true);
  CHECK_FALSE(m["placement"].get<std::string>().empty());
  REQUIRE(m["max_rel_err"].is_number());
  CHECK(m["max_rel_err"].get<double>() <= 1e-4);
  CHECK(m["comm_bytes_match_formula"] == true);
  CHECK(m["activation_bytes_match_formula"] == true);
  CHECK(m["compute_us"].get<double>() > 0);
  for (const char* sp : {"sp=on", "sp=off"}) {
    const auto again = testing::run_cli_captured(
        {"run", "tensor", "--backend", "cuda", "--quick", "--set", sp, "--set", "t=4", "--json", "-"});
    INFO(again.err);
    REQUIRE(again.code == 0);
    const auto k = nlohmann::json::parse(again.out);
    CHECK(k["measured"]["max_rel_err"].get<double>() <= 1e-4);
    CHECK(k["measured"]["comm_bytes_match_formula"] == true);
  }
}

TEST_CASE("tensor on --backend cuda: what cannot fit in GPU memory is refused before anything is allocated") {
  const auto r = testing::run_cli_captured({"run", "tensor", "--backend", "cuda", "--set", "hidden=131072", "--set",
                                            "heads=16", "--set", "seq=65536", "--set", "t=4"});
  CHECK(r.code == 2);
  CHECK(r.err.find("free; lower hidden, seq, batch or heads") != std::string::npos);
}
