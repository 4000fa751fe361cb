// A PCI device's link from Linux's sysfs (pcie_link.h).
#include "kernels/hardware/pcie_link.h"

#include <cstdlib>
#include <fstream>

namespace dlsys::hardware {

int pcie_generation_of(const std::string& text) {
  const char* start = text.c_str();
  char* end = nullptr;
  const double gts = std::strtod(start, &end);
  if (end == start || text.find("GT/s", std::size_t(end - start)) == std::string::npos) return 0;
  for (int generation = 1; generation <= 5; ++generation)
    if (gts == pcie_transfer_gts(generation)) return generation;
  return 0;
}

namespace {

std::optional<std::string> first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

}  // namespace

std::optional<PcieLink> read_pcie_link(const std::string& device_dir) {
  const std::optional<std::string> speed = first_line(device_dir + "/max_link_speed");
  const std::optional<std::string> width = first_line(device_dir + "/max_link_width");
  if (!speed || !width) return std::nullopt;
  PcieLink link{pcie_generation_of(*speed), std::atoi(width->c_str())};
  if (link.generation == 0 || link.lanes < 1 || link.lanes > 32) return std::nullopt;
  return link;
}

}  // namespace dlsys::hardware
