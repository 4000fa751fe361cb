// The ddp devices (kernels/ddp/ddp_devices.h): the CPU's facts, its training is the rank-thread trainer's (the same
// weights), and its notes follow whether a core was set aside; the CUDA device's facts that need no GPU.
#include <doctest/doctest.h>

#include <string>

#include "kernels/ddp/ddp_devices.h"
#include "kernels/ddp/trainer.h"

using namespace dlsys;
using namespace dlsys::ddp;

TEST_CASE("ddp device: the CPU's facts") {
  const std::unique_ptr<DdpDevice> cpu = make_ddp_device(BackendKind::Cpu);
  CHECK(std::string(cpu->timer()) == "steady_clock");
  CHECK_FALSE(cpu->on_gpu());
  CHECK(cpu->emulated(1));
  CHECK(cpu->emulated(4));
  TrainResult result;
  result.communication_core_set_aside = true;
  CHECK(cpu->communication_core_set_aside(result) == std::optional<bool>(true));
  const TrainConfig config;
  const std::vector<std::string> with_core = cpu->notes(config, result, "");
  REQUIRE(with_core.size() == 2);
  CHECK(with_core[0].rfind("ranks as threads on this CPU", 0) == 0);
  CHECK(with_core[1].rfind("no core to spare", 0) == 0);
  result.communication_core_set_aside = false;
  CHECK(cpu->communication_core_set_aside(result) == std::optional<bool>(false));
  CHECK(cpu->notes(config, result, "").size() == 1);
}

TEST_CASE("ddp device: the CPU trains as the rank-thread trainer does, placing nothing") {
  TrainConfig c;
  c.shape = {3, 16};
  c.ranks = 2;
  c.global_batch = 8;
  c.steps = 2;
  c.bucket_elements = 256;
  const training::DataSet data = training::make_data_set(c.shape, c.global_batch * c.steps, 5);
  MemoryLedger ledger;
  std::string placement = "untouched";
  const TrainResult by_device = make_ddp_device(BackendKind::Cpu)->train(c, data, ledger, &placement);
  CHECK(by_device.weights == train(c, data, ledger).weights);
  CHECK(placement == "untouched");
}

TEST_CASE("ddp device: the CUDA device's facts") {
  const std::unique_ptr<DdpDevice> gpu = make_ddp_device(BackendKind::Cuda);
  CHECK(std::string(gpu->timer()) == "cuda_event");
  CHECK(gpu->on_gpu());
  CHECK_FALSE(gpu->communication_core_set_aside(TrainResult{}).has_value());
}
