// Every CUDA fusion pass against its double reference, at sizes that miss the 256-thread blocks (one element, a
// prime, one past a block), that leave a tail after the 16-byte loads, and that take the grid-stride loop round
// several laps, with both biases.
// Also: every lesson of the fusion run on the CUDA backend, outputs checked by the run itself.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/ledger.h"
#include "kernels/fusion/pointwise_devices.h"

using namespace dlsys;
using namespace dlsys::fusion;

namespace {

double max_error(const float* values, std::int64_t n, const std::function<double(std::int64_t)>& expected) {
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(double(values[i]) - expected(i)));
  return worst;
}

}  // namespace

TEST_CASE("every CUDA fusion pass matches its double reference at awkward sizes") {
  // Columns not a multiple of 4 take the one-float path for a broadcast bias; 64 and 4096 the 16-byte one (4097 x
  // 4096: more float4 than the grid has threads, so each thread's column wraps several times).
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1},       {1, 257}, {3, 101},    {17, 1031},
                                                          {4099, 4099}, {7, 64},  {4097, 4096}};
  for (const auto& [rows, cols] : shapes) {
    MemoryLedger ledger;
    HostArrays host(ledger, "test", rows, cols);
    CudaPointwise d(host);
    const std::int64_t n = host.n();
    auto check = [&](const char* what, const float* out, const std::function<double(std::int64_t)>& expected) {
      dlsys::cuda::synchronize();
      const double err = max_error(d.on_host(out, n), n, expected);
      INFO(what, " at ", rows, " x ", cols, ": error ", err);
      CHECK(err <= 1e-5);
    };
    for (Bias bias : {Bias::Broadcast, Bias::Full}) {
      auto expected = [&](std::int64_t i) {
        return add_bias_relu_reference(float(host.x_at(i)), float(host.bias_at(bias, i)));
      };
      d.add_bias_relu(d.y(), d.x(), d.bias(bias), bias);
      check("fused ReLU(x + b)", d.y(), expected);
      d.add_bias(d.t(), d.x(), d.bias(bias), bias);
      d.relu(d.y(), d.t());
      check("unfused ReLU(x + b)", d.y(), expected);
    }
    d.cos(d.t(), d.x());
    check("cos", d.t(), [&](std::int64_t i) { return std::cos(host.x_at(i)); });
    d.cos_cos(d.y(), d.x());
    check("cos.cos", d.y(), [&](std::int64_t i) { return cos_cos_reference(float(host.x_at(i))); });
    d.gelu(d.y(), d.x());
    check("gelu", d.y(), [&](std::int64_t i) { return gelu_reference(float(host.x_at(i))); });
    d.chain(d.y(), d.x(), 8);
    check("chain of 8, fused", d.y(), [&](std::int64_t i) { return chain_reference(float(host.x_at(i)), 8); });
    d.chain_op(d.t(), d.x(), 0);
    d.chain_op(d.y(), d.t(), 1);
    check("chain of 2, unfused", d.y(), [&](std::int64_t i) { return chain_reference(float(host.x_at(i)), 2); });
    d.copy(d.y(), d.x());
    check("copy", d.y(), [&](std::int64_t i) { return host.x_at(i); });
    d.dispatch();
    dlsys::cuda::synchronize();
  }
}
