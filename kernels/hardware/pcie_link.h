#pragma once
// A PCI Express link: what the device's own capability says it can run at, and what that carries per direction.
//   The transfer rate per lane and the line code come from PCI-SIG's base specifications: Gen1 2.5 GT/s and Gen2
//   5 GT/s send 8 bits in 10 (8b/10b), Gen3 8, Gen4 16 and Gen5 32 GT/s send 128 in 130 (128b/130b).
//   Data then travels in transaction-layer packets, each carrying its payload behind about 24 bytes of header,
//   sequence number, LCRC and framing (Xilinx WP350, "Understanding Performance of PCI Express Systems"); payloads of
//   128 to 256 bytes are what hosts use, so a copy achieves 84-91 % of the encoded rate at best.
#include <optional>
#include <string>

namespace dlsys::hardware {

struct PcieLink {
  int generation = 0;  // 1 .. 5
  int lanes = 0;       // x1 .. x16
};

// Transfer rate per lane (GT/s) of a generation, and the share of its bits that are data after the line code;
// 0 for a generation outside 1 .. 5.
constexpr double pcie_transfer_gts(int generation) {
  return generation == 1   ? 2.5
         : generation == 2 ? 5.0
         : generation == 3 ? 8.0
         : generation == 4 ? 16.0
         : generation == 5 ? 32.0
                           : 0.0;
}
constexpr double pcie_line_code_efficiency(int generation) { return generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0; }
// GB/s in one direction after the line code: Gen4 x16 is 31.5, Gen5 x16 63.0.
constexpr double pcie_link_gbps(const PcieLink& link) {
  return pcie_transfer_gts(link.generation) * pcie_line_code_efficiency(link.generation) * link.lanes / 8.0;
}

inline constexpr double kPcieTlpOverheadBytes = 24;
inline constexpr double kPcieSmallPayloadBytes = 128, kPcieLargePayloadBytes = 256;
// The share of a link's encoded rate left for data when every packet carries `payload_bytes`.
constexpr double pcie_payload_efficiency(double payload_bytes) {
  return payload_bytes / (payload_bytes + kPcieTlpOverheadBytes);
}

// The generation whose transfer rate `text` gives, as Linux writes it ("32.0 GT/s PCIe", "8 GT/s", "2.5 GT/s"); 0 for
// anything else ("Unknown").
int pcie_generation_of(const std::string& text);
// The most the PCI device in `device_dir` (a sysfs folder such as /sys/bus/pci/devices/0000:1b:00.0) can run at, from
// its max_link_speed and max_link_width: its capability, not the current link, which a GPU slows down while idle.
// nullopt where either file is missing or unreadable.
std::optional<PcieLink> read_pcie_link(const std::string& device_dir);

}  // namespace dlsys::hardware
