#pragma once
// One palette for timeline spans, shared by the GUI timeline, SVG export and figures: hue by op kind,
// lightness by micro-batch so neighbouring micro-batches can be told apart.
#include <cstdint>
#include <string>

namespace dlsys {

struct Rgb {
  std::uint8_t r, g, b;
};

Rgb span_color(const std::string& kind, int micro_batch);
std::string span_color_hex(const std::string& kind, int micro_batch);

}  // namespace dlsys
