#include "lessons/quant/quant_values.h"

#include "engine/json_read.h"

namespace dlsys::quant {

// The documented keys first (the chosen scheme), then each GEMV format prefixed by its key.
void to_json(nlohmann::ordered_json& j, const QuantMeasured& m) {
  j = nlohmann::ordered_json::object();
  j["weight_mse"] = m.weight_mse;
  if (m.uniform_noise_mse) j["uniform_noise_mse"] = *m.uniform_noise_mse;
  j["output_rel_err"] = m.output_rel_err;
  j["gemv_us"] = m.gemv_us;
  j["fp32_gemv_us"] = m.fp32_gemv_us;
  j["speedup"] = m.speedup;
  j["model_final_loss"] = m.model_final_loss;
  for (const GemvTiming& g : m.gemv) {
    j[g.key + "_gemv_us"] = g.us;
    j[g.key + "_gemv_min_us"] = g.min_us;
    j[g.key + "_gemv_max_us"] = g.max_us;
    j[g.key + "_bytes_per_weight"] = g.bytes_per_weight;
    j[g.key + "_gbps"] = g.gbps;
    j[g.key + "_max_rel_err"] = g.max_rel_err;
    j[g.key + "_wrong"] = g.wrong;
  }
  // The formats in the order they ran, with what the flat keys leave out, so a recorded run draws the same rows.
  auto formats = nlohmann::ordered_json::array();
  for (const GemvTiming& g : m.gemv) formats.push_back({{"key", g.key}, {"label", g.label}, {"repeats", g.repeats}});
  j["gemv_formats"] = std::move(formats);
  j["int8_speedup"] = m.int8_speedup;
  j["int8_as_expected"] = m.int8_as_expected;
  j["bandwidth_gbps"] = m.bandwidth_gbps;
  j["outlier_channel"] = m.outlier_channel;
  j["outlier_factor"] = m.outlier_factor;
  j["outlier_absmax"] = m.outlier_absmax;
  j["others_absmax"] = m.others_absmax;
  j["split_columns"] = m.split_columns;
  j["err_per_tensor_clean"] = m.err_per_tensor_clean;
  j["err_per_tensor_outlier"] = m.err_per_tensor_outlier;
  j["err_per_token_outlier"] = m.err_per_token_outlier;
  j["err_llm_int8"] = m.err_llm_int8;
  j["mse_int4_absmax_block"] = m.mse_int4_absmax_block;
  j["mse_nf4_block"] = m.mse_nf4_block;
  j["mse_nf4_block_double_quant"] = m.mse_nf4_block_double_quant;
  j["output_rel_err_int4_absmax_block"] = m.output_rel_err_int4_absmax_block;
  j["output_rel_err_nf4_block"] = m.output_rel_err_nf4_block;
  j["normal_mse_int4_absmax_block"] = m.normal_mse_int4_absmax_block;
  j["normal_mse_nf4_block"] = m.normal_mse_nf4_block;
  j["normal_mse_nf4_block_double_quant"] = m.normal_mse_nf4_block_double_quant;
  j["sparse_2_4_weight_rel_err"] = m.sparse_2_4_weight_rel_err;
  j["sparse_2_4_output_rel_err"] = m.sparse_2_4_output_rel_err;
  j["unstructured_half_weight_rel_err"] = m.unstructured_half_weight_rel_err;
  j["unstructured_half_output_rel_err"] = m.unstructured_half_output_rel_err;
  j["sparse_sample_rows"] = m.sparse_sample_rows;
  j["sparse_sample_cols"] = m.sparse_sample_cols;
  j["sparse_sample"] = m.sparse_sample;
  j["sparse_sample_kept"] = m.sparse_sample_kept;
}

void from_json(const nlohmann::ordered_json& j, QuantMeasured& m) {
  read_key(j, "weight_mse", m.weight_mse);
  read_key_if_present(j, "uniform_noise_mse", m.uniform_noise_mse);
  read_key(j, "output_rel_err", m.output_rel_err);
  read_key(j, "gemv_us", m.gemv_us);
  read_key(j, "fp32_gemv_us", m.fp32_gemv_us);
  read_key(j, "speedup", m.speedup);
  read_key(j, "model_final_loss", m.model_final_loss);
  nlohmann::ordered_json formats;
  read_key(j, "gemv_formats", formats);
  m.gemv.assign(formats.size(), {});
  for (std::size_t i = 0; i < formats.size(); ++i) {
    GemvTiming& g = m.gemv[i];
    try {
      read_key(formats[i], "key", g.key);
      read_key(formats[i], "label", g.label);
      read_key(formats[i], "repeats", g.repeats);
    } catch (const JsonKeyError& e) {
      throw e.within("gemv_formats[" + std::to_string(i) + "]");
    }
    read_key(j, g.key + "_gemv_us", g.us);
    read_key(j, g.key + "_gemv_min_us", g.min_us);
    read_key(j, g.key + "_gemv_max_us", g.max_us);
    read_key(j, g.key + "_bytes_per_weight", g.bytes_per_weight);
    read_key(j, g.key + "_gbps", g.gbps);
    read_key(j, g.key + "_max_rel_err", g.max_rel_err);
    read_key(j, g.key + "_wrong", g.wrong);
  }
  read_key(j, "int8_speedup", m.int8_speedup);
  read_key(j, "int8_as_expected", m.int8_as_expected);
  read_key(j, "bandwidth_gbps", m.bandwidth_gbps);
  read_key(j, "outlier_channel", m.outlier_channel);
  read_key(j, "outlier_factor", m.outlier_factor);
  read_key(j, "outlier_absmax", m.outlier_absmax);
  read_key(j, "others_absmax", m.others_absmax);
  read_key(j, "split_columns", m.split_columns);
  read_key(j, "err_per_tensor_clean", m.err_per_tensor_clean);
  read_key(j, "err_per_tensor_outlier", m.err_per_tensor_outlier);
  read_key(j, "err_per_token_outlier", m.err_per_token_outlier);
  read_key(j, "err_llm_int8", m.err_llm_int8);
  read_key(j, "mse_int4_absmax_block", m.mse_int4_absmax_block);
  read_key(j, "mse_nf4_block", m.mse_nf4_block);
  read_key(j, "mse_nf4_block_double_quant", m.mse_nf4_block_double_quant);
  read_key(j, "output_rel_err_int4_absmax_block", m.output_rel_err_int4_absmax_block);
  read_key(j, "output_rel_err_nf4_block", m.output_rel_err_nf4_block);
  read_key(j, "normal_mse_int4_absmax_block", m.normal_mse_int4_absmax_block);
  read_key(j, "normal_mse_nf4_block", m.normal_mse_nf4_block);
  read_key(j, "normal_mse_nf4_block_double_quant", m.normal_mse_nf4_block_double_quant);
  read_key(j, "sparse_2_4_weight_rel_err", m.sparse_2_4_weight_rel_err);
  read_key(j, "sparse_2_4_output_rel_err", m.sparse_2_4_output_rel_err);
  read_key(j, "unstructured_half_weight_rel_err", m.unstructured_half_weight_rel_err);
  read_key(j, "unstructured_half_output_rel_err", m.unstructured_half_output_rel_err);
  read_key(j, "sparse_sample_rows", m.sparse_sample_rows);
  read_key(j, "sparse_sample_cols", m.sparse_sample_cols);
  read_key(j, "sparse_sample", m.sparse_sample);
  read_key(j, "sparse_sample_kept", m.sparse_sample_kept);
  // The view draws the sample as a rows x cols grid, one cell per element of both arrays.
  if (m.sparse_sample_rows < 0) throw JsonKeyError("sparse_sample_rows", "is negative; allowed: 0 or more");
  if (m.sparse_sample_cols < 0) throw JsonKeyError("sparse_sample_cols", "is negative; allowed: 0 or more");
  const auto cells = static_cast<std::size_t>(std::int64_t{m.sparse_sample_rows} * m.sparse_sample_cols);
  check_length("sparse_sample", m.sparse_sample.size(), cells, "sparse_sample_rows x sparse_sample_cols");
  check_length("sparse_sample_kept", m.sparse_sample_kept.size(), cells, "sparse_sample_rows x sparse_sample_cols");
}

}  // namespace dlsys::quant
