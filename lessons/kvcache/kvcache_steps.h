#pragma once
// What the kvcache steps draw before a run: the model's sizing at the panel's values (a user's config.json is read
// here, once per change, not while drawing), prefill and a decode step on the chosen GPU's roofline, notes on how the
// config was read, and the cache against sequence length for each element width.
#include <memory>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/step_data.h"
#include "lessons/kvcache/decode_roofline.h"
#include "lessons/kvcache/kv_theory.h"
#include "lessons/kvcache/kvcache_params.h"
#include "lessons/kvcache/model_notes.h"

namespace dlsys::kvcache {

struct CacheCurve {
  std::string type_name;           // "fp16, bf16": the types of this width
  bool chosen = false;             // the panel's element type is one of them
  std::vector<SeriesPoint> bytes;  // KV bytes against sequence length (doubling), up to where 64 bits end
};

struct KvCacheSteps final : StepData {
  SizingQuery query;
  Sizing sizing;
  std::string memory_label;  // what the memory to fit is: "H100 SXM: 80 GB as sold" or "chosen: 24 GB"
  DecodeRoofline roofline;
  std::vector<ModelNote> notes;  // how the config was read
  std::vector<CacheCurve> cache_curves;
};

// Throws BadInput when the parameters (or the config file they name) cannot be sized.
std::shared_ptr<const KvCacheSteps> make_steps(const KvCacheParams& params);

}  // namespace dlsys::kvcache
