#include "lessons/quant/quant_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/common/seeded_fill.h"
#include "kernels/precision/float_format.h"

namespace dlsys::quant {

namespace {

constexpr int kOutlierTokens = 256;  // rows of the activation matrix the outlier step quantizes
constexpr int kSparseSampleRows = 4, kSparseSampleCols = 16;  // the corner of W2 the sparsity step draws

Series bits_series(const std::string& id, const std::string& name, const std::string& role, const std::string& y) {
  return Series{id, name, role, "bits", "", y, "", {}};
}

// Y = X W^T in double: x (tokens, k), w (n, k).
std::vector<double> product(const std::vector<float>& x, const float* w, std::int64_t tokens, std::int64_t n,
                            std::int64_t k) {
  std::vector<double> y(std::size_t(tokens * n), 0.0);
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t o = 0; o < n; ++o) {
      double sum = 0;
      for (std::int64_t i = 0; i < k; ++i) sum += double(x[std::size_t(t * k + i)]) * double(w[o * k + i]);
      y[std::size_t(t * n + o)] = sum;
    }
  return y;
}

double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : 0.0;
}

std::vector<float> dequantized(const std::vector<float>& values, std::int64_t rows, std::int64_t cols,
                               const QuantSpec& spec) {
  const QuantizedMatrix q = quantize(values.data(), rows, cols, spec);
  std::vector<float> out(values.size());
  dequantize(q, out.data());
  return out;
}

// The outlier step: real hidden activations X (tokens x 256) entering W2, one channel made `factor` times larger.
void measure_outliers(const TrainedModel& model, double factor, QuantMeasured& m, std::vector<Series>& series) {
  const std::int64_t tokens = kOutlierTokens, k = model.shape.hidden, n = model.shape.hidden;
  std::vector<float> outputs(std::size_t(tokens * model.shape.outputs)), x(std::size_t(tokens * k));
  precision::mlp_forward_fp32(model.shape, model.weights.data(), model.inputs.data(), int(tokens), outputs.data(),
                              x.data());
  // The channel that is already the largest on average, made larger: outlier features are systematic, the same few
  // dimensions in most tokens (Dettmers et al. 2022).
  int channel = 0;
  double best_mean = -1;
  for (std::int64_t c = 0; c < k; ++c) {
    double mean = 0;
    for (std::int64_t t = 0; t < tokens; ++t) mean += std::fabs(x[std::size_t(t * k + c)]);
    if (mean > best_mean) best_mean = mean, channel = int(c);
  }
  const std::vector<float> clean = x;
  for (std::int64_t t = 0; t < tokens; ++t) x[std::size_t(t * k + channel)] *= float(factor);
  m.outlier_channel = channel;
  m.outlier_factor = factor;

  Series column_max{
      "activation_column_absmax", "max |x| over the tokens, per channel", "measured", "channel", "", "max |x|", "", {}};
  std::vector<bool> split(std::size_t(k), false);
  for (std::int64_t c = 0; c < k; ++c) {
    double largest = 0;
    for (std::int64_t t = 0; t < tokens; ++t) largest = std::max(largest, double(std::fabs(x[std::size_t(t * k + c)])));
    column_max.points.push_back({double(c), largest, largest, largest});
    split[std::size_t(c)] = largest >= 6.0;  // LLM.int8()'s threshold
    m.split_columns += split[std::size_t(c)] ? 1 : 0;
    if (c == channel)
      m.outlier_absmax = largest;
    else
      m.others_absmax = std::max(m.others_absmax, largest);
  }
  series.push_back(std::move(column_max));

  const float* w = model.weights.data() + model.layout.w2;
  const std::vector<float> w_values(w, w + n * k);
  const std::vector<float> w_int8 = dequantized(w_values, n, k, {Scheme::Absmax, Granularity::Channel, 8, 64, false});
  const QuantSpec per_tensor{Scheme::Absmax, Granularity::Tensor, 8, 64, false};
  const QuantSpec per_token{Scheme::Absmax, Granularity::Channel, 8, 64, false};  // a row of X is a token
  const std::vector<double> reference_clean = product(clean, w, tokens, n, k), reference = product(x, w, tokens, n, k);
  m.err_per_tensor_clean =
      relative_error(product(dequantized(clean, tokens, k, per_tensor), w_int8.data(), tokens, n, k), reference_clean);
  m.err_per_tensor_outlier =
      relative_error(product(dequantized(x, tokens, k, per_tensor), w_int8.data(), tokens, n, k), reference);
  m.err_per_token_outlier =
      relative_error(product(dequantized(x, tokens, k, per_token), w_int8.data(), tokens, n, k), reference);

  // LLM.int8(): the columns with an |x| >= 6 in 16 bits (fp16 activations times fp16 weights), the rest per-token int8
  // times per-channel int8 weights; the two products are added.
  std::vector<float> x_int8_part = x, x_fp16_part(x.size(), 0.0f), w_fp16(w_values.size());
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t c = 0; c < k; ++c)
      if (split[std::size_t(c)]) {
        x_fp16_part[std::size_t(t * k + c)] = precision::round_to_fp16(x[std::size_t(t * k + c)]);
        x_int8_part[std::size_t(t * k + c)] = 0.0f;
      }
  for (std::size_t i = 0; i < w_values.size(); ++i) w_fp16[i] = precision::round_to_fp16(w_values[i]);
  std::vector<double> y = product(dequantized(x_int8_part, tokens, k, per_token), w_int8.data(), tokens, n, k);
  const std::vector<double> y16 = product(x_fp16_part, w_fp16.data(), tokens, n, k);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += y16[i];
  m.err_llm_int8 = relative_error(y, reference);
}

