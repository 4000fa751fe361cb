#include "app/export/span_colors.h"

#include <fmt/format.h>

namespace dlsys {

Rgb span_color(const std::string& kind, int micro_batch) {
  // Colour-blind-safe base hues (Okabe-Ito): forward blue, backward orange, weight-gradient green, comm purple.
  Rgb base{0x99, 0x99, 0x99};
  if (kind == "F" || kind == "compute")
    base = {0x00, 0x72, 0xB2};
  else if (kind == "B")
    base = {0xD5, 0x5E, 0x00};
  else if (kind == "W")
    base = {0x00, 0x9E, 0x73};
  else if (kind == "FB")
    base = {0x8E, 0x44, 0xAD};
  else if (kind == "send" || kind == "comm" || kind == "reduce_scatter" || kind == "all_to_all")
    base = {0xCC, 0x79, 0xA7};
  else if (kind == "prefill")  // serving: a request's prompt pass, then its decode steps, then its padding
    base = {0x00, 0x72, 0xB2};
  else if (kind == "decode")
    base = {0x56, 0xB4, 0xE9};
  else if (kind == "pad")
    base = {0xDD, 0xDD, 0xDD};
  else if (kind == "all_reduce" || kind == "tp_all_reduce")
    base = {0x8E, 0x44, 0xAD};
  else if (kind == "dp_all_reduce")  // the mesh's data-parallel buckets, apart from its tensor-parallel all-reduces
    base = {0xF0, 0xE4, 0x42};
  else if (kind == "all_gather")
    base = {0x00, 0x9E, 0x73};
  else if (kind == "optimizer")
    base = {0x66, 0x66, 0x66};
  const double shade = micro_batch < 0 ? 0.0 : 0.22 * ((micro_batch % 4) / 3.0);  // 0 .. 0.22 lighter
  auto lift = [&](std::uint8_t c) { return static_cast<std::uint8_t>(c + (255 - c) * shade); };
  return {lift(base.r), lift(base.g), lift(base.b)};
}

std::string span_color_hex(const std::string& kind, int micro_batch) {
  const Rgb c = span_color(kind, micro_batch);
  return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b);
}

}  // namespace dlsys
