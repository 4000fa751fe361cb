// The hardware lesson's GPU probes against what they must compute: the chase's last line walked on the CPU, the read
// stream's and shared memory's sums in closed form, the copies byte for byte; and the lesson whole on --backend cuda.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/backend.h"
#include "kernels/common/device_buffer.h"
#include "kernels/hardware/hardware.h"
#include "kernels/hardware/hardware_cuda.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;
using dlsys::hardware::line_after;
using dlsys::hardware::random_cycle_successors;
namespace probes = dlsys::hardware::cuda;

TEST_CASE("GPU chase: each call walks on from where the last stopped, to the line the CPU's walk ends on") {
  for (const std::int64_t count : {std::int64_t(1), std::int64_t(3), std::int64_t(1000), std::int64_t(1) << 18}) {
    const std::vector<std::uint32_t> successor = random_cycle_successors(count, 11);
    std::vector<std::uint32_t> staged(static_cast<std::size_t>(count * probes::kGpuLineWords), 0);
    for (std::int64_t i = 0; i < count; ++i) staged[std::size_t(i * probes::kGpuLineWords)] = successor[std::size_t(i)];
    dlsys::cuda::DeviceBuffer<std::uint32_t> lines(std::int64_t(staged.size())), at(1);
    lines.upload(staged.data());
    const std::uint32_t start = std::uint32_t(count / 2);
    at.upload(&start);
    std::uint32_t expected = start;
    for (const std::int64_t steps : {std::int64_t(0), std::int64_t(1), count, 3 * count + 5}) {
      probes::chase(at.get(), lines.get(), steps);
      expected = line_after(successor, expected, steps);
      std::uint32_t got = 7;
      dlsys::cuda::copy_to_host_bytes(&got, at.get(), sizeof got);
      CHECK(got == expected);
    }
  }
}

TEST_CASE("GPU read stream: every pass of 0, 1, 0, 1, ... sums to n / 2, however small the working set") {
  for (const std::int64_t n : {std::int64_t(4), std::int64_t(1024), std::int64_t(1) << 22}) {
    std::vector<float> host(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = float(i & 1);
    dlsys::cuda::DeviceFloats x(n), partial(probes::read_blocks());
    x.upload(host.data());
    for (const std::int64_t passes : {std::int64_t(1), std::int64_t(3), std::int64_t(100)}) {
      probes::read_sum(partial.get(), x.get(), n, passes);
      std::vector<float> sums(static_cast<std::size_t>(partial.count()));
      dlsys::cuda::copy_to_host(sums.data(), partial.get(), partial.count());
      double sum = 0;
      for (float s : sums) sum += s;
      CHECK(sum == double(passes) * double(n / 2));
    }
  }
}

TEST_CASE("GPU shared memory: every thread sums 4 x 8 x iterations of the value it was given") {
  dlsys::cuda::DeviceFloats sink(probes::shared_read_threads());
  probes::shared_read(sink.get(), 1.0f, 1000);
  std::vector<float> got(static_cast<std::size_t>(sink.count()));
  dlsys::cuda::copy_to_host(got.data(), sink.get(), sink.count());
  for (float g : got) REQUIRE(g == 32000.0f);
  CHECK(probes::shared_read_bytes(1000) == double(sink.count()) * 1000 * 8 * 16);
  CHECK(probes::sm_clock_mhz() > 500);
}

TEST_CASE("GPU copies: from pinned memory the bytes land whole; a second GPU's copy is checked where there is one") {
  const std::int64_t bytes = 3 << 20;
  auto* pinned = static_cast<unsigned char*>(probes::pinned_allocate(bytes));
  for (std::int64_t i = 0; i < bytes; ++i) pinned[i] = static_cast<unsigned char>(i * 7);
  dlsys::cuda::DeviceBuffer<unsigned char> device(bytes);
  dlsys::cuda::copy_to_device(device.get(), pinned, bytes);
  std::vector<unsigned char> back(static_cast<std::size_t>(bytes));
  dlsys::cuda::copy_to_host_bytes(back.data(), device.get(), bytes);
  for (std::int64_t i = 0; i < bytes; ++i) REQUIRE(back[std::size_t(i)] == static_cast<unsigned char>(i * 7));
  probes::pinned_free(pinned);
  const probes::PeerCopy peer = probes::peer_copy(1 << 20, {.warmup = 1, .repeats = 2});
  if (peer.gpus >= 2) CHECK(peer.matched);
}

TEST_CASE("hardware runs whole on --backend cuda, every probe's result checked by the run") {
  const auto r = testing::run_cli_captured({"run", "hardware", "--backend", "cuda", "--quick", "--json", "-"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["backend"]["kind"] == "cuda");
  CHECK(j["measured"]["wrong"] == 0);
  CHECK(j["measured"]["gpu_probes"]["wrong"] == 0);
  CHECK(j["measured"]["gpu_probes"]["levels"].size() == 3);
  // Where the system names GPU 0's link, the run reads it and sets the pinned copy against it.
  const std::string bus = cuda_status().device.pci_bus_id;
  if (!bus.empty() && std::filesystem::exists("/sys/bus/pci/devices/" + bus + "/max_link_speed")) {
    REQUIRE(j["measured"]["gpu"].contains("pcie"));
    CHECK(j["measured"]["gpu"]["pcie"]["link_gbps"].get<double>() > 0);
    CHECK(j["measured"]["gpu_probes"].contains("pcie_copy"));
  }
}
