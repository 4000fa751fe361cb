// config.json as a user hands it to the KV-cache lesson: any bytes must parse or end in BadInput.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/errors.h"
#include "lessons/kvcache/kv_theory.h"
#include "lessons/kvcache/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dlsys;
  try {
    const auto model = kvcache::parse_model_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    kvcache::SizingQuery query;
    query.model = model;
    query.kv_type = kvcache::find_element_type("fp16", "dtype");
    query.weights_type = query.kv_type;
    query.seq = 8192;
    query.gpu_bytes = 80'000'000'000;
    kvcache::size_inference(query);
  } catch (const BadInput&) {
  }
  return 0;
}
