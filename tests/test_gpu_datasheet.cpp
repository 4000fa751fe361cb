// The CUDA backend's peaks come from NVIDIA's datasheets, matched by device name and memory: each part's exact
// figures (FP32 GFLOP/s without tensor cores, memory GB/s), and no figures at all where the name does not say which
// part it is. Names are spelt as cudaGetDeviceProperties spells them.
#include <doctest/doctest.h>

#include <string>

#include "engine/gpu_datasheet.h"

using dlsys::find_gpu_datasheet;

namespace {
constexpr std::int64_t kGB = 1000 * 1000 * 1000;

void check_part(const std::string& name, std::int64_t memory_bytes, const std::string& part, double gflops,
                double gbps) {
  CAPTURE(name);
  const auto sheet = find_gpu_datasheet(name, memory_bytes);
  REQUIRE(sheet.has_value());
  CHECK(sheet->part == part);
  CHECK(sheet->fp32_gflops == gflops);
  CHECK(sheet->bandwidth_gbps == gbps);
  CHECK(sheet->document.find("NVIDIA") == 0);
}
}  // namespace

TEST_CASE("H100: SXM, PCIe and NVL are told apart by name, each with its own datasheet figures") {
  check_part("NVIDIA H100 80GB HBM3", 85 * kGB, "H100 SXM", 67000, 3350);
  check_part("NVIDIA H100 PCIe", 85 * kGB, "H100 PCIe", 51000, 2000);
  check_part("NVIDIA H100 NVL", 99 * kGB, "H100 NVL", 60000, 3900);
  // Both 80 GB parts have the same memory: a name without its form factor gets no figures rather than a guess.
  CHECK_FALSE(find_gpu_datasheet("NVIDIA H100", 85 * kGB).has_value());
}

TEST_CASE("H200 and GH200: the names share letters, the figures do not") {
  check_part("NVIDIA H200", 150 * kGB, "H200 SXM", 67000, 4800);
  check_part("NVIDIA H200 NVL", 150 * kGB, "H200 NVL", 60000, 4800);
  check_part("NVIDIA GH200 480GB", 102 * kGB, "GH200 (96 GB HBM3)", 67000, 4000);
  check_part("NVIDIA GH200 144G HBM3e", 143 * kGB, "GH200 (144 GB HBM3e)", 67000, 4900);
}

TEST_CASE("A100: 40 GB parts at 1,555 GB/s, 80 GB PCIe at 1,935 GB/s, 80 GB SXM at 2,039 GB/s") {
  check_part("NVIDIA A100-SXM4-80GB", 85 * kGB, "A100 80GB SXM", 19500, 2039);
  check_part("NVIDIA A100 80GB PCIe", 85 * kGB, "A100 80GB PCIe", 19500, 1935);
  check_part("NVIDIA A100-PCIE-40GB", 42 * kGB, "A100 40GB PCIe", 19500, 1555);
  check_part("NVIDIA A100-SXM4-40GB", 42 * kGB, "A100 40GB SXM", 19500, 1555);
  // The name's size wins over the memory the runtime reports (a MIG slice reports less than the card has).
  check_part("NVIDIA A100-SXM4-80GB", 20 * kGB, "A100 80GB SXM", 19500, 2039);
  // No size in the name: the reported memory decides.
  check_part("NVIDIA A100-SXM4", 85 * kGB, "A100 80GB SXM", 19500, 2039);
}

TEST_CASE("smaller data-centre parts, and model names that contain one another") {
  check_part("NVIDIA L4", 24 * kGB, "L4", 30300, 300);
  check_part("NVIDIA L40S", 48 * kGB, "L40S", 91600, 864);
  check_part("NVIDIA L40", 48 * kGB, "L40", 90500, 864);
  check_part("NVIDIA A10", 24 * kGB, "A10", 31200, 600);  // not an A100
  check_part("NVIDIA A30", 24 * kGB, "A30", 10300, 933);
  check_part("NVIDIA A40", 48 * kGB, "A40", 37400, 696);
  check_part("Tesla T4", 16 * kGB, "T4", 8100, 320);
  check_part("Tesla V100-SXM2-16GB", 16 * kGB, "V100 SXM2", 15700, 900);
  check_part("Tesla V100-PCIE-32GB", 32 * kGB, "V100 PCIe", 14000, 900);
  check_part("Tesla V100S-PCIE-32GB", 32 * kGB, "V100S PCIe", 16400, 1134);
}

TEST_CASE("the peaks' source says datasheet, so no screen calls them measured") {
  CHECK(dlsys::datasheet_peaks_source(find_gpu_datasheet("NVIDIA H100 PCIe", 85 * kGB)) ==
        "datasheet: H100 PCIe, NVIDIA H100 Tensor Core GPU datasheet");
  CHECK(dlsys::datasheet_peaks_source(std::nullopt) == "datasheet: none found for this device's name, so no peaks");
}

TEST_CASE("devices without a datasheet here get no figures") {
  CHECK_FALSE(find_gpu_datasheet("NVIDIA GeForce RTX 4090", 24 * kGB).has_value());
  CHECK_FALSE(find_gpu_datasheet("NVIDIA A10G", 24 * kGB).has_value());  // a cloud part, not on NVIDIA's sheets
  CHECK_FALSE(find_gpu_datasheet("", 0).has_value());
}
