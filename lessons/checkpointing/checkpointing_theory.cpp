// The checkpointing lesson's closed forms, its steps' pictures and curves, and the real model's calculator.
#include <fmt/format.h>

#include <cmath>

#include "engine/errors.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/training/checkpointed_step.h"
#include "lessons/checkpointing/checkpointing_steps.h"
#include "lessons/kvcache/model_config.h"

namespace dlsys::checkpointing {

namespace {

std::vector<int> divisors_of(int n) {
  std::vector<int> out;
  for (int k = 1; k <= n; ++k)
    if (n % k == 0) out.push_back(k);
  return out;
}

void add_point(Series& s, double x, double y) { s.points.push_back({x, y, y, y}); }

// What each layer keeps in a checkpointed step while segment `rebuilt` is rebuilt (-1: at the end of the forward).
KeptPicture checkpointed_picture(const CheckpointingTheory& t, int rebuilt) {
  KeptPicture p;
  const int k = t.segment_layers;
  p.layers.assign(std::size_t(t.layers), Kept::Nothing);
  const int live_segments = rebuilt < 0 ? t.segments : rebuilt + 1;
  for (int s = 0; s < live_segments; ++s) p.layers[std::size_t(s * k)] = Kept::Boundary;
  p.rebuilt_segment = rebuilt;
  p.output_kept = rebuilt < 0;
  p.bytes = live_segments * t.boundary_bytes + (p.output_kept ? t.boundary_bytes : 0);
  if (rebuilt >= 0) {
    for (int layer = rebuilt * k; layer < (rebuilt + 1) * k; ++layer) p.layers[std::size_t(layer)] = Kept::Everything;
    p.bytes = live_segments * t.boundary_bytes + k * t.layer_bytes;  // the segment's first input is its boundary
    p.title = fmt::format("backward, segment {} (layers {}-{}) rebuilt from its checkpoint", rebuilt, rebuilt * k,
                          (rebuilt + 1) * k - 1);
  } else {
    p.title = fmt::format("checkpoint every k = {}: end of the forward pass", k);
  }
  return p;
}

}  // namespace

Series series_over_k(std::string role, std::string id, std::string name, std::string y_label, std::string y_unit) {
  return {std::move(id),
          std::move(name),
          std::move(role),
          "k (layers per segment)",
          "",
          std::move(y_label),
          std::move(y_unit),
          {}};
}

CheckpointingTheory stack_theory(const CheckpointingParams& p) {
  CheckpointingTheory t;
  const training::StackShape shape = p.shape();
  t.layers = p.layers;
  t.segment_layers = p.segment_layers;
  t.segments = p.layers / p.segment_layers;
  t.width = p.width;
  t.expansion = p.expansion;
  t.rows = p.rows;
  t.boundary_bytes = 4 * std::int64_t(p.rows) * p.width;
  t.layer_bytes = t.boundary_bytes * (1 + p.expansion);
  t.keep_all_peak_bytes = training::step_activation_peak_bytes(shape, p.rows, training::kKeepEverything);
  t.checkpointed_peak_bytes = training::step_activation_peak_bytes(shape, p.rows, p.segment_layers);
  t.memory_saving = 1.0 - double(t.checkpointed_peak_bytes) / double(t.keep_all_peak_bytes);
  t.best_k_real = std::sqrt(double(p.layers) / (1 + p.expansion));
  t.chen_best_k = std::sqrt(double(p.layers));
  t.divisors = divisors_of(p.layers);
  t.best_k_peak_bytes = t.keep_all_peak_bytes + 1;
  for (int k : t.divisors) {
    const std::int64_t peak = training::step_activation_peak_bytes(shape, p.rows, k);
    if (peak < t.best_k_peak_bytes) {
      t.best_k_peak_bytes = peak;
      t.best_k = k;
    }
  }
  t.forward_flop = 4.0 * p.rows * double(p.width) * double(shape.inner()) * p.layers;  // two GEMMs, 2 FLOP a MAC
  t.backward_flop = 2 * t.forward_flop;
  t.recompute_flop = t.forward_flop;
  t.time_ratio = (t.forward_flop + t.recompute_flop + t.backward_flop) / (t.forward_flop + t.backward_flop);
  return t;
}

CalculatorTheory calculator_theory(const std::string& model, std::int64_t layers, std::int64_t hidden,
                                   std::int64_t heads, std::int64_t seq, std::int64_t micro_batch) {
  CalculatorTheory c;
  c.model = model;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.seq = seq;
  c.micro_batch = micro_batch;
  const tensor::LayerShape shape{.batch = micro_batch, .seq = seq, .hidden = hidden, .heads = heads};
  c.layer_bytes_none = tensor::model_activation_bytes(shape, 1, tensor::Recompute::None);
  c.layer_bytes_selective = tensor::model_activation_bytes(shape, 1, tensor::Recompute::Selective);
  c.bytes_none = tensor::model_activation_bytes(shape, layers, tensor::Recompute::None);
  c.bytes_selective = tensor::model_activation_bytes(shape, layers, tensor::Recompute::Selective);
  c.bytes_full = tensor::model_activation_bytes(shape, layers, tensor::Recompute::Full);
  c.selective_saving = 1.0 - c.bytes_selective / c.bytes_none;
  c.full_saving = 1.0 - c.bytes_full / c.bytes_none;
  return c;
}

CalculatorTheory calculator_of(const CheckpointingParams& p) {
  const kvcache::ModelConfig model =
      p.config.empty() ? kvcache::load_preset(p.model) : kvcache::load_model_config_file(p.config);
  if (model.hidden <= 0 || model.heads <= 0 || model.layers <= 0)
    throw BadInput(
        fmt::format("parameter '{}': {} does not give hidden_size, num_attention_heads and "
                    "num_hidden_layers, which the activations are sized from",
                    p.config.empty() ? "model" : "config", model.name));
  return calculator_theory(model.name, model.layers, model.hidden, model.heads, p.seq, p.micro_batch);
}

std::shared_ptr<const CheckpointingSteps> make_steps(const CheckpointingParams& p, const CheckpointingTheory& t) {
  auto steps = std::make_shared<CheckpointingSteps>();
  steps->theory = t;
  steps->keep_all.title = "keep everything: end of the forward pass";
  steps->keep_all.layers.assign(std::size_t(t.layers), Kept::Everything);
  steps->keep_all.output_kept = true;
  steps->keep_all.bytes = t.keep_all_peak_bytes;
  steps->after_forward = checkpointed_picture(t, -1);
  for (int s = t.segments - 1; s >= 0; --s) steps->backward.push_back(checkpointed_picture(t, s));
  const training::StackShape shape = p.shape();
  steps->peak_formula =
      series_over_k("theory", "peak_formula", "L/k + (1 + e) k checkpoints (formula)", "peak activations", "B");
  steps->keep_all_line = series_over_k("theory", "keep_all", "keep everything (formula)", "peak activations", "B");
  steps->time_formula = series_over_k("theory", "time_formula", "one extra forward: 4/3", "step time / plain step", "");
  for (int k : t.divisors) {
    add_point(steps->peak_formula, k, double(training::step_activation_peak_bytes(shape, p.rows, k)));
    add_point(steps->time_formula, k, t.time_ratio);
  }
  steps->chen_curve = series_over_k("theory", "chen_curve", "if a checkpoint were a whole layer: (L/k + k) layers",
                                    "peak activations", "B");
  for (int i = 0; i <= 200; ++i) {
    const double k = 1 + (t.layers - 1) * i / 200.0;
    add_point(steps->chen_curve, k, double(t.layer_bytes) * (t.layers / k + k));
  }
  add_point(steps->keep_all_line, 1, double(t.keep_all_peak_bytes));
  add_point(steps->keep_all_line, t.layers, double(t.keep_all_peak_bytes));
  steps->gpt3 = calculator_theory("GPT-3 175B (Korthikanti et al.)", 96, 12288, 96, 2048, 1);
  return steps;
}

}  // namespace dlsys::checkpointing
