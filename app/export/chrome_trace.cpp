// Timelines as Chrome trace JSON (the Trace Event Format that Perfetto and chrome://tracing open): one process per
// timeline and one thread per lane, named and sorted with metadata events, so theory and measurement sit side by side.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "app/export/timeline_export.h"
#include "app/export/timeline_gaps.h"
#include "engine/json_io.h"

namespace dlsys {

namespace {

using json = nlohmann::ordered_json;

// Microseconds per unit of a real time unit; 0 for cost units, which have no duration of their own.
double us_per(const std::string& unit) {
  if (unit == "us") return 1.0;
  if (unit == "ms") return 1e3;
  if (unit == "s") return 1e6;
  if (unit == "ns") return 1e-3;
  return 0.0;
}

// The makespan (us) that cost-unit timelines are stretched to: the first measured timeline's, else the first one in a
// real time unit; 0 when there is none.
double reference_makespan_us(const std::vector<Timeline>& timelines) {
  const Timeline* reference = nullptr;
  for (const Timeline& t : timelines)
    if (us_per(t.time_unit) > 0 &&
        (reference == nullptr || (t.source == "measured" && reference->source != "measured")))
      reference = &t;
  return reference == nullptr ? 0.0 : timeline_end(*reference) * us_per(reference->time_unit);
}

json metadata(const char* name, int pid, int tid, json args) {
  json e{{"name", name}, {"ph", "M"}, {"pid", pid}};
  if (tid >= 0) e["tid"] = tid;
  e["args"] = std::move(args);
  return e;
}

}  // namespace

std::string timelines_to_chrome_trace(const std::vector<Timeline>& timelines) {
  json events = json::array();
  const double reference_us = reference_makespan_us(timelines);
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    const Timeline& t = timelines[i];
    const int pid = static_cast<int>(i) + 1;
    double to_us = us_per(t.time_unit);
    std::string name = t.name;
    if (to_us == 0) {
      const double end = timeline_end(t);
      if (reference_us > 0 && end > 0) {
        to_us = reference_us / end;
        name += fmt::format(" [cost units stretched to the measured makespan: 1 unit = {:.4g} us]", to_us);
      } else {
        to_us = 1e3;
        name += " [cost units: 1 unit drawn as 1 ms]";
      }
    }
    events.push_back(metadata("process_name", pid, -1, {{"name", name}}));
    events.push_back(metadata("process_sort_index", pid, -1, {{"sort_index", static_cast<int>(i)}}));
    events.push_back(metadata("process_labels", pid, -1, {{"labels", t.source + ", " + t.mode}}));
    for (std::size_t lane = 0; lane < t.lanes.size(); ++lane) {
      const int tid = static_cast<int>(lane) + 1;
      events.push_back(metadata("thread_name", pid, tid, {{"name", t.lanes[lane]}}));
      events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", static_cast<int>(lane)}}));
    }
    for (const auto& s : t.spans)
      events.push_back({{"name", s.label},
                        {"cat", s.kind},
                        {"ph", "X"},
                        {"ts", s.start * to_us},
                        {"dur", (s.end - s.start) * to_us},
                        {"pid", pid},
                        {"tid", s.lane + 1},
                        {"args",
                         {{"micro_batch", s.micro_batch},
                          {"chunk", s.chunk},
                          {"direction", s.direction},
                          {"source", t.source},
                          {"mode", t.mode},
                          {"start", s.start},
                          {"end", s.end},
                          {"time_unit", t.time_unit}}}});
  }
  return dump_json_text(json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}, 1) + "\n";
}

}  // namespace dlsys
