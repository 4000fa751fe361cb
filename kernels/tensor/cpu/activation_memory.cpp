#include "kernels/tensor/activation_memory.h"

namespace dlsys::tensor {

namespace {

std::int64_t token_bytes(const LayerShape& s) { return s.seq * s.batch * s.hidden; }            // s b h
std::int64_t score_elements(const LayerShape& s) { return s.heads * s.seq * s.seq * s.batch; }  // a s^2 b

}  // namespace

ActivationBytes korthikanti_bytes(const LayerShape& s, Parallelism parallelism) {
  const std::int64_t sbh = token_bytes(s), scores = score_elements(s), t = s.ranks;
  switch (parallelism) {
    case Parallelism::None:
      return {.replicated = 34 * sbh, .split = 0, .scores = 5 * scores};
    case Parallelism::Tensor:
      return {.replicated = 10 * sbh, .split = 24 * sbh / t, .scores = 5 * scores / t};
    case Parallelism::TensorSequence:
      return {.replicated = 0, .split = 34 * sbh / t, .scores = 5 * scores / t};
  }
  return {};
}

ActivationBytes lab_layer_bytes(const LayerShape& s) {
  const std::int64_t sbh = token_bytes(s), scores = score_elements(s), t = s.ranks;
  if (s.sequence_parallel) return {.replicated = 0, .split = (18 + 48) * sbh / t, .scores = 9 * scores / t};
  return {.replicated = 18 * sbh, .split = 48 * sbh / t, .scores = 9 * scores / t};
}

double model_activation_bytes(const LayerShape& s, std::int64_t layers, Recompute recompute) {
  const Parallelism parallelism = s.ranks <= 1          ? Parallelism::None
                                  : s.sequence_parallel ? Parallelism::TensorSequence
                                                        : Parallelism::Tensor;
  const ActivationBytes layer = korthikanti_bytes(s, parallelism);
  const std::int64_t input_bytes = 2 * token_bytes(s) / (parallelism == Parallelism::TensorSequence ? s.ranks : 1);
  switch (recompute) {
    case Recompute::None:
      return double(layers) * double(layer.total());
    case Recompute::Selective:  // the scores' part is rebuilt
      return double(layers) * double(layer.replicated + layer.split);
    case Recompute::Full:
      return double(layers) * double(input_bytes) + double(layer.total());
  }
  return 0;
}

const char* korthikanti_formula(Parallelism parallelism) {
  switch (parallelism) {
    case Parallelism::None:
      return "s b h (34 + 5 a s / h)";
    case Parallelism::Tensor:
      return "s b h (10 + 24/t + 5 a s / (h t))";
    case Parallelism::TensorSequence:
      return "s b h (34/t + 5 a s / (h t))";
  }
  return "";
}

}  // namespace dlsys::tensor
