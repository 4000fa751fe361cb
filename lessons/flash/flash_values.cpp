#include "lessons/flash/flash_values.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "engine/json_read.h"

namespace dlsys::flash {

namespace {

using json = nlohmann::ordered_json;

// A kernel at the chosen n under its name ("naive_ms", "naive_ms_min", ...); runs recorded before the TFLOP/s lack
// them. Its error's key names the kernel last ("max_abs_err_naive"), so it is written by error_key.
DLSYS_VALUES_PART(KernelTime, KernelMeasure, ms, ms_min, ms_max)
DLSYS_VALUES_PART(KernelRate, KernelMeasure, tflops)
DLSYS_VALUES_PART(KernelPeak, KernelMeasure, peak_bytes)
DLSYS_VALUES_PART(Counted, FlashMeasured, hbm_bytes_flash_counted)
// Written when the run knows them.
DLSYS_VALUES_PART(FlashKernel, FlashMeasured, flash_kernel)
DLSYS_VALUES_PART(RowsChecked, FlashMeasured, rows_checked_per_head)
DLSYS_VALUES_PART(Comparison, KernelComparison, time_ratio_flash_over_naive, time_ratio_flash_over_naive_min,
                  scratch_ratio_naive_over_flash, accuracy_rule_met)
// Each precision of a GPU run under its name ("bf16_flash_kernel", "bf16_naive_ms", ...): the medians alone.
DLSYS_VALUES_PART(PrecisionKernel, PrecisionFigures, flash_kernel)
DLSYS_VALUES_PART(PrecisionRate, KernelMeasure, ms, tflops)
DLSYS_VALUES_PART(PrecisionComparison, KernelComparison, time_ratio_flash_over_naive, accuracy_rule_met)
// The worked example as one object: its row's steps and output, then the rest.
DLSYS_VALUES_PART(ExampleRow, attention::OnlineSoftmaxRow, steps, o)
DLSYS_VALUES_PART(ExampleRest, FlashWorkedExample, softmax_weights, plain_output, kernel_order,
                  kernel_output_normalised, kernel_tiles, kernel_output, kernel_max_diff)
// The worked example's flat keys, for scripts: each tile by hand under "example_tile<t>_", each tile of the kernel
// under "example_kernel_tile<t>_", the vectors one key per element.
DLSYS_VALUES_PART(TileAlone, attention::OnlineSoftmaxStep, m_tile, l_tile)
DLSYS_VALUES_PART(TileMerged, attention::OnlineSoftmaxStep, alpha, beta, m, l)
DLSYS_VALUES_PART(KernelTileHead, KernelTileState, m, l)
DLSYS_VALUES_PART(ExampleOrder, FlashWorkedExample, kernel_order)
DLSYS_VALUES_PART(ExampleDiff, FlashWorkedExample, kernel_max_diff)

template <class Measured>
auto kernels(Measured& m) {
  return std::array{std::pair{"naive", &m.naive}, std::pair{"flash", &m.flash}};
}

std::string error_key(const std::string& prefix, const char* kernel) { return prefix + "max_abs_err_" + kernel; }

// `values` as keys <stem>0, <stem>1, ... (from `first`).
void write_elements(json& j, const std::string& stem, const std::vector<double>& values, std::size_t first = 0) {
  for (std::size_t i = 0; i < values.size(); ++i) write_key(j, stem + std::to_string(first + i), values[i]);
}

void write_example_keys(json& j, const FlashWorkedExample& e) {
  for (std::size_t t = 0; t < e.row.steps.size(); ++t) {
    const std::string prefix = fmt::format("example_tile{}_", t + 1);
    TileAlone::write(j, e.row.steps[t], prefix);
    write_elements(j, prefix + "z_tile_", e.row.steps[t].z_tile);
    TileMerged::write(j, e.row.steps[t], prefix);
    write_elements(j, prefix + "z_", e.row.steps[t].z);
  }
  write_elements(j, "example_o_", e.row.o);
  write_elements(j, "example_softmax_w", e.softmax_weights, 1);
  write_elements(j, "example_plain_o_", e.plain_output);
  for (std::size_t t = 0; t < e.kernel_tiles.size(); ++t) {
    const std::string prefix = fmt::format("example_kernel_tile{}_", t + 1);
    KernelTileHead::write(j, e.kernel_tiles[t], prefix);
    write_elements(j, prefix + "out_", e.kernel_tiles[t].out);
  }
  ExampleOrder::write(j, e, "example_");
  write_key(j, "example_kernel_output_normalised", FlagField(e.kernel_output_normalised));
  write_elements(j, "example_kernel_o_", e.kernel_output);
  ExampleDiff::write(j, e, "example_");
}

void write_precision(json& j, const PrecisionFigures& f) {
  const std::string p = f.precision + "_";
  PrecisionKernel::write(j, f, p);
  for (const auto& [name, kernel] : kernels(f))
    if (*kernel) {
      PrecisionRate::write(j, **kernel, p + name + "_");
      write_key(j, error_key(p, name), (*kernel)->max_abs_err);
      KernelPeak::write(j, **kernel, p + name + "_");
    }
  if (f.comparison) PrecisionComparison::write(j, *f.comparison, p);
}

PrecisionFigures read_precision(const json& j, const std::string& precision) {
  PrecisionFigures f;
  f.precision = precision;
  const std::string p = precision + "_";
  PrecisionKernel::read(j, f, p);
  for (const auto& [name, kernel] : kernels(f)) {
    if (!j.contains(p + name + "_ms")) continue;
    KernelMeasure& k = kernel->emplace();
    PrecisionRate::read(j, k, p + name + "_");
    k.ms_min = k.ms_max = k.ms;
    read_key(j, error_key(p, name), k.max_abs_err);
    KernelPeak::read(j, k, p + name + "_");
  }
  if (j.contains(p + "time_ratio_flash_over_naive")) PrecisionComparison::read(j, f.comparison.emplace(), p);
  return f;
}

}  // namespace

void to_json(json& j, const FlashWorkedExample& e) {
  j = json::object();
  ExampleRow::write(j, e.row);
  ExampleRest::write(j, e);
}

void from_json(const json& j, FlashWorkedExample& e) {
  ExampleRow::read(j, e.row);
  ExampleRest::read(j, e);
}

void to_json(json& j, const FlashMeasured& m) {
  j = json::object();
  if (m.example) write_example_keys(j, *m.example);
  for (const auto& [name, kernel] : kernels(m))
    if (*kernel) {
      KernelTime::write(j, **kernel, std::string(name) + "_");
      KernelRate::write(j, **kernel, std::string(name) + "_");
    }
  for (const auto& [name, kernel] : kernels(m))
    if (*kernel) write_key(j, error_key("", name), (*kernel)->max_abs_err);
  for (const auto& [name, kernel] : kernels(m))
    if (*kernel) KernelPeak::write(j, **kernel, std::string(name) + "_");
  Counted::write(j, m);
  if (!m.flash_kernel.empty()) FlashKernel::write(j, m);
  if (m.rows_checked_per_head > 0) RowsChecked::write(j, m);
  if (m.comparison) Comparison::write(j, *m.comparison);
  for (const PrecisionFigures& f : m.by_precision) write_precision(j, f);
  // The whole worked example once more as one object, after the flat keys scripts read, so a recorded run can draw
  // every step of it again.
  write_key(j, "worked_example", m.example);
}

void from_json(const json& j, FlashMeasured& m) {
  m = FlashMeasured{};
  for (const auto& [name, kernel] : kernels(m)) {
    const std::string prefix = std::string(name) + "_";
    if (!j.contains(prefix + "ms")) continue;
    KernelMeasure& k = kernel->emplace();
    KernelTime::read(j, k, prefix);
    KernelRate::read_if_present(j, k, prefix);
    read_key(j, error_key("", name), k.max_abs_err);
    KernelPeak::read(j, k, prefix);
  }
  Counted::read(j, m);
  FlashKernel::read_if_present(j, m);
  RowsChecked::read_if_present(j, m);
  if (j.contains("time_ratio_flash_over_naive")) Comparison::read(j, m.comparison.emplace());
  for (const char* precision : {"fp32", "bf16"})
    if (j.contains(fmt::format("{}_flash_kernel", precision))) m.by_precision.push_back(read_precision(j, precision));
  read_key(j, "worked_example", m.example);
}

}  // namespace dlsys::flash
