#pragma once
// Timelines for slides and profilers: SVG (vector, one lane per device) and Chrome trace JSON (opens in Perfetto).
#include <string>
#include <vector>

#include "engine/run_result.h"

namespace dlsys {

std::string timelines_to_svg(const std::vector<Timeline>& timelines, const std::string& title);
// One process per lane (device), one complete event ("ph":"X") per span, named by its label (F3, B3, W3).
std::string timelines_to_chrome_trace(const std::vector<Timeline>& timelines);

}  // namespace dlsys
