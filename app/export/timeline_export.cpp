#include "app/export/timeline_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "app/export/span_colors.h"
#include "engine/json_io.h"

namespace dlsys {

namespace {
std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string timelines_to_svg(const std::vector<Timeline>& timelines, const std::string& title) {
  const double width = 1600, label_width = 120, lane_height = 28, lane_gap = 6, block_gap = 36;
  double height = 50;
  for (const auto& t : timelines) height += block_gap + t.lanes.size() * (lane_height + lane_gap);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"28\" font-size=\"20\" font-weight=\"bold\">{2}</text>\n",
      width, height, xml_escape(title));
  double y = 50;
  for (const auto& t : timelines) {
    double end = 0;
    for (const auto& s : t.spans) end = std::max(end, s.end);
    const double scale = end > 0 ? (width - label_width - 20) / end : 1;
    y += block_gap;
    svg += fmt::format("<text x=\"10\" y=\"{}\" font-size=\"15\">{} - {} ({}), makespan {:.4g} {}</text>\n", y - 10,
                       xml_escape(t.name), t.source, t.mode, end, t.time_unit);
    for (std::size_t lane = 0; lane < t.lanes.size(); ++lane) {
      const double lane_y = y + lane * (lane_height + lane_gap);
      svg += fmt::format("<text x=\"10\" y=\"{}\" font-size=\"13\">{}</text>\n", lane_y + lane_height * 0.7,
                         xml_escape(t.lanes[lane]));
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f2f2f2\"/>\n", label_width, lane_y,
                         width - label_width - 20, lane_height);
    }
    for (const auto& s : t.spans) {
      const double x0 = label_width + s.start * scale, w = std::max(0.5, (s.end - s.start) * scale);
      const double lane_y = y + s.lane * (lane_height + lane_gap);
      svg += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" stroke=\"white\" "
          "stroke-width=\"0.5\"><title>{}</title></rect>\n",
          x0, lane_y, w, lane_height, span_color_hex(s.kind, s.micro_batch), xml_escape(s.label));
      if (s.direction == 1)  // the reverse direction carries a dark band along its foot, as on screen
        svg += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"black\" "
            "fill-opacity=\"0.43\"/>\n",
            x0, lane_y + lane_height * 0.78, w, lane_height * 0.22);
      if (w > 7.0 * std::max<std::size_t>(1, s.label.size()))
        svg += fmt::format(
            "<text x=\"{:.2f}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"white\">{}</text>\n",
            x0 + w / 2, lane_y + lane_height * 0.68, xml_escape(s.label));
    }
    y += t.lanes.size() * (lane_height + lane_gap);
  }
  return svg + "</svg>\n";
}

std::string timelines_to_chrome_trace(const std::vector<Timeline>& timelines) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  int pid = 0;
  for (const auto& t : timelines) {
    const double to_us = t.time_unit == "ms" ? 1e3 : t.time_unit == "s" ? 1e6 : 1.0;
    for (std::size_t lane = 0; lane < t.lanes.size(); ++lane) {
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", pid + int(lane)},
                        {"args", {{"name", t.name + ": " + t.lanes[lane]}}}});
    }
    for (const auto& s : t.spans)
      events.push_back({{"name", s.label},
                        {"cat", s.kind},
                        {"ph", "X"},
                        {"ts", s.start * to_us},
                        {"dur", (s.end - s.start) * to_us},
                        {"pid", pid + s.lane},
                        {"tid", 0},
                        {"args", {{"micro_batch", s.micro_batch}, {"chunk", s.chunk}, {"source", t.source}}}});
    pid += static_cast<int>(t.lanes.size());
  }
  return dump_json_text(nlohmann::ordered_json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}, 1) + "\n";
}

}  // namespace dlsys
