#pragma once
// The flash lesson's typed values: the closed forms at the chosen n, d and tiles, and what one run measured (both
// kernels at n, or the course's worked example). `dlsys-lab run --json` writes them under "theory" and "measured"
// with the keys named beside each field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"
#include "kernels/attention/online_softmax.h"

namespace dlsys::flash {

struct FlashTheory {
  std::int64_t sram_elements = 0;  // M: the on-chip budget in fp32 elements
  std::int64_t br = 0, bc = 0;     // tile rows (queries) and columns (keys)
  std::int64_t tr = 0, tc = 0;     // ceil(n / br), ceil(n / bc)
  std::string order;               // fa1 | fa2
  double scale = 0;                // 1 / sqrt(d)
  double naive_scratch_bytes = 0, flash_scratch_bytes = 0, scratch_ratio = 0;
  double hbm_bytes_naive = 0;  // main-memory traffic of standard attention
  double hbm_bytes_flash = 0;  // of the tiled kernel in the chosen order
  double hbm_bytes_flash_fa1 = 0, hbm_bytes_flash_fa2 = 0;
  double flops = 0;            // one head
  double flops_all_heads = 0;  // times heads
};

// One kernel at the chosen n: keys <kernel>_ms, _ms_min, _ms_max, <kernel>_tflops, max_abs_err_<kernel>,
// <kernel>_peak_bytes.
struct KernelMeasure {
  double ms = 0, ms_min = 0, ms_max = 0;
  double tflops = 0;            // all heads' FLOPs (theory flops_all_heads) over the median time
  double max_abs_err = 0;       // against the double reference
  std::int64_t peak_bytes = 0;  // scratch, from the kernel's own ledger
};

// Flash against naive at the chosen n, when both ran.
struct KernelComparison {
  double time_ratio_flash_over_naive = 0, time_ratio_flash_over_naive_min = 0;
  std::optional<double> scratch_ratio_naive_over_flash;  // when flash used any scratch
  int accuracy_rule_met = 0;                             // flash error <= 2 naive error + 2^-24
};

// The course's worked example (two tiles of one row): by hand in double, and through the tiled kernel itself.
// Keys example_tile<t>_..., example_o_<i>, example_softmax_w<j>, example_plain_o_<i>, example_kernel_...
struct KernelTileState {
  double m = 0, l = 0;
  std::vector<double> out;  // row 0 of O_i after this tile
};
struct FlashWorkedExample {
  attention::OnlineSoftmaxRow row;  // by hand, tile by tile
  std::vector<double> softmax_weights, plain_output;
  std::string kernel_order;  // fa1 | fa2
  bool kernel_output_normalised = false;
  std::vector<KernelTileState> kernel_tiles;
  std::vector<double> kernel_output;
  double kernel_max_diff = 0;  // largest difference between the kernel and the row by hand
};

// One precision at the chosen n on a GPU: keys <precision>_naive_ms, _naive_tflops, _max_abs_err_naive, and the
// same for flash, <precision>_flash_kernel, <precision>_time_ratio_flash_over_naive, <precision>_accuracy_rule_met.
struct PrecisionFigures {
  std::string precision;     // fp32 | bf16
  std::string flash_kernel;  // v3_flash_registers, v4_flash_tensor, ...
  std::optional<KernelMeasure> naive, flash;
  std::optional<KernelComparison> comparison;
};

struct FlashMeasured {
  std::optional<KernelMeasure> naive, flash;      // in the run's precision
  std::string flash_kernel;                       // which variant ran as flash (key flash_kernel)
  std::int64_t rows_checked_per_head = 0;         // n on the CPU; a sample on a GPU
  std::vector<PrecisionFigures> by_precision;     // GPU runs: fp32 and bf16 (where d allows) at the chosen n
  std::optional<double> hbm_bytes_flash_counted;  // flash on the CPU counts its own block loads and stores
  std::optional<KernelComparison> comparison;
  std::optional<FlashWorkedExample> example;  // runs with example = two_tiles measure only this
};

DLSYS_VALUES_JSON(FlashTheory, sram_elements, br, bc, tr, tc, order, scale, naive_scratch_bytes, flash_scratch_bytes,
                  scratch_ratio, hbm_bytes_naive, hbm_bytes_flash, hbm_bytes_flash_fa1, hbm_bytes_flash_fa2, flops,
                  flops_all_heads)
DLSYS_VALUES_JSON(KernelTileState, m, l, out)
// The worked example as one object (its row's steps and output first).
void to_json(nlohmann::ordered_json& json, const FlashWorkedExample& example);
void from_json(const nlohmann::ordered_json& json, FlashWorkedExample& example);
void to_json(nlohmann::ordered_json& json, const FlashMeasured& measured);
void from_json(const nlohmann::ordered_json& json, FlashMeasured& measured);

}  // namespace dlsys::flash

namespace dlsys::attention {
// One tile of the worked example's row, as the flash lesson records it (found beside the struct, as JSON needs).
DLSYS_VALUES_JSON(OnlineSoftmaxStep, first, count, m_tile, l_tile, z_tile, m_old, l_old, alpha, beta, m, l, z)
}  // namespace dlsys::attention
