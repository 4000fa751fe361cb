// The roofline lesson's CUDA kernels against their double references at sizes that miss the blocks (one element, a
// prime, one past a block) and one past the grid's block cap; the launch costs measured; and the roofline and fusion
// lessons run whole on --backend cuda, every output checked by the run itself.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_cuda.h"
#include "kernels/roofline/roofline_math.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;
using dlsys::cuda::DeviceFloats;

namespace {

std::vector<float> seeded(std::int64_t n, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  fill_seeded_uniform(v, seed);
  return v;
}

std::vector<float> to_host(const DeviceFloats& device) {
  std::vector<float> host(static_cast<std::size_t>(device.count()));
  dlsys::cuda::copy_to_host(host.data(), device.get(), device.count());
  return host;
}

}  // namespace

TEST_CASE("CUDA STREAM kernels and the intensity family match their formulas") {
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(257), std::int64_t(1000003), std::int64_t(17000001)}) {
    const auto a_host = seeded(n, 1), b_host = seeded(n, 2);
    DeviceFloats a(n), b(n), c(n);
    a.upload(a_host.data());
    b.upload(b_host.data());
    roofline::cuda::stream_copy(c.get(), a.get(), n);
    CHECK(to_host(c) == a_host);
    roofline::cuda::stream_scale(c.get(), a.get(), 2.0f, n);
    auto out = to_host(c);
    for (std::int64_t i = 0; i < n; ++i) REQUIRE(out[std::size_t(i)] == 2.0f * a_host[std::size_t(i)]);
    roofline::cuda::stream_add(c.get(), a.get(), b.get(), n);
    out = to_host(c);
    for (std::int64_t i = 0; i < n; ++i)
      REQUIRE(out[std::size_t(i)] == a_host[std::size_t(i)] + b_host[std::size_t(i)]);
    roofline::cuda::stream_triad(c.get(), a.get(), b.get(), 2.0f, n);
    out = to_host(c);
    for (std::int64_t i = 0; i < n; ++i)
      REQUIRE(out[std::size_t(i)] ==
              doctest::Approx(a_host[std::size_t(i)] + 2.0 * b_host[std::size_t(i)]).epsilon(1e-6));
    for (const std::int64_t k : {std::int64_t(1), std::int64_t(7), std::int64_t(256)}) {
      roofline::cuda::fma_family(c.get(), a.get(), n, k);
      out = to_host(c);
      for (std::int64_t i = 0; i < n; i += std::max<std::int64_t>(1, n / 4096))
        REQUIRE(std::fabs(out[std::size_t(i)] - roofline::fma_family_reference(a_host[std::size_t(i)], k)) <= 1e-5);
    }
  }
}

TEST_CASE("CUDA STREAM kernels on pointers off the 16-byte grid take the one-float path and stay right") {
  const std::int64_t n = 100003;
  const auto a_host = seeded(n + 1, 7), b_host = seeded(n + 1, 8);
  DeviceFloats a(n + 1), b(n + 1), c(n + 1);
  a.upload(a_host.data());
  b.upload(b_host.data());
  roofline::cuda::stream_copy(c.get() + 1, a.get() + 1, n);
  auto out = to_host(c);
  for (std::int64_t i = 1; i <= n; ++i) REQUIRE(out[std::size_t(i)] == a_host[std::size_t(i)]);
  roofline::cuda::stream_add(c.get() + 1, a.get(), b.get() + 1, n);
  out = to_host(c);
  for (std::int64_t i = 0; i < n; ++i)
    REQUIRE(out[std::size_t(i + 1)] == a_host[std::size_t(i)] + b_host[std::size_t(i + 1)]);
}

TEST_CASE("CUDA softmax rows and the bf16 GEMV match their double references") {
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 257}, {65, 4096}, {2, 10007}}) {
    const auto x_host = seeded(rows * cols, 5);
    DeviceFloats x(rows * cols), y(rows * cols);
    x.upload(x_host.data());
    roofline::cuda::softmax_rows(y.get(), x.get(), rows, cols);
    const auto out = to_host(y);
    std::vector<double> ref(static_cast<std::size_t>(rows * cols));
    roofline::softmax_rows_reference(ref.data(), x_host.data(), rows, cols);
    for (std::size_t i = 0; i < ref.size(); ++i) REQUIRE(std::fabs(out[i] - ref[i]) <= 1e-6);

    std::vector<std::uint16_t> w_host(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < w_host.size(); ++i) w_host[i] = roofline::to_bf16(x_host[i]);
    const auto v_host = seeded(cols, 6);
    dlsys::cuda::DeviceBuffer<std::uint16_t> w(rows * cols);
    DeviceFloats v(cols), g(rows);
    w.upload(w_host.data());
    v.upload(v_host.data());
    roofline::cuda::gemv_bf16(g.get(), w.get(), v.get(), rows, cols);
    const auto gemv = to_host(g);
    std::vector<double> gemv_ref(static_cast<std::size_t>(rows));
    roofline::gemv_bf16_reference(gemv_ref.data(), w_host.data(), v_host.data(), rows, cols);
    for (std::int64_t r = 0; r < rows; ++r)
      CHECK(std::fabs(gemv[std::size_t(r)] - gemv_ref[std::size_t(r)]) <= 1e-5 * double(cols));
  }
}

TEST_CASE("CUDA peak kernel and launch costs give positive, ordered numbers") {
  DeviceFloats sink(roofline::cuda::fma_peak_threads());
  const double us = dlsys::cuda::event_elapsed_us([&] { roofline::cuda::fma_peak(sink.get(), 2000); });
  CHECK(us > 0);
  CHECK(roofline::cuda::fma_peak_flop(2000) / (us * 1e3) > 100);  // any data-centre GPU does > 100 GFLOP/s
  DeviceFloats x(1024), y(1024);
  const roofline::cuda::CallCosts costs = roofline::cuda::scale_call_costs(y.get(), x.get(), 1024, 200);
  CHECK(costs.launched_us > 0);
  CHECK(costs.graph_us > 0);
  CHECK(roofline::cuda::empty_launch_and_wait_us(50) > 0);
}

TEST_CASE("roofline and fusion run whole on --backend cuda, every output matching its reference") {
  for (const char* lesson : {"roofline", "fusion"}) {
    const auto r = testing::run_cli_captured({"run", lesson, "--backend", "cuda", "--quick", "--json", "-"});
    INFO(lesson, ": ", r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["backend"]["kind"] == "cuda");
    CHECK(j["measured"]["wrong"] == 0);
  }
}
