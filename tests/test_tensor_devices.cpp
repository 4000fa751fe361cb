// The tensor devices the tensor lesson's run is written against (kernels/tensor/tensor_devices.h): the CPU device's
// layer on rank threads (where it ran, the ledger's activation bytes, a step of every rank, the check against the
// double reference), and the facts each device gives the run instead of the run testing the backend. No timings are
// asserted.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/ledger.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/tensor/tensor_devices.h"

using namespace dlsys;
using namespace dlsys::tensor;

TEST_CASE("tensor: the CPU device's layer runs on rank threads, counts activations in the ledger, checks its results") {
  SingleThreadedBlas blas(CpuTensor::blas_rank_threads(2));
  MemoryLedger ledger;
  const LayerShape shape{.batch = 2, .seq = 6, .hidden = 12, .heads = 6, .ranks = 2};
  const CpuTensor device(ledger);
  const std::unique_ptr<CpuRankLayers> layer = device.make_layer(shape);
  const RankPlacement where = layer->placement();
  CHECK(where.ranks == 2);
  CHECK(where.description == "2 ranks as CPU threads in one process, the lab's ring through shared memory");
  CHECK(where.emulated);
  CHECK_FALSE(where.nccl);
  for (int r = 0; r < 2; ++r) CHECK(layer->activation_bytes(r) == lab_layer_bytes(shape).total());
  const std::vector<RankStepTimes> ranks = layer->step();
  REQUIRE(ranks.size() == 2);
  CHECK(ranks.front().calls.size() == 4);  // two all-reduces forward, two backward
  const RankLayer<double> reference = stepped_reference_layer(shape, ledger);
  const std::vector<TensorError> errors = layer->errors_against(reference);
  CHECK_FALSE(errors.empty());
  for (const TensorError& e : errors) {
    CAPTURE(e.key);
    CHECK(e.max_rel_err < 1e-4);
  }
}

TEST_CASE("tensor: each device's facts, and the notes it gives a run") {
  CHECK(std::string(CpuTensor::kTimer) == "steady_clock");
  CHECK(std::string(CudaTensor::kTimer) == "cuda_event");
  CHECK_FALSE(CpuTensor::kOnGpu);
  CHECK(CudaTensor::kOnGpu);
  CHECK(CpuTensor::kRanksHaveThreadCpuTime);
  CHECK_FALSE(CudaTensor::kRanksHaveThreadCpuTime);
  CHECK(CpuTensor::kCourseExampleNote.empty());
  CHECK_FALSE(CudaTensor::kCourseExampleNote.empty());
  CHECK(CpuTensor::blas_rank_threads(4) == 4);   // one OpenBLAS caller per rank thread
  CHECK(CudaTensor::blas_rank_threads(4) == 0);  // the calling thread only
  CHECK_FALSE(CpuTensor::compute_scaling_caveat(1.5, 64));
  CHECK_FALSE(CudaTensor::compute_scaling_caveat(0.6, 64));
  CHECK_FALSE(CudaTensor::compute_scaling_caveat(std::nan(""), 64));
  const std::optional<std::string> caveat = CudaTensor::compute_scaling_caveat(1.5, 64);
  REQUIRE(caveat);
  CHECK(caveat->find("t = 2 took 1.50x the time of t = 1") != std::string::npos);
  CHECK(caveat->find("at h = 64") != std::string::npos);

  const int hardware = describe_cpu().threads;
  const std::vector<std::string> few = CpuTensor::notes({{.ranks = 1}, {.ranks = 1}});
  CHECK(few.size() == 2);
  const std::vector<std::string> many = CpuTensor::notes({{.ranks = 1}, {.ranks = hardware + 1}});
  REQUIRE(many.size() == 3);
  CHECK(many[1].find(fmt::format("t = {} ranks time-share {} hardware threads", hardware + 1, hardware)) == 0);

  // One note per placement of more than one rank as it changes, and the byte count NCCL's use changes.
  const std::vector<std::string> gpu = CudaTensor::notes({{.ranks = 1, .description = "one"},
                                                          {.ranks = 2, .description = "two streams"},
                                                          {.ranks = 4, .description = "two streams"}});
  REQUIRE(gpu.size() == 4);
  CHECK(gpu[1] == "t = 2: two streams");
  CHECK(gpu[2].find("the lab's ring on the GPU") != std::string::npos);
  const std::vector<std::string> nccl = CudaTensor::notes({{.ranks = 2, .description = "two GPUs", .nccl = true}});
  REQUIRE(nccl.size() == 4);
  CHECK(nccl[2].find("NCCL's own traffic") == 0);
}
