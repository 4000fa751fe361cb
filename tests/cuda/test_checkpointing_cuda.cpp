// The checkpointed step on the GPU: at every k the ledger's activation peak is the closed form to the byte, the loss
// and gradients equal the GPU's plain step bit for bit, the plain step is close to the CPU's, at expansions 1, 2 and 4
// and widths no GEMM tile divides; and the lesson run whole on --backend cuda.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "kernels/ddp/trainer.h"
#include "kernels/training/checkpointed_step.h"
#include "kernels/training/checkpointed_step_cuda.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;
using namespace dlsys::training;

namespace {

// cuBLAS against OpenBLAS on a six-layer stack: each gradient a few fp32 products from the loss, each product's
// rounding a few 2^-24 of its terms; 1e-4 of the largest gradient is far above that and far below a wrong layout.
constexpr double kCpuTolerance = 1e-4;

}  // namespace

TEST_CASE("checkpointing on the GPU: ledger peaks equal the formula, gradients equal the plain step's, close to CPU") {
  for (int expansion : {1, 2, 4})
    for (int width : {20, 36}) {  // 4 r w a multiple of 16 bytes, as checkpointed_step_cuda.h asks
      const StackShape shape{.layers = 6, .width = width, .expansion = expansion};
      const int rows = 5;
      INFO("e = ", expansion, ", w = ", width);
      const std::vector<float> weights = initial_weights(shape, 3);
      const DataSet data = make_data_set(shape, rows, 3);
      MemoryLedger ledger;
      const auto gpu =
          training::cuda::make_gpu_stack(shape, weights.data(), data.inputs.data(), data.targets.data(), rows, ledger);
      const std::size_t parameters = std::size_t(parameter_count(shape));
      std::vector<float> plain(parameters), gradients(parameters), cpu(parameters);
      ledger.reset_peaks();
      gpu->step(kKeepEverything);
      const double plain_loss = gpu->loss();
      gpu->gradients(plain.data());
      CHECK(ledger.peak_bytes(kActivationTag) == step_activation_peak_bytes(shape, rows, kKeepEverything));
      CHECK(ledger.current_bytes(kActivationTag) == 0);
      MemoryLedger cpu_ledger;
      const double cpu_loss = train_step(shape, weights.data(), data.inputs.data(), data.targets.data(), rows,
                                         kKeepEverything, cpu_ledger, cpu.data());
      CHECK(ddp::max_rel_err(plain, cpu) <= kCpuTolerance);
      CHECK(std::abs(plain_loss - cpu_loss) <= kCpuTolerance * cpu_loss);
      for (int k : {1, 2, 3, 6}) {
        INFO("k = ", k);
        ledger.reset_peaks();
        gpu->step(k);
        CHECK(gpu->loss() == plain_loss);
        gpu->gradients(gradients.data());
        CHECK(gradients == plain);
        CHECK(ledger.peak_bytes(kActivationTag) == step_activation_peak_bytes(shape, rows, k));
        CHECK(ledger.current_bytes(kActivationTag) == 0);
        CHECK(ledger.current_bytes(kWorkspaceTag) == 0);
      }
      // The forward pass alone writes the same loss, outside the ledger.
      ledger.reset_peaks();
      gpu->forward();
      CHECK(gpu->loss() == plain_loss);
      CHECK(ledger.peak_bytes(kActivationTag) == 0);
      // Repeated steps give the same bits (the pool's blocks may move; the sums do not).
      gpu->step(2);
      gpu->gradients(gradients.data());
      CHECK(gradients == plain);
    }
}

TEST_CASE(
    "checkpointing runs whole on --backend cuda: ledger = formula at every k, gradients identical, close to CPU") {
  const auto j = testing::run_quick_on_cuda("checkpointing");
  CHECK(j["backend"]["timer"] == "cuda_event");
  const auto& m = j["measured"];
  CHECK(m["on_gpu"] == true);
  CHECK(m["peaks_match_formula"] == true);
  CHECK(m["all_gradients_identical"] == true);
  CHECK(m["checks_wrong"] == false);
  CHECK(m["max_rel_err_gpu_vs_cpu"].get<double>() <= m["gpu_vs_cpu_tolerance"].get<double>());
  CHECK(m["time_ratio"].get<double>() > 0);
}
