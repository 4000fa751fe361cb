// LoRA's inference on the GPU: the adapter path and the merged weight on cuBLAS, both outputs within fp32's rounding
// bound of the CPU's adapter path at awkward sizes and at the lesson's; and the lesson run whole on --backend cuda.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "kernels/lora/lora.h"
#include "kernels/lora/lora_cuda.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;
using namespace dlsys::lora;

TEST_CASE("lora on the GPU: the adapter path and the merged weight agree with the CPU within fp32 rounding") {
  struct Size {
    std::int64_t d, k, n;
    int r;
  };
  for (const Size& s : {Size{37, 53, 19, 3}, Size{64, 64, 32, 16}, Size{1024, 1024, 256, 1}}) {
    INFO("d = ", s.d, ", k = ", s.k, ", n = ", s.n, ", r = ", s.r);
    const InferenceLayer layer = make_inference_layer(s.d, s.k, s.n, s.r, 8.0f / float(s.r));
    const lora::cuda::GpuForwardTiming gpu = lora::cuda::time_forward_gpu(layer, {.warmup = 1, .repeats = 2}, {});
    REQUIRE(gpu.adapter_output.size() == std::size_t(s.d * s.n));
    CHECK(check_outputs(layer, {gpu.adapter_output.data()}).agrees());
    CHECK(check_outputs(layer, {gpu.merged_output.data()}).agrees());
    CHECK(gpu.adapter.median_us > 0);
    CHECK(gpu.merged.median_us > 0);
  }
}

TEST_CASE("lora runs on --backend cuda: the inference on the GPU within fp32 rounding, the trainings on the CPU") {
  const auto j = testing::run_quick_on_cuda("lora");
  const auto& m = j["measured"];
  CHECK(m["forward_on_gpu"] == true);
  CHECK(m["forward_wrong"] == false);
  CHECK(m["forward_worst_share_of_bound"].get<double>() <= 1);
  CHECK(m["all_merges_agree"] == true);
  CHECK(m["knee_at_true_rank"] == true);
  CHECK(m["forward"].size() == 5);
}
