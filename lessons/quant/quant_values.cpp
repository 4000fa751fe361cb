#include "lessons/quant/quant_values.h"

#include "engine/json_read.h"

namespace dlsys::quant {

namespace {
DLSYS_VALUES_PART(ChosenScheme, QuantMeasured, weight_mse, uniform_noise_mse, output_rel_err, gemv_us, fp32_gemv_us,
                  speedup, model_final_loss)
// Each GEMV format under its key ("int8_gemv_us"); then the formats in the order they ran, with what the flat keys
// leave out, so a recorded run draws the same rows.
DLSYS_VALUES_PART(GemvKeys, GemvTiming, gemv_us, gemv_min_us, gemv_max_us, bytes_per_weight, gbps, max_rel_err, wrong)
DLSYS_VALUES_PART(GemvFormat, GemvTiming, key, label, repeats)
DLSYS_VALUES_PART(Findings, QuantMeasured, int8_speedup, int8_as_expected, bandwidth_gbps, outlier_channel,
                  outlier_factor, outlier_absmax, others_absmax, split_columns, err_per_tensor_clean,
                  err_per_tensor_outlier, err_per_token_outlier, err_llm_int8, mse_int4_absmax_block, mse_nf4_block,
                  mse_nf4_block_double_quant, output_rel_err_int4_absmax_block, output_rel_err_nf4_block,
                  normal_mse_int4_absmax_block, normal_mse_nf4_block, normal_mse_nf4_block_double_quant,
                  sparse_2_4_weight_rel_err, sparse_2_4_output_rel_err, unstructured_half_weight_rel_err,
                  unstructured_half_output_rel_err, sparse_sample_rows, sparse_sample_cols, sparse_sample,
                  sparse_sample_kept)
}  // namespace

void to_json(nlohmann::ordered_json& j, const QuantMeasured& m) {
  j = nlohmann::ordered_json::object();
  ChosenScheme::write(j, m);
  for (const GemvTiming& g : m.gemv) GemvKeys::write(j, g, g.key + "_");
  auto& formats = j["gemv_formats"] = nlohmann::ordered_json::array();
  for (const GemvTiming& g : m.gemv) GemvFormat::write(formats.emplace_back(), g);
  Findings::write(j, m);
}

void from_json(const nlohmann::ordered_json& j, QuantMeasured& m) {
  ChosenScheme::read(j, m);
  nlohmann::ordered_json formats;
  read_key(j, "gemv_formats", formats);
  m.gemv.assign(formats.size(), {});
  for (std::size_t i = 0; i < formats.size(); ++i) {
    GemvTiming& g = m.gemv[i];
    try {
      GemvFormat::read(formats[i], g);
    } catch (const JsonKeyError& e) {
      throw e.within("gemv_formats[" + std::to_string(i) + "]");
    }
    GemvKeys::read(j, g, g.key + "_");
  }
  Findings::read(j, m);
  // The view draws the sample as a rows x cols grid, one cell per element of both arrays.
  if (m.sparse_sample_rows < 0) throw JsonKeyError("sparse_sample_rows", "is negative; allowed: 0 or more");
  if (m.sparse_sample_cols < 0) throw JsonKeyError("sparse_sample_cols", "is negative; allowed: 0 or more");
  const auto cells = static_cast<std::size_t>(std::int64_t{m.sparse_sample_rows} * m.sparse_sample_cols);
  check_length("sparse_sample", m.sparse_sample.size(), cells, "sparse_sample_rows x sparse_sample_cols");
  check_length("sparse_sample_kept", m.sparse_sample_kept.size(), cells, "sparse_sample_rows x sparse_sample_cols");
}

}  // namespace dlsys::quant
