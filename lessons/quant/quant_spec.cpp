#include "lessons/quant/quant_spec.h"

#include <fmt/format.h>

namespace dlsys::quant {

std::string spec_description(const QuantSpec& s) {
  const std::string where = s.granularity == Granularity::Block
                                ? fmt::format("blocks of {}", s.block)
                                : fmt::format("per {}", granularity_name(s.granularity));
  const std::string double_quant = s.double_quant ? ", double-quantized" : "";
  if (s.scheme == Scheme::Nf4) return fmt::format("nf4, {}{}", where, double_quant);
  return fmt::format("int{} {}, {}{}", s.bits, scheme_name(s.scheme), where, double_quant);
}

}  // namespace dlsys::quant