// N(0, 0.02^2) values from the seeded uniform fill (Box-Muller), the spread of a large model's weights.
std::vector<float> normal_sample(std::int64_t count, std::uint32_t seed) {
  std::vector<float> uniform(static_cast<std::size_t>(count + 1)), out(static_cast<std::size_t>(count));
  fill_seeded_uniform(uniform, seed);
  for (std::int64_t i = 0; i < count; i += 2) {
    const double u1 = (double(uniform[std::size_t(i)]) + 1.0000001) / 2.0000002;  // in (0, 1)
    const double u2 = (double(uniform[std::size_t(i + 1)]) + 1) / 2;
    const double radius = 0.02 * std::sqrt(-2 * std::log(u1)), angle = 2 * M_PI * u2;
    out[std::size_t(i)] = float(radius * std::cos(angle));
    if (i + 1 < count) out[std::size_t(i + 1)] = float(radius * std::sin(angle));
  }
  return out;
}

// Keeps, in each matrix, the half of the weights with the largest magnitudes, wherever they are.
void prune_unstructured_half(float* w, std::int64_t count) {
  std::vector<float> magnitudes(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) magnitudes[std::size_t(i)] = std::fabs(w[i]);
  std::vector<float> sorted = magnitudes;
  const std::size_t half = std::size_t(count / 2);
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(half), sorted.end());
  const float threshold = sorted[half];  // the smallest of the kept half
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < count; ++i)
    if (magnitudes[std::size_t(i)] > threshold) ++kept;
  for (std::int64_t i = 0; i < count; ++i) {
    const bool keep = magnitudes[std::size_t(i)] > threshold ||
                      (magnitudes[std::size_t(i)] == threshold && kept++ < count - std::int64_t(half));
    if (!keep) w[i] = 0.0f;
  }
}

double weights_relative_error(const TrainedModel& model, const std::vector<float>& changed) {
  double diff = 0, norm = 0;
  for (const WeightMatrix& wm : weight_matrices(model))
    for (std::int64_t i = 0; i < wm.rows * wm.cols; ++i) {
      const double a = model.weights[std::size_t(wm.offset + i)], b = changed[std::size_t(wm.offset + i)];
      diff += (a - b) * (a - b);
      norm += a * a;
    }
  return std::sqrt(diff / norm);
}

}  // namespace

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : 0.0;
}

QuantizedModel quantize_model(const TrainedModel& model, const QuantSpec& spec) {
  QuantizedModel out{model.weights, {}};
  double squared = 0, noise = 0, count = 0;
  bool uniform = true;
  for (const WeightMatrix& wm : weight_matrices(model)) {
    const float* w = model.weights.data() + wm.offset;
    const QuantizedMatrix q = quantize(w, wm.rows, wm.cols, spec);
    dequantize(q, out.weights.data() + wm.offset);
    const QuantError e = quantization_error(w, q);
    const double n = double(wm.rows * wm.cols);
    squared += e.mse * n;
    out.error.max_abs = std::max(out.error.max_abs, e.max_abs);
    if (e.uniform_noise_mse)
      noise += *e.uniform_noise_mse * n;
    else
      uniform = false;
    count += n;
  }
  out.error.mse = squared / count;
  if (uniform) out.error.uniform_noise_mse = noise / count;
  return out;
}

std::vector<float> model_outputs(const TrainedModel& model, const std::vector<float>& weights) {
  const int samples = std::min(model.samples, kOutputSamples);
  std::vector<float> y(std::size_t(samples * model.shape.outputs));
  precision::mlp_forward_fp32(model.shape, weights.data(), model.inputs.data(), samples, y.data());
  return y;
}

