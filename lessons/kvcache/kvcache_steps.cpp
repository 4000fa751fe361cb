#include "lessons/kvcache/kvcache_steps.h"

#include <algorithm>

#include "engine/errors.h"
#include "lessons/kvcache/kvcache_lesson.h"
#include "lessons/kvcache/model_notes.h"

namespace dlsys::kvcache {

namespace {

std::vector<CacheCurve> cache_curves(const SizingQuery& q) {
  std::vector<CacheCurve> curves;
  const std::int64_t end = std::max<std::int64_t>({q.seq * 2, q.model.max_positions, 1024});
  for (const auto& type : element_types()) {
    if (type.name == "bf16" || type.name == "int8") continue;  // the same sizes as fp16 and fp8
    const std::string name = type.name == "fp16" ? "fp16, bf16" : type.name == "fp8" ? "fp8, int8" : type.name;
    CacheCurve curve{name, type.bits == q.kv_type.bits, {}};
    for (std::int64_t seq = 1; seq <= end; seq *= 2) {
      SizingQuery at = q;
      at.seq = seq;
      at.kv_type = type;
      try {
        const double bytes = double(size_inference(at).kv_bytes);
        curve.bytes.push_back({double(seq), bytes, bytes, bytes});
      } catch (const BadInput&) {
        break;  // past 64 bits: the curve stops there
      }
    }
    curves.push_back(std::move(curve));
  }
  return curves;
}

}  // namespace

std::shared_ptr<const KvCacheSteps> make_steps(const KvCacheParams& params) {
  auto steps = std::make_shared<KvCacheSteps>();
  steps->query = sizing_query_of(params);
  steps->sizing = size_inference(steps->query);
  steps->memory_label = memory_to_fit(params).second;
  steps->roofline = decode_roofline(steps->query, steps->sizing, params.gpu);
  steps->notes = model_notes(steps->query.model);
  steps->cache_curves = cache_curves(steps->query);
  return steps;
}

}  // namespace dlsys::kvcache
