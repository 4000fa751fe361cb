#include "lessons/flash/flash_values.h"

#include <fmt/format.h>

namespace dlsys::flash {

namespace {

void write_example(nlohmann::ordered_json& j, const FlashWorkedExample& e) {
  for (std::size_t t = 0; t < e.row.steps.size(); ++t) {
    const auto& step = e.row.steps[t];
    const std::string key = fmt::format("example_tile{}_", t + 1);
    j[key + "m_tile"] = step.m_tile;
    j[key + "l_tile"] = step.l_tile;
    for (std::size_t i = 0; i < step.z_tile.size(); ++i) j[fmt::format("{}z_tile_{}", key, i)] = step.z_tile[i];
    j[key + "alpha"] = step.alpha;
    j[key + "beta"] = step.beta;
    j[key + "m"] = step.m;
    j[key + "l"] = step.l;
    for (std::size_t i = 0; i < step.z.size(); ++i) j[fmt::format("{}z_{}", key, i)] = step.z[i];
  }
  for (std::size_t i = 0; i < e.row.o.size(); ++i) j[fmt::format("example_o_{}", i)] = e.row.o[i];
  for (std::size_t i = 0; i < e.softmax_weights.size(); ++i)
    j[fmt::format("example_softmax_w{}", i + 1)] = e.softmax_weights[i];
  for (std::size_t i = 0; i < e.plain_output.size(); ++i) j[fmt::format("example_plain_o_{}", i)] = e.plain_output[i];
  for (std::size_t t = 0; t < e.kernel_tiles.size(); ++t) {
    const std::string key = fmt::format("example_kernel_tile{}_", t + 1);
    j[key + "m"] = e.kernel_tiles[t].m;
    j[key + "l"] = e.kernel_tiles[t].l;
    for (std::size_t i = 0; i < e.kernel_tiles[t].out.size(); ++i)
      j[fmt::format("{}out_{}", key, i)] = e.kernel_tiles[t].out[i];
  }
  j["example_kernel_order"] = e.kernel_order;
  j["example_kernel_output_normalised"] = e.kernel_output_normalised ? 1 : 0;
  for (std::size_t i = 0; i < e.kernel_output.size(); ++i)
    j[fmt::format("example_kernel_o_{}", i)] = e.kernel_output[i];
  j["example_kernel_max_diff"] = e.kernel_max_diff;
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const FlashTheory& t) {
  j["sram_elements"] = t.sram_elements;
  j["br"] = t.br;
  j["bc"] = t.bc;
  j["tr"] = t.tr;
  j["tc"] = t.tc;
  j["order"] = t.order;
  j["scale"] = t.scale;
  j["naive_scratch_bytes"] = t.naive_scratch_bytes;
  j["flash_scratch_bytes"] = t.flash_scratch_bytes;
  j["scratch_ratio"] = t.scratch_ratio;
  j["hbm_bytes_naive"] = t.hbm_bytes_naive;
  j["hbm_bytes_flash"] = t.hbm_bytes_flash;
  j["hbm_bytes_flash_fa1"] = t.hbm_bytes_flash_fa1;
  j["hbm_bytes_flash_fa2"] = t.hbm_bytes_flash_fa2;
  j["flops"] = t.flops;
}

void to_json(nlohmann::ordered_json& j, const FlashMeasured& m) {
  j = nlohmann::ordered_json::object();
  if (m.example) write_example(j, *m.example);
  for (const auto& [name, kernel] : {std::pair{"naive", &m.naive}, std::pair{"flash", &m.flash}})
    if (*kernel) {
      j[fmt::format("{}_ms", name)] = (*kernel)->ms;
      j[fmt::format("{}_ms_min", name)] = (*kernel)->ms_min;
      j[fmt::format("{}_ms_max", name)] = (*kernel)->ms_max;
    }
  if (m.naive) j["max_abs_err_naive"] = m.naive->max_abs_err;
  if (m.flash) j["max_abs_err_flash"] = m.flash->max_abs_err;
  if (m.naive) j["naive_peak_bytes"] = m.naive->peak_bytes;
  if (m.flash) j["flash_peak_bytes"] = m.flash->peak_bytes;
  if (m.hbm_bytes_flash_counted) j["hbm_bytes_flash_counted"] = *m.hbm_bytes_flash_counted;
  if (const auto& c = m.comparison) {
    j["time_ratio_flash_over_naive"] = c->time_ratio_flash_over_naive;
    j["time_ratio_flash_over_naive_min"] = c->time_ratio_flash_over_naive_min;
    if (c->scratch_ratio_naive_over_flash) j["scratch_ratio_naive_over_flash"] = *c->scratch_ratio_naive_over_flash;
    j["accuracy_rule_met"] = c->accuracy_rule_met;
  }
}

}  // namespace dlsys::flash
