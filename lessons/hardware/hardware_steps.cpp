#include "lessons/hardware/hardware_steps.h"

#include <fmt/format.h>

#include "kernels/hardware/hardware_math.h"

namespace dlsys::hardware {

std::vector<CourseFigure> course_table() {
  return {
      {"Registers", "fastest, private to each thread, 1 cycle", "about 1 cycle to read an operand", ""},
      {"L1 / shared memory", "128 KB per SM, 37.5 TB/s",
       "V100 128 KB, A100 192 KB, H100 256 KB per SM; A100 19.5 TB/s and H100 33.5 TB/s summed over all SMs",
       "128 KB is the V100's size: an H100 has 256 KB per SM. A TB/s figure for on-chip memory is every SM's "
       "bandwidth added up; one SM moves about 180 GB/s (A100) to 250 GB/s (H100)."},
      {"L2 cache", "40-50 MB (A100/H100), tens of ns", "A100 40 MB, H100 SXM 50 MB", ""},
      {"HBM", "40-80 GB, 2-3 TB/s per GPU, hundreds of ns",
       "A100 40 GB 1.56 TB/s, A100 80 GB 2.04 TB/s, H100 PCIe 2.0 TB/s, H100 SXM 3.35 TB/s, H200 4.8 TB/s",
       "2-3 TB/s leaves out the A100 40 GB (1.56), the H100 SXM (3.35) and the H200 (4.8)."},
      {"PCIe Gen3 / Gen4 x16", "16 / 32 GB/s", "16 / 32 GB/s in each direction (rounded), 32 / 64 both ways",
       "These are one direction; the NVLink figures beside them are both directions added."},
      {"NVLink 2 / 3 / 4 / 5", "300 / 600 / 900 GB/s, 1.8 TB/s", "150 / 300 / 450 / 900 GB/s in each direction per GPU",
       "Every NVLink figure is both directions added."},
      {"NVLink 5 against PCIe Gen4", "60x faster",
       "28x like for like (900 against 32 GB/s per direction); 14x against the Gen5 a B200 host has",
       "1.8 TB/s both ways divided by 32 GB/s one way is 56, not a like-for-like ratio."},
      {"InfiniBand / RoCE (inter-node)", "100-400 GB/s per node",
       "one 400 Gb/s port is 50 GB/s per direction; a DGX H100 has 8: 400 GB/s per node", ""},
      {"Intra-node against inter-node", "10-100x faster",
       "one H100: NVLink 450 against its InfiniBand port's 50 GB/s, both per direction: 9x (per node the same 9x)",
       "The course sets one GPU's NVLink (both ways) against a whole node's InfiniBand (one way)."},
      {"Ethernet (inter-rack)", "10-100 GB/s", "10-100 Gb/s per link: 1.25-12.5 GB/s",
       "Ethernet links are quoted in gigabits: 10-100 Gb/s is 1.25-12.5 GB/s."},
  };
}

std::vector<LinkFigure> link_figures() {
  return {
      {"Ethernet 100 Gb/s", gbit_to_gbyte(100), "one link", "10-100 GB/s (they are Gb/s)", true},
      {"InfiniBand NDR port", gbit_to_gbyte(kInfinibandNdrGbit), "one GPU's port", "", true},
      {"PCIe Gen3 x16", kPcieGen3x16Gbps, "one slot", "16 GB/s", false},
      {"PCIe Gen4 x16", kPcieGen4x16Gbps, "one slot", "32 GB/s", true},
      {"PCIe Gen5 x16", kPcieGen5x16Gbps, "one slot", "", true},
      {"NVLink 2 (V100)", kNvlink2Gbps, "per GPU", "300 GB/s (both ways)", false},
      {"NVLink 3 (A100)", kNvlink3Gbps, "per GPU", "600 GB/s (both ways)", false},
      {"InfiniBand, DGX H100", kGpusPerDgx * gbit_to_gbyte(kInfinibandNdrGbit), "per node: 8 ports",
       "100-400 GB/s per node", false},
      {"NVLink 4 (H100)", kNvlink4Gbps, "per GPU", "900 GB/s (both ways)", true},
      {"NVLink 5 (B200)", kNvlink5Gbps, "per GPU", "1.8 TB/s (both ways)", true},
  };
}

std::vector<Consequence> consequences(const HardwareTheory& t) {
  return {
      {"flash",
       "FlashAttention tiles Q, K and V into shared memory: each tile is read from HBM once and then reused from "
       "on-chip memory, which all SMs together read about ten times faster than HBM",
       fmt::format("A100: shared memory {:.1f} TB/s summed over 108 SMs against HBM {:.2f} TB/s: {:.1f}x",
                   t.a100_smem_gbps_aggregate / 1e3, t.a100_40gb_hbm_gbps / 1e3,
                   t.a100_smem_gbps_aggregate / t.a100_40gb_hbm_gbps)},
      {"kvcache",
       "Decoding one token reads every weight and the whole KV cache once and does about 2 FLOP per weight: its time "
       "is bytes over HBM bandwidth, not FLOP over peak",
       fmt::format("7B parameters in bf16 = 14 GB per token: at least {:.1f} ms on an H100 SXM ({:.0f} GB/s)",
                   14e9 / (t.h100_sxm_hbm_gbps * 1e9) * 1e3, t.h100_sxm_hbm_gbps)},
      {"tensor",
       "Tensor parallelism all-reduces activations twice per layer in each direction of training, so it stays where "
       "the links are fastest: inside a node, on NVLink",
       fmt::format("one H100: NVLink {:.0f} GB/s against InfiniBand {:.0f} GB/s, both per direction: {:.0f}x",
                   kNvlink4Gbps, gbit_to_gbyte(kInfinibandNdrGbit), t.nvlink_infiniband_ratio)},
      {"roofline",
       "A kernel's intensity decides which level it needs: data reused from a cache costs that cache's bandwidth, "
       "so the roof has one slope per level",
       "this machine's staircase: the read stream's plateaus per level (step 2)"},
  };
}

std::shared_ptr<const HardwareSteps> make_steps(const HardwareParams& params, const HardwareTheory& theory) {
  auto steps = std::make_shared<HardwareSteps>();
  steps->params = params;
  steps->theory = theory;
  steps->caches = cpu_caches();
  steps->tiers = tiers_of(steps->caches);
  steps->working_set_level = steps->tiers[tier_by_size(steps->tiers, double(params.working_set))].name;
  steps->course_table = course_table();
  steps->links = link_figures();
  steps->consequences = consequences(theory);
  return steps;
}

}  // namespace dlsys::hardware
