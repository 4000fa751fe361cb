// The ZeRO calculator (see zero_calculator.h).
#include "lessons/zero/zero_calculator.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/errors.h"
#include "engine/units.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/zero/zero_memory.h"
#include "lessons/kvcache/gpu_specs.h"
#include "lessons/kvcache/model_config.h"
#include "lessons/kvcache/parameter_count.h"

namespace dlsys::zero_lesson {

double activation_bytes(const CalculatorInput& in) {
  if (!in.shape_known) return 0;
  const tensor::LayerShape shape{.batch = in.micro_batch, .seq = in.seq, .hidden = in.hidden, .heads = in.heads};
  return tensor::model_activation_bytes(shape, in.layers,
                                        in.checkpointing ? tensor::Recompute::Full : tensor::Recompute::None);
}

const char* activation_assumption(bool checkpointing) {
  return checkpointing
             ? "checkpointing: each layer keeps its 16-bit input, 2 s b h, and one layer at a time is "
               "recomputed in full, s b h (34 + 5 a s / h); per rank, for its own micro-batch; the formula is a GPT "
               "layer's (4h MLP)"
             : "every layer keeps s b h (34 + 5 a s / h) bytes (Korthikanti et al., 16-bit, no tensor "
               "parallelism); per rank, for its own micro-batch; the formula is a GPT layer's (4h MLP)";
}

double bytes_per_rank(const CalculatorInput& in, int stage, double ranks) {
  return zero::model_state_bytes(stage, in.parameters, ranks).total() + activation_bytes(in);
}

std::int64_t min_ranks_to_fit(const CalculatorInput& in, int stage) {
  const auto fits = [&](double n) { return bytes_per_rank(in, stage, n) <= in.gpu_bytes; };
  constexpr double kMostRanks = 1099511627776.0;  // 2^40
  if (!fits(kMostRanks)) return 0;
  double low = 1, high = kMostRanks;  // fits(high); bytes fall as N grows, so bisect to the first N that fits
  if (fits(low)) return 1;
  while (high - low > 1) {
    const double mid = std::floor((low + high) / 2);
    (fits(mid) ? high : low) = mid;
  }
  return std::int64_t(high);
}

int min_stage_to_fit(const CalculatorInput& in, double ranks) {
  for (int stage = 0; stage <= zero::kMaxStage; ++stage)
    if (bytes_per_rank(in, stage, ranks) <= in.gpu_bytes) return stage;
  return -1;
}

ZeroTheory calculate(const CalculatorInput& in, int ranks, int stage) {
  ZeroTheory t;
  t.psi_source = in.psi_source;
  t.parameters = in.parameters;
  t.ranks = ranks;
  t.stage = stage;
  t.optimizer_bytes_per_parameter = zero::kOptimizerBytes;
  const zero::ModelStateBytes states = zero::model_state_bytes(stage, in.parameters, ranks);
  t.weight_bytes_per_rank = states.weights;
  t.gradient_bytes_per_rank = states.gradients;
  t.optimizer_bytes_per_rank = states.optimizer;
  t.model_state_bytes_per_rank = states.total();
  for (int s = 0; s <= zero::kMaxStage; ++s)
    t.model_state_bytes_by_stage.push_back(zero::model_state_bytes(s, in.parameters, ranks).total());
  t.reduction_factor = zero::reduction_factor(stage, ranks);
  t.reduction_limit = zero::reduction_limit(stage, ranks);
  t.comm_elements_per_step = zero::comm_elements_per_step(stage, in.parameters);
  t.ring_comm_elements_per_step = zero::ring_comm_elements_per_step(stage, in.parameters, ranks);
  t.fp32_weight_bytes = 4 * in.parameters;
  t.activations_known = in.shape_known;
  t.layers = in.layers;
  t.hidden = in.hidden;
  t.heads = in.heads;
  t.micro_batch = in.micro_batch;
  t.seq = in.seq;
  t.checkpointing = in.checkpointing;
  t.activation_bytes_per_rank = activation_bytes(in);
  t.activation_assumption = in.shape_known ? activation_assumption(in.checkpointing)
                                           : "not counted: a bare parameter count has no shape (choose a model "
                                             "preset or a config.json to size activations)";
  t.gpu = in.gpu;
  t.gpu_bytes = in.gpu_bytes;
  t.total_bytes_per_rank = bytes_per_rank(in, stage, ranks);
  t.fits = t.total_bytes_per_rank <= in.gpu_bytes;
  t.min_ranks_to_fit = min_ranks_to_fit(in, stage);
  t.min_stage_to_fit = min_stage_to_fit(in, ranks);
  return t;
}

CalculatorInput calculator_input(const ZeroParams& p, bool read_model) {
  CalculatorInput in;
  in.micro_batch = p.micro_batch;
  in.seq = p.seq;
  in.checkpointing = p.checkpointing;
  const double gb = p.gpu_gb;
  if (gb > 0) {
    in.gpu_bytes = gb * kBytesPerGB;
    in.gpu = fmt::format("{} GB (chosen)", format_number(gb, 6));
  } else {
    const kvcache::GpuSpec* gpu = kvcache::find_gpu_spec(p.gpu);
    if (gpu == nullptr) throw BadInput("parameter 'gpu': choose a datasheet GPU, or set gpu_gb");
    in.gpu_bytes = gpu->memory_gb * kBytesPerGB;
    in.gpu = fmt::format("{}, {} GB", gpu->name, format_number(gpu->memory_gb, 6));
  }
  const std::string& config = p.config;
  const std::string& preset = p.model;
  if (!read_model || (config.empty() && preset == "none")) {
    in.parameters = p.params;
    in.psi_source = in.parameters >= 1e9 ? fmt::format("{:g}B parameters", in.parameters / 1e9)
                                         : fmt::format("{:g} parameters", in.parameters);
    return in;
  }
  const kvcache::ModelConfig model =
      config.empty() ? kvcache::load_preset(preset) : kvcache::load_model_config_file(config);
  in.parameters = double(kvcache::parameter_count(model));  // throws BadInput naming what the file lacks
  in.psi_source = fmt::format("{} {}: {} parameters, counted from its shape", config.empty() ? "preset" : "config",
                              model.name, kvcache::parameter_count(model));
  if (model.hidden > 0 && model.heads > 0) {
    in.shape_known = true;
    in.layers = model.layers;
    in.hidden = model.hidden;
    in.heads = model.heads;
  }
  return in;
}

}  // namespace dlsys::zero_lesson
