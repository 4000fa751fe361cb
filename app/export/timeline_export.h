#pragma once
// Timelines for slides and profilers: SVG (vector, one lane per device, with a time axis, a legend and the idle time
// shaded as bubble) and Chrome trace JSON (opens in Perfetto: one process per timeline, one thread per lane).
#include <string>
#include <vector>

#include "engine/run_result.h"

namespace dlsys {

// A title that says what the timelines are: "<measured timeline> beside its theory" when a measured one is among
// them, else "<first timeline>: theory, simulated from the parameters (no run)".
std::string timeline_export_title(const std::vector<Timeline>& timelines);
// The line under it: the lesson, and where the measurement ran (nullptr: theory only, no run).
std::string timeline_export_subtitle(const std::string& lesson_title, const Provenance* measured_on);

// Every timeline stacked, each with its own time axis (theory in cost units, measured in us); the legend lists the
// op kinds present, the reverse-direction band and the bubble.
std::string timelines_to_svg(const std::vector<Timeline>& timelines, const std::string& title,
                             const std::string& subtitle);

// One process per timeline (named and sorted in order), one thread per lane ("device 0", ... sorted by lane), one
// complete event ("ph":"X") per span named by its label (F3, B3, W3). Timelines in cost units are drawn in the time
// scale of the measured one beside them (their makespans matched, the scale in the process name), or with 1 unit
// as 1 ms when there is none.
std::string timelines_to_chrome_trace(const std::vector<Timeline>& timelines);

}  // namespace dlsys
