#include "lessons/quant/quant_spec.h"

#include <fmt/format.h>

namespace dlsys::quant {

QuantSpec spec_from_params(const ParamValues& p) {
  QuantSpec spec;
  spec.scheme = find_scheme(p.text("scheme")).value_or(Scheme::Absmax);
  spec.granularity = find_granularity(p.text("granularity")).value_or(Granularity::Channel);
  spec.bits = int(p.integer("bits"));
  spec.block = int(p.integer("block"));
  spec.double_quant = p.text("double_quant") == "on";
  return spec;
}

std::string spec_description(const QuantSpec& s) {
  const std::string where = s.granularity == Granularity::Block
                                ? fmt::format("blocks of {}", s.block)
                                : fmt::format("per {}", granularity_name(s.granularity));
  const std::string double_quant = s.double_quant ? ", double-quantized" : "";
  if (s.scheme == Scheme::Nf4) return fmt::format("nf4, {}{}", where, double_quant);
  return fmt::format("int{} {}, {}{}", s.bits, scheme_name(s.scheme), where, double_quant);
}

}  // namespace dlsys::quant
