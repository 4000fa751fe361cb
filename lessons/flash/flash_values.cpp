#include "lessons/flash/flash_values.h"

#include <fmt/format.h>

#include "engine/json_read.h"

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

nlohmann::ordered_json example_object(const FlashWorkedExample& e) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const attention::OnlineSoftmaxStep& st : e.row.steps)
    steps.push_back({{"first", st.first},
                     {"count", st.count},
                     {"m_tile", st.m_tile},
                     {"l_tile", st.l_tile},
                     {"z_tile", st.z_tile},
                     {"m_old", st.m_old},
                     {"l_old", st.l_old},
                     {"alpha", st.alpha},
                     {"beta", st.beta},
                     {"m", st.m},
                     {"l", st.l},
                     {"z", st.z}});
  nlohmann::ordered_json tiles = nlohmann::ordered_json::array();
  for (const KernelTileState& t : e.kernel_tiles) tiles.push_back({{"m", t.m}, {"l", t.l}, {"out", t.out}});
  nlohmann::ordered_json j;
  j["steps"] = std::move(steps);
  j["o"] = e.row.o;
  j["softmax_weights"] = e.softmax_weights;
  j["plain_output"] = e.plain_output;
  j["kernel_order"] = e.kernel_order;
  j["kernel_output_normalised"] = e.kernel_output_normalised;
  j["kernel_tiles"] = std::move(tiles);
  j["kernel_output"] = e.kernel_output;
  j["kernel_max_diff"] = e.kernel_max_diff;
  return j;
}

void read_example_object(const nlohmann::ordered_json& j, FlashWorkedExample& e) {
  nlohmann::ordered_json steps, tiles;
  read_key(j, "steps", steps);
  e.row.steps.assign(steps.size(), {});
  for (std::size_t i = 0; i < steps.size(); ++i) {
    attention::OnlineSoftmaxStep& st = e.row.steps[i];
    const nlohmann::ordered_json& s = steps[i];
    try {
      read_key(s, "first", st.first);
      read_key(s, "count", st.count);
      read_key(s, "m_tile", st.m_tile);
      read_key(s, "l_tile", st.l_tile);
      read_key(s, "z_tile", st.z_tile);
      read_key(s, "m_old", st.m_old);
      read_key(s, "l_old", st.l_old);
      read_key(s, "alpha", st.alpha);
      read_key(s, "beta", st.beta);
      read_key(s, "m", st.m);
      read_key(s, "l", st.l);
      read_key(s, "z", st.z);
    } catch (const JsonKeyError& err) {
      throw err.within(fmt::format("steps[{}]", i));
    }
  }
  read_key(j, "o", e.row.o);
  read_key(j, "softmax_weights", e.softmax_weights);
  read_key(j, "plain_output", e.plain_output);
  read_key(j, "kernel_order", e.kernel_order);
  read_key(j, "kernel_output_normalised", e.kernel_output_normalised);
  read_key(j, "kernel_tiles", tiles);
  e.kernel_tiles.assign(tiles.size(), {});
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    try {
      read_key(tiles[i], "m", e.kernel_tiles[i].m);
      read_key(tiles[i], "l", e.kernel_tiles[i].l);
      read_key(tiles[i], "out", e.kernel_tiles[i].out);
    } catch (const JsonKeyError& err) {
      throw err.within(fmt::format("kernel_tiles[{}]", i));
    }
  }
  read_key(j, "kernel_output", e.kernel_output);
  read_key(j, "kernel_max_diff", e.kernel_max_diff);
}

// A precision's figures as flat keys <precision>_<key>.
void write_precision(nlohmann::ordered_json& j, const PrecisionFigures& f) {
  const std::string p = f.precision + "_";
  j[p + "flash_kernel"] = f.flash_kernel;
  for (const auto& [name, kernel] : {std::pair{"naive", &f.naive}, std::pair{"flash", &f.flash}})
    if (*kernel) {
      j[p + name + "_ms"] = (*kernel)->ms;
      j[p + name + "_tflops"] = (*kernel)->tflops;
      j[p + "max_abs_err_" + name] = (*kernel)->max_abs_err;
      j[p + name + "_peak_bytes"] = (*kernel)->peak_bytes;
    }
  if (f.comparison) {
    j[p + "time_ratio_flash_over_naive"] = f.comparison->time_ratio_flash_over_naive;
    j[p + "accuracy_rule_met"] = f.comparison->accuracy_rule_met;
  }
}

