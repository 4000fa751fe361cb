#pragma once
// Where prefill and one decode step sit on a GPU's roofline (the roofline of Williams et al., CACM 2009): FLOPs over
// the bytes moved from memory, against the ridge point peak FLOP/s / bandwidth. Below the ridge a step waits on memory;
// above it, on arithmetic.
//
// A decode step of the whole batch at the panel's length (every sequence holds `seq` tokens):
//   FLOPs = batch x (2 x active parameters + attention over the cached tokens)
//   bytes = the weights the step reads + the batch's whole KV cache
// 2 FLOPs (a multiply and an add) per weight a token meets; norms, biases, softmax and activations are left out
// (well under 1 % of the total). Attention per token and layer over T cached tokens: standard 4 x heads x head_dim x
// T (scores and weighted values); latent, computed on the latent as its kernels do, 2 x heads x (2 x kv_lora_rank +
// qk_rope_head_dim) x T. The input embedding table is not streamed (a lookup reads one row per token).
// For a mixture of experts the step reads the experts its tokens reach, at most min(experts, batch x
// experts per token) per routed layer; the figure takes that most, so its intensity is a lower bound.
// Prefill of the prompt: the same with every token of every sequence at once, and the cache written.
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/kvcache/gpu_specs.h"
#include "lessons/kvcache/kv_theory.h"

namespace dlsys::kvcache {

struct PhaseCost {
  double matmul_flops = 0, attention_flops = 0, flops = 0;
  double weight_bytes = 0, kv_bytes = 0, bytes = 0;
  double intensity = 0;              // FLOP per byte
  std::string bound;                 // "memory-bound", "compute-bound", or empty without a GPU's figures
  double roofline_seconds = 0;       // max(bytes / bandwidth, FLOPs / peak); 0 without a GPU's figures
  double attainable_tflops = 0;      // min(peak, bandwidth x intensity): where the phase sits on the roof
  std::int64_t experts_reached = 0;  // routed experts per routed layer the phase reads (0 for a dense model)
};

struct DecodeRoofline {
  bool known = false;     // needs the weights and, for a mixture of experts, num_experts_per_tok
  std::string not_known;  // why not, in words
  PhaseCost decode, prefill;
  double weights_only_intensity = 0;  // decode's matmul FLOPs / its weight bytes: about the batch for 16-bit weights
  bool has_gpu = false;               // a datasheet GPU is chosen (not this machine)
  GpuSpec gpu;
  double ridge_flop_per_byte = 0;
  std::vector<SeriesPoint> roof;  // attainable TFLOP/s against FLOP/byte, for a log-log plot
};

DecodeRoofline decode_roofline(const SizingQuery& query, const Sizing& sizing, const GpuSpec* gpu);

}  // namespace dlsys::kvcache
