// The LoRA calculator (see lora_calculator.h).
#include "lessons/lora/lora_calculator.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "kernels/lora/lora.h"
#include "kernels/tensor/activation_memory.h"
#include "lessons/kvcache/parameter_count.h"

namespace dlsys::lora_lesson {

namespace {

// The linear weights of one block, as (name, outputs, inputs). Biases are not adapted and stay in 16 bits.
std::vector<AdaptedMatrix> block_matrices(const kvcache::ModelConfig& m, Targets targets) {
  const std::int64_t q_width = m.heads * m.head_dim, kv_width = m.kv_heads * m.head_dim;
  std::vector<AdaptedMatrix> out{{"q_proj", q_width, m.hidden, m.layers, 0},
                                 {"k_proj", kv_width, m.hidden, m.layers, 0},
                                 {"v_proj", kv_width, m.hidden, m.layers, 0},
                                 {"o_proj", m.hidden, q_width, m.layers, 0}};
  if (targets == Targets::Attention) return out;
  // GPT-2's n_inner absent means 4 h, as its configuration class reads it.
  const std::int64_t width = m.intermediate > 0 ? m.intermediate : 4 * m.hidden;
  if (m.layout == kvcache::Layout::LlamaStyle) out.push_back({"gate_proj", width, m.hidden, m.layers, 0});
  out.push_back({"up_proj", width, m.hidden, m.layers, 0});
  out.push_back({"down_proj", m.hidden, width, m.layers, 0});
  return out;
}

ModelMemory memory_of(const std::string& method, double trainable, double frozen_bytes, double activations) {
  ModelMemory mm;
  mm.method = method;
  mm.trainable_parameters = trainable;
  mm.weight_bytes = frozen_bytes + kWeightBytes * trainable;
  mm.gradient_bytes = kGradientBytes * trainable;
  mm.optimizer_bytes = kOptimizerBytes * trainable;
  mm.activation_bytes = activations;
  mm.total_bytes = mm.weight_bytes + mm.gradient_bytes + mm.optimizer_bytes + mm.activation_bytes;
  return mm;
}

}  // namespace

const char* activation_note() {
  return "Activations are the base model's: every layer still runs forward and passes gradients back to the adapters "
         "below it, so LoRA and QLoRA keep what full fine-tuning keeps (Korthikanti et al., 16-bit, s b h (34 + 5 a s "
         "/ h) per layer, a GPT layer's formula), plus each adapter's r-wide hidden values.";
}

CalculatorTheory calculate(const kvcache::ModelConfig& m, const std::string& parameter, Targets targets, int r,
                           std::int64_t micro_batch, std::int64_t seq) {
  if (m.experts.any())
    throw BadInput(
        fmt::format("parameter '{}': {} is a mixture of experts; the calculator sizes dense models only "
                    "(choose a dense preset or config)",
                    parameter, m.name));
  if (m.attention == kvcache::AttentionKind::Latent)
    throw BadInput(
        fmt::format("parameter '{}': {} uses latent attention, whose projections the calculator does not "
                    "size (choose a model with q, k, v and o projections)",
                    parameter, m.name));
  if (m.hidden <= 0)
    throw BadInput(fmt::format("parameter '{}': {} does not give hidden_size, which the adapters' shapes need",
                               parameter, m.name));
  CalculatorTheory t;
  t.model = m.name;
  t.source = m.source;
  t.targets = targets == Targets::Attention ? "q,k,v,o" : "all linear";
  t.r = r;
  t.parameters = double(kvcache::parameter_count(m));  // throws BadInput naming what the file lacks
  t.layers = m.layers;
  t.hidden = m.hidden;
  t.heads = m.heads;
  t.micro_batch = micro_batch;
  t.seq = seq;
  for (const AdaptedMatrix& one : block_matrices(m, Targets::AllLinear))
    t.linear_parameters += double(one.rows) * double(one.cols) * double(one.count);
  double nf4_bytes = 0;
  for (const AdaptedMatrix& one : block_matrices(m, Targets::AllLinear))
    nf4_bytes += double(lora::nf4_double_quant_bytes(one.rows, one.cols)) * double(one.count);
  t.matrices = block_matrices(m, targets);
  for (AdaptedMatrix& one : t.matrices) {
    one.adapter_parameters = lora::lora_parameters(one.rows, one.cols, r);
    t.adapter_parameters += double(one.adapter_parameters) * double(one.count);
  }
  t.adapter_share = t.adapter_parameters / t.parameters;
  const tensor::LayerShape shape{.batch = micro_batch, .seq = seq, .hidden = m.hidden, .heads = m.heads};
  t.base_activation_bytes =
      double(m.layers) * double(tensor::korthikanti_bytes(shape, tensor::Parallelism::None).total());
  double adapters_per_layer = 0;
  for (const AdaptedMatrix& one : t.matrices) adapters_per_layer += double(one.count);
  t.adapter_activation_bytes = adapters_per_layer * 2.0 * double(seq) * double(micro_batch) * double(r);
  const double with_adapters = t.base_activation_bytes + t.adapter_activation_bytes;
  t.memory.push_back(memory_of("full", t.parameters, 0, t.base_activation_bytes));
  t.memory.push_back(memory_of("lora", t.adapter_parameters, kWeightBytes * t.parameters, with_adapters));
  t.memory.push_back(memory_of("qlora", t.adapter_parameters,
                               nf4_bytes + kWeightBytes * (t.parameters - t.linear_parameters), with_adapters));
  return t;
}

CalculatorTheory calculate(const LoraParams& p) {
  const bool from_file = !p.config.empty();
  const kvcache::ModelConfig model =
      from_file ? kvcache::load_model_config_file(p.config) : kvcache::load_preset(p.model);
  return calculate(model, from_file ? "config" : "model", p.targets, p.r, p.micro_batch, p.seq);
}

}  // namespace dlsys::lora_lesson
