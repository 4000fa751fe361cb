// The ZeRO devices the ZeRO lesson's run is written against (kernels/zero/zero_devices.h): the CPU device trains as
// train_sharded does and names no placement, and each device's facts and notes replace the run's tests of the backend.
// No timings are asserted.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "kernels/tensor/tp_layer.h"
#include "kernels/zero/zero_devices.h"
#include "kernels/zero/zero_memory.h"

using namespace dlsys;
using namespace dlsys::zero;

TEST_CASE("zero: the CPU device trains every rank thread as train_sharded does, its ledgers on the formula") {
  const tensor::SingleThreadedBlas blas(2);
  ZeroConfig config;
  config.shape = {.layers = 2, .width = 16};
  config.ranks = 2;
  config.stage = 2;
  config.rows_per_rank = 2;
  config.steps = 2;
  const RanksTrained trained = CpuZero().train(config);
  CHECK(trained.placement.empty());
  const ZeroTraining& t = trained.training;
  REQUIRE(t.peaks.size() == 2);
  const std::int64_t psi = training::parameter_count(config.shape);
  for (const RankPeakBytes& r : t.peaks) CHECK(r.model_states == exact_model_state_bytes(2, psi, 2).total());
  const std::vector<float> direct = train_sharded(config).master_weights;
  REQUIRE(t.master_weights.size() == direct.size());
  CHECK(std::memcmp(t.master_weights.data(), direct.data(), direct.size() * sizeof(float)) == 0);
}

TEST_CASE("zero: each device's facts, and the notes it gives a run") {
  CHECK(std::string(CpuZero::kTimer) == "steady_clock");
  CHECK(std::string(CudaZero::kTimer) == "cuda_event");
  CHECK_FALSE(CpuZero::kOnGpu);
  CHECK(CudaZero::kOnGpu);
  CHECK(CpuZero::ranks_emulated(1));  // threads of one CPU, however many

  const int hardware = describe_cpu().threads;
  CHECK(CpuZero::notes(1, "").size() == 1);
  const std::vector<std::string> crowded = CpuZero::notes(hardware + 1, "");
  REQUIRE(crowded.size() == 2);
  CHECK(crowded[1].find(fmt::format("{} ranks time-share {} hardware threads", hardware + 1, hardware)) == 0);

  const std::vector<std::string> gpu = CudaZero::notes(4, "4 streams on GPU 0");
  REQUIRE(gpu.size() == 3);
  CHECK(gpu[0] == "ranks on the GPU: 4 streams on GPU 0");
  CHECK(gpu[2].find("max_rel_err_gpu_vs_cpu_stage0") != std::string::npos);
}