void measure_model_errors(const TrainedModel& model, const QuantSpec& chosen, double outlier_factor, QuantMeasured& m,
                          std::vector<Series>& series) {
  const std::vector<float> reference = model_outputs(model, model.weights);
  m.model_final_loss = model.final_loss;
  const QuantizedModel q = quantize_model(model, chosen);
  m.weight_mse = q.error.mse;
  m.uniform_noise_mse = q.error.uniform_noise_mse;
  m.output_rel_err = relative_error(model_outputs(model, q.weights), reference);

  // Error against bits, each granularity, beside D^2 / 12 for the same scales.
  for (Scheme scheme : {Scheme::Absmax, Scheme::Affine})
    for (Granularity g : {Granularity::Tensor, Granularity::Channel, Granularity::Block}) {
      const std::string key = fmt::format("{}_{}", scheme_name(scheme), granularity_name(g));
      const std::string label = g == Granularity::Block ? fmt::format("blocks of {}", chosen.block)
                                                        : fmt::format("per {}", granularity_name(g));
      Series mse = bits_series("mse_" + key, label, "measured", "weight MSE");
      Series noise = bits_series("noise_" + key, "D^2/12, " + label, "theory", "weight MSE");
      Series output = bits_series("output_err_" + key, label, "measured", "output relative error");
      for (int bits = 2; bits <= 8; ++bits) {
        const QuantizedModel at = quantize_model(model, {scheme, g, bits, chosen.block, false});
        mse.points.push_back({double(bits), at.error.mse, at.error.mse, at.error.mse});
        const double predicted = at.error.uniform_noise_mse.value_or(0);
        noise.points.push_back({double(bits), predicted, predicted, predicted});
        const double err = relative_error(model_outputs(model, at.weights), reference);
        output.points.push_back({double(bits), err, err, err});
      }
      series.push_back(std::move(mse));
      series.push_back(std::move(noise));
      series.push_back(std::move(output));
    }

  measure_outliers(model, outlier_factor, m, series);

  // 4 bits in blocks of 64: integers against NormalFloat, and NF4 with its scales double-quantized.
  const QuantizedModel int4 = quantize_model(model, {Scheme::Absmax, Granularity::Block, 4, 64, false});
  const QuantizedModel nf4 = quantize_model(model, {Scheme::Nf4, Granularity::Block, 4, 64, false});
  const QuantizedModel nf4_dq = quantize_model(model, {Scheme::Nf4, Granularity::Block, 4, 64, true});
  m.mse_int4_absmax_block = int4.error.mse;
  m.mse_nf4_block = nf4.error.mse;
  m.mse_nf4_block_double_quant = nf4_dq.error.mse;
  m.output_rel_err_int4_absmax_block = relative_error(model_outputs(model, int4.weights), reference);
  m.output_rel_err_nf4_block = relative_error(model_outputs(model, nf4.weights), reference);
  const std::vector<float> normal = normal_sample(model.shape.hidden * model.shape.hidden, 17);
  auto normal_mse = [&](const QuantSpec& spec) {
    return quantization_error(normal.data(), quantize(normal.data(), model.shape.hidden, model.shape.hidden, spec)).mse;
  };
  m.normal_mse_int4_absmax_block = normal_mse({Scheme::Absmax, Granularity::Block, 4, 64, false});
  m.normal_mse_nf4_block = normal_mse({Scheme::Nf4, Granularity::Block, 4, 64, false});
  m.normal_mse_nf4_block_double_quant = normal_mse({Scheme::Nf4, Granularity::Block, 4, 64, true});

  // 2:4 against keeping the largest half of each matrix anywhere.
  std::vector<float> sparse = model.weights, unstructured = model.weights;
  for (const WeightMatrix& wm : weight_matrices(model)) {
    const std::vector<std::uint8_t> kept = prune_2_of_4(sparse.data() + wm.offset, wm.rows, wm.cols);
    prune_unstructured_half(unstructured.data() + wm.offset, wm.rows * wm.cols);
    if (wm.offset != model.layout.w2) continue;
    m.sparse_sample_rows = int(std::min<std::int64_t>(wm.rows, kSparseSampleRows));
    m.sparse_sample_cols = int(std::min<std::int64_t>(wm.cols, kSparseSampleCols));
    for (int r = 0; r < m.sparse_sample_rows; ++r)
      for (int c = 0; c < m.sparse_sample_cols; ++c) {
        m.sparse_sample.push_back(model.weights[std::size_t(wm.offset + r * wm.cols + c)]);
        m.sparse_sample_kept.push_back(kept[std::size_t(r * wm.cols + c)]);
      }
  }
  m.sparse_2_4_weight_rel_err = weights_relative_error(model, sparse);
  m.sparse_2_4_output_rel_err = relative_error(model_outputs(model, sparse), reference);
  m.unstructured_half_weight_rel_err = weights_relative_error(model, unstructured);
  m.unstructured_half_output_rel_err = relative_error(model_outputs(model, unstructured), reference);
}

}  // namespace dlsys::quant
