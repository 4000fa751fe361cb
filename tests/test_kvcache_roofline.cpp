// Prefill and a decode step against a GPU's ridge point: FLOPs and bytes worked out by hand from Llama-3-8B's and
// Mixtral's published configs, the datasheet ridge points, and which side of the ridge each case falls on.
#include <doctest/doctest.h>

#include "engine/errors.h"
#include "lessons/kvcache/decode_roofline.h"
#include "lessons/kvcache/gpu_specs.h"
#include "lessons/kvcache/kv_theory.h"
#include "lessons/kvcache/model_config.h"

using namespace dlsys;
using namespace dlsys::kvcache;

namespace {

DecodeRoofline roofline(const std::string& model, std::int64_t batch, std::int64_t seq,
                        const std::string& gpu = "h100-sxm") {
  SizingQuery q;
  q.model = load_preset(model);
  q.kv_type = find_element_type("fp16", "dtype");
  q.weights_type = find_element_type("fp16", "weights_dtype");
  q.batch = batch;
  q.seq = seq;
  q.gpu_bytes = 80'000'000'000;
  return decode_roofline(q, size_inference(q), find_gpu_spec(gpu));
}

}  // namespace

TEST_CASE("ridge points: peak FLOP/s over bandwidth, from the datasheets") {
  CHECK(find_gpu_spec("h100-sxm")->ridge_flop_per_byte() == doctest::Approx(989.5 / 3.35));  // about 295
  CHECK(find_gpu_spec("h200")->ridge_flop_per_byte() == doctest::Approx(989.5 / 4.8));
  CHECK(find_gpu_spec("a100-80gb")->ridge_flop_per_byte() == doctest::Approx(312 / 2.039));
  CHECK(find_gpu_spec("a100-40gb")->ridge_flop_per_byte() == doctest::Approx(312 / 1.555));
  CHECK(find_gpu_spec("rtx-4090")->ridge_flop_per_byte() == doctest::Approx(165.2 / 1.008));
  CHECK(find_gpu_spec(kThisMachine) == nullptr);
  CHECK_THROWS_WITH_AS(find_gpu_spec("v100"), doctest::Contains("h100-sxm"), BadInput);
}

TEST_CASE("Llama-3-8B, batch 1 at 1,000 tokens: FLOPs and bytes by hand, about 1 FLOP per byte, memory-bound") {
  const DecodeRoofline r = roofline("llama-3-8b", 1, 1000);
  REQUIRE(r.known);
  // Active parameters: 8,030,261,248 less the 128,256 x 4,096 input embedding, which a token only looks up.
  const double active = 8'030'261'248.0 - 128'256.0 * 4096;
  const double attention = 4.0 * 32 * 128 * 32 * 1000;  // 4 x heads x head_dim, 32 layers, 1,000 cached tokens
  CHECK(r.decode.flops == 2 * active + attention);
  CHECK(r.decode.flops == 15'534'137'344.0);
  CHECK(r.decode.bytes == 2 * active + 131'072.0 * 1000);  // 16-bit weights, then the cache
  CHECK(r.decode.intensity == doctest::Approx(15'534'137'344.0 / 15'140'921'344.0));
  CHECK(r.decode.bound == "memory-bound");
  CHECK(r.decode.attainable_tflops == doctest::Approx(3.35 * r.decode.intensity));  // on the bandwidth slope
  CHECK(r.prefill.attainable_tflops == 989.5);                                      // on the flat roof
  CHECK(r.decode.roofline_seconds == doctest::Approx(15'140'921'344.0 / 3.35e12));  // bandwidth-limited
  CHECK(r.weights_only_intensity == doctest::Approx(1.0));  // the course's "AI about B" for 16-bit weights
  CHECK(r.prefill.bound == "compute-bound");
}

TEST_CASE("Llama-3-8B at batch 512: short contexts cross the ridge, 1,000-token ones do not") {
  const DecodeRoofline short_context = roofline("llama-3-8b", 512, 1);
  CHECK(short_context.decode.intensity > short_context.ridge_flop_per_byte);
  CHECK(short_context.decode.bound == "compute-bound");
  // At 1,000 tokens each sequence's cache (131 MB) is read for that sequence alone: even a huge batch stays below
  // (2 x active + attention) / cache per sequence = 118 FLOP/byte.
  CHECK(roofline("llama-3-8b", 512, 1000).decode.bound == "memory-bound");
  const DecodeRoofline huge_batch = roofline("llama-3-8b", 1'000'000, 1000);
  CHECK(huge_batch.decode.intensity < 120);
  CHECK(huge_batch.decode.bound == "memory-bound");
}

TEST_CASE("a mixture of experts reads only the experts its tokens reach, at most") {
  const DecodeRoofline one = roofline("mixtral-8x7b", 1, 1000);
  CHECK(one.decode.experts_reached == 2);
  const double expert = 3.0 * 4096 * 14'336;
  const double read_one = 46'702'792'704.0 - 32'000.0 * 4096 - 32 * 6 * expert;  // the active parameters
  CHECK(one.decode.weight_bytes == 2 * read_one);
  CHECK(roofline("mixtral-8x7b", 3, 1000).decode.experts_reached == 6);
  CHECK(roofline("mixtral-8x7b", 8, 1000).decode.experts_reached == 8);  // all of them
  CHECK(roofline("mixtral-8x7b", 8, 1000).decode.weight_bytes == 2 * (46'702'792'704.0 - 32'000.0 * 4096));
}

TEST_CASE("this machine has no datasheet peak: the intensity is computed, no side of a ridge is named") {
  const DecodeRoofline r = roofline("llama-2-7b", 8, 1000, kThisMachine);
  CHECK(r.known);
  CHECK(!r.has_gpu);
  CHECK(r.decode.bound.empty());
  CHECK(r.roof.empty());
  CHECK(r.decode.intensity > 0);
}
