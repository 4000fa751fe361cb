#include "lessons/kvcache/decode_roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dlsys::kvcache {

namespace {

// FLOPs of attention for one query token over one cached token in one layer.
double attention_flops_per_layer_token(const ModelConfig& m) {
  if (m.attention == AttentionKind::Latent)
    return 2.0 * double(m.heads) * (2.0 * double(m.latent.kv_lora_rank) + double(m.latent.qk_rope_head_dim));
  return 4.0 * double(m.heads) * double(m.head_dim);
}

struct LayerSplit {
  double full = 0, windowed = 0, window = 0;
};

LayerSplit layer_split(const ModelConfig& m) {
  LayerSplit split;
  split.window = double(m.sliding_window);
  split.windowed = m.sliding_window > 0 ? double(m.window_layers) : 0.0;
  split.full = double(m.layers) - split.windowed;
  return split;
}

// Cached tokens one new token attends over, summed over layers, when each sequence holds `seq` tokens.
double attended_by_one_token(const ModelConfig& m, double seq) {
  const LayerSplit s = layer_split(m);
  return s.full * seq + s.windowed * (s.window > 0 ? std::min(seq, s.window) : seq);
}

// The same summed over a prompt of `seq` tokens, token t attending over t tokens (or the window's).
double attended_by_prompt(const ModelConfig& m, double seq) {
  const LayerSplit s = layer_split(m);
  const double all = seq * (seq + 1) / 2;
  double windowed = all;
  if (s.window > 0 && seq > s.window) windowed = s.window * (s.window + 1) / 2 + (seq - s.window) * s.window;
  return s.full * all + s.windowed * windowed;
}

// Parameters a phase reads once: all but the lookup tables and the routed experts no token of the phase reaches.
double parameters_read(const ParameterCount& p, std::int64_t experts_reached) {
  const double unreached = double(p.routed_layers) * double(p.routed_experts - experts_reached);
  return double(p.total - p.lookup_only) - unreached * double(p.routed_expert);
}

std::int64_t experts_reached(const ModelConfig& m, double tokens) {
  if (!m.experts.any()) return 0;
  const double most = tokens * double(m.experts.per_token);
  return most >= double(m.experts.routed) ? m.experts.routed : std::int64_t(most);
}

void place(PhaseCost& phase, const DecodeRoofline& roof) {
  phase.flops = phase.matmul_flops + phase.attention_flops;
  phase.bytes = phase.weight_bytes + phase.kv_bytes;
  phase.intensity = phase.flops / phase.bytes;
  if (!roof.has_gpu) return;
  phase.bound = phase.intensity < roof.ridge_flop_per_byte ? "memory-bound" : "compute-bound";
  phase.attainable_tflops = std::min(roof.gpu.peak_tflops, roof.gpu.bandwidth_tbps * phase.intensity);
  phase.roofline_seconds =
      std::max(phase.bytes / (roof.gpu.bandwidth_tbps * 1e12), phase.flops / (roof.gpu.peak_tflops * 1e12));
}

}  // namespace

DecodeRoofline decode_roofline(const SizingQuery& q, const Sizing& s, const GpuSpec* gpu) {
  DecodeRoofline r;
  const ModelConfig& m = q.model;
  if (gpu != nullptr) {
    r.has_gpu = true;
    r.gpu = *gpu;
    r.ridge_flop_per_byte = gpu->ridge_flop_per_byte();
  }
  if (!s.weights_known) {
    r.not_known = fmt::format("the config has no {}, so the weights a step reads are unknown", missing_keys_phrase(m));
    return r;
  }
  if (!s.parameters.active_known) {
    r.not_known = "the config has no num_experts_per_tok, so the work per token is unknown";
    return r;
  }
  r.known = true;
  const double batch = double(q.batch), seq = double(q.seq), weight_bytes_per_parameter = q.weights_type.bits / 8.0;
  const double per_token_matmul = 2.0 * double(s.parameters.active);
  const double attention_per_layer_token = attention_flops_per_layer_token(m);

  r.decode.experts_reached = experts_reached(m, batch);
  r.decode.matmul_flops = batch * per_token_matmul;
  r.decode.attention_flops = batch * attention_per_layer_token * attended_by_one_token(m, seq);
  r.decode.weight_bytes = parameters_read(s.parameters, r.decode.experts_reached) * weight_bytes_per_parameter;
  r.decode.kv_bytes = double(s.kv_bytes);  // read
  place(r.decode, r);
  r.weights_only_intensity = r.decode.matmul_flops / r.decode.weight_bytes;

  r.prefill.experts_reached = experts_reached(m, batch * seq);
  r.prefill.matmul_flops = batch * seq * per_token_matmul;
  r.prefill.attention_flops = batch * attention_per_layer_token * attended_by_prompt(m, seq);
  r.prefill.weight_bytes = parameters_read(s.parameters, r.prefill.experts_reached) * weight_bytes_per_parameter;
  r.prefill.kv_bytes = double(s.kv_bytes);  // written
  place(r.prefill, r);

  if (r.has_gpu) {
    // The roof in TFLOP/s: the bandwidth slope up to the ridge, flat after it, spanning both phases.
    // Powers of ten at both ends keep the axis' labels round.
    const double low = std::pow(10.0, std::floor(std::log10(std::min(0.1, r.decode.intensity / 4))));
    const double high = std::pow(10.0, std::ceil(std::log10(std::max(1e4, r.prefill.intensity * 10))));
    const double peak = r.gpu.peak_tflops, bandwidth = r.gpu.bandwidth_tbps;
    for (const double x : {low, r.ridge_flop_per_byte, high}) {
      const double y = std::min(peak, bandwidth * x);
      r.roof.push_back({x, y, y, y});
    }
  }
  return r;
}

}  // namespace dlsys::kvcache
