#pragma once
// The kvcache lesson's parameters as read once from the checked values (the specs are in kvcache_lesson.cpp).
#include <cstdint>
#include <string>

#include "kernels/decoder/shape.h"
#include "lessons/kvcache/gpu_specs.h"
#include "lessons/kvcache/kv_theory.h"

namespace dlsys::kvcache {

struct KvCacheParams {
  // The model to size: the preset `model`, or the config.json at `config` when set. Both stay names here: the file is
  // read where the sizing needs it (model_of), so a recorded run's parameters still read where the file is gone.
  std::string model;
  std::string config;                 // empty: the preset
  ElementType kv_type, weights_type;  // dtype, weights_dtype
  std::int64_t batch = 0;             // sequences decoded together
  std::int64_t seq = 0;               // tokens per sequence
  std::int64_t block_tokens = 0;      // paged cache: tokens per block
  const GpuSpec* gpu = nullptr;       // the datasheet GPU; nullptr for this machine
  double gpu_gb = 0;                  // GB = 1e9 bytes; 0: the chosen GPU's memory
  double workspace_gb = 0;
  // The live decoder, timed on the CPU with and without its cache.
  decoder::Shape live;
  std::int64_t tokens = 0;
  int repeats = 0;
  int threads = 0;         // OpenBLAS threads
  double max_minutes = 0;  // the run's limit
};

}  // namespace dlsys::kvcache