PrecisionFigures read_precision(const nlohmann::ordered_json& j, const std::string& precision) {
  PrecisionFigures f;
  f.precision = precision;
  const std::string p = precision + "_";
  read_key(j, p + "flash_kernel", f.flash_kernel);
  for (const auto& [name, kernel] : {std::pair{"naive", &f.naive}, std::pair{"flash", &f.flash}}) {
    if (!j.contains(p + name + "_ms")) continue;
    KernelMeasure k;
    read_key(j, p + name + "_ms", k.ms);
    k.ms_min = k.ms_max = k.ms;
    read_key(j, p + name + "_tflops", k.tflops);
    read_key(j, p + "max_abs_err_" + name, k.max_abs_err);
    read_key(j, p + name + "_peak_bytes", k.peak_bytes);
    *kernel = k;
  }
  if (j.contains(p + "time_ratio_flash_over_naive")) {
    KernelComparison c;
    read_key(j, p + "time_ratio_flash_over_naive", c.time_ratio_flash_over_naive);
    read_key(j, p + "accuracy_rule_met", c.accuracy_rule_met);
    f.comparison = c;
  }
  return f;
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const FlashMeasured& m) {
  j = nlohmann::ordered_json::object();
  if (m.example) write_example(j, *m.example);
  for (const auto& [name, kernel] : {std::pair{"naive", &m.naive}, std::pair{"flash", &m.flash}})
    if (*kernel) {
      j[fmt::format("{}_ms", name)] = (*kernel)->ms;
      j[fmt::format("{}_ms_min", name)] = (*kernel)->ms_min;
      j[fmt::format("{}_ms_max", name)] = (*kernel)->ms_max;
      j[fmt::format("{}_tflops", name)] = (*kernel)->tflops;
    }
  if (m.naive) j["max_abs_err_naive"] = m.naive->max_abs_err;
  if (m.flash) j["max_abs_err_flash"] = m.flash->max_abs_err;
  if (m.naive) j["naive_peak_bytes"] = m.naive->peak_bytes;
  if (m.flash) j["flash_peak_bytes"] = m.flash->peak_bytes;
  if (m.hbm_bytes_flash_counted) j["hbm_bytes_flash_counted"] = *m.hbm_bytes_flash_counted;
  if (!m.flash_kernel.empty()) j["flash_kernel"] = m.flash_kernel;
  if (m.rows_checked_per_head > 0) j["rows_checked_per_head"] = m.rows_checked_per_head;
  if (const auto& c = m.comparison) {
    j["time_ratio_flash_over_naive"] = c->time_ratio_flash_over_naive;
    j["time_ratio_flash_over_naive_min"] = c->time_ratio_flash_over_naive_min;
    if (c->scratch_ratio_naive_over_flash) j["scratch_ratio_naive_over_flash"] = *c->scratch_ratio_naive_over_flash;
    j["accuracy_rule_met"] = c->accuracy_rule_met;
  }
  for (const PrecisionFigures& f : m.by_precision) write_precision(j, f);
  // The whole worked example once more as one object, after the flat keys scripts read, so a recorded run can draw
  // every step of it again.
  if (m.example) j["worked_example"] = example_object(*m.example);
}

void from_json(const nlohmann::ordered_json& j, FlashMeasured& m) {
  m = FlashMeasured{};
  for (const auto& [name, kernel] : {std::pair{"naive", &m.naive}, std::pair{"flash", &m.flash}}) {
    if (!j.contains(fmt::format("{}_ms", name))) continue;
    KernelMeasure k;
    read_key(j, fmt::format("{}_ms", name), k.ms);
    read_key(j, fmt::format("{}_ms_min", name), k.ms_min);
    read_key(j, fmt::format("{}_ms_max", name), k.ms_max);
    if (j.contains(fmt::format("{}_tflops", name))) read_key(j, fmt::format("{}_tflops", name), k.tflops);
    read_key(j, fmt::format("max_abs_err_{}", name), k.max_abs_err);
    read_key(j, fmt::format("{}_peak_bytes", name), k.peak_bytes);
    *kernel = k;
  }
  read_key_if_present(j, "hbm_bytes_flash_counted", m.hbm_bytes_flash_counted);
  if (j.contains("flash_kernel")) read_key(j, "flash_kernel", m.flash_kernel);
  if (j.contains("rows_checked_per_head")) read_key(j, "rows_checked_per_head", m.rows_checked_per_head);
  for (const char* precision : {"fp32", "bf16"})
    if (j.contains(fmt::format("{}_flash_kernel", precision))) m.by_precision.push_back(read_precision(j, precision));
  if (j.contains("time_ratio_flash_over_naive")) {
    KernelComparison c;
    read_key(j, "time_ratio_flash_over_naive", c.time_ratio_flash_over_naive);
    read_key(j, "time_ratio_flash_over_naive_min", c.time_ratio_flash_over_naive_min);
    read_key_if_present(j, "scratch_ratio_naive_over_flash", c.scratch_ratio_naive_over_flash);
    read_key(j, "accuracy_rule_met", c.accuracy_rule_met);
    m.comparison = c;
  }
  if (j.contains("worked_example")) {
    FlashWorkedExample e;
    try {
      read_example_object(j.at("worked_example"), e);
    } catch (const JsonKeyError& err) {
      throw err.within("worked_example");
    }
    m.example = std::move(e);
  }
}

}  // namespace dlsys::flash
