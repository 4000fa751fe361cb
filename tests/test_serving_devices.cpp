// The serving devices (kernels/serving/serving_devices.h): the CPU's facts, and its model is the CPU model itself
// (the same tokens as the CPU model served directly, caches of its own recorded under "kv"); the CUDA device's facts
// that need no GPU.
#include <doctest/doctest.h>

#include <string>

#include "kernels/serving/cpu_backend.h"
#include "kernels/serving/serving_devices.h"
#include "kernels/serving/speculative.h"

using namespace dlsys;
using namespace dlsys::serving;

TEST_CASE("serving device: the CPU's facts") {
  MemoryLedger ledger;
  const std::unique_ptr<ServingDevice> cpu = make_serving_device(BackendKind::Cpu, ledger);
  CHECK(std::string(cpu->timer()) == "steady_clock");
  CHECK(&cpu->info() == &cpu_with_peaks());
  CHECK(std::string(cpu->roof_label()) == "this machine's roof (sgemm peak, read stream)");
  CHECK_FALSE(cpu->compares_with_cpu_model());
  CHECK(cpu->notes(0.5).empty());
}

TEST_CASE("serving device: the CPU serves the CPU model itself") {
  const ModelShape s{.d_model = 32, .layers = 2, .heads = 4, .mlp_dim = 64, .vocab = 48, .context = 64};
  MemoryLedger ledger;
  const Weights w = make_weights(s, ledger, 7, 1, 0.5f);
  Model model(s, w, s.layers, ledger, 8);
  const std::unique_ptr<ServingDevice> cpu = make_serving_device(BackendKind::Cpu, ledger);
  const std::unique_ptr<ModelBackend> served = cpu->model(model, 3);
  CHECK(std::string(served->device()) == "cpu");
  CHECK(served->slots() == 3);
  CHECK(served->layers() == s.layers);
  CHECK(served->max_rows() == model.max_rows());  // at least the context, as the model keeps it
  CHECK(ledger.current_bytes("kv") > 0);          // its caches, recorded in the device's ledger
  const std::vector<int> prompt{1, 5, 9, 2, 7};
  CpuBackend direct(model, ledger, 1);
  CHECK(greedy_generate(*served, 2, prompt, 10) == greedy_generate(direct, 0, prompt, 10));
}

TEST_CASE("serving device: the CUDA device's facts") {
  MemoryLedger ledger;
  const std::unique_ptr<ServingDevice> gpu = make_serving_device(BackendKind::Cuda, ledger);
  CHECK(std::string(gpu->timer()) == "steady_clock (the host waits for each pass's tokens)");
  CHECK(std::string(gpu->roof_label()) == "GPU 0's roof (datasheet peak and bandwidth)");
  CHECK(gpu->compares_with_cpu_model());
}
