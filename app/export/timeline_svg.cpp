// Timelines as SVG for slides: what the timeline widget shows, at a fixed 1600 px width, with a time axis under each
// block of lanes and a legend, so the figure reads on its own.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "app/export/span_colors.h"
#include "app/export/timeline_export.h"
#include "app/export/timeline_gaps.h"

namespace dlsys {

namespace {

constexpr double kWidth = 1600, kRightMargin = 30, kLaneHeight = 30, kLaneGap = 6;
constexpr double kLabelFont = 12, kSmallLabelFont = 9;
// DejaVu Sans averages about 0.62 em per character in these labels (digits and capitals).
constexpr double kCharEm = 0.62;

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

double text_width(const std::string& text, double font_px) { return kCharEm * font_px * double(text.size()); }

// Round steps of 1, 2 or 5 times a power of ten, about `max_ticks` of them over [0, end].
double tick_step(double end, int max_ticks) {
  const double raw = end / std::max(1, max_ticks);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  return raw / mag < 1.5 ? mag : raw / mag < 3 ? 2 * mag : raw / mag < 7 ? 5 * mag : 10 * mag;
}

std::string unit_name(const std::string& unit) { return unit == "units" ? "cost units" : unit; }

struct Present {
  bool f = false, b = false, w = false, reverse = false, later_chunk = false, bubble = false;
};

// A span's label, at the regular size where it fits, smaller where it does not, and left out where neither fits.
std::string span_label(const TimelineSpan& s, double x0, double w, double lane_y) {
  for (double font : {kLabelFont, kSmallLabelFont})
    if (text_width(s.label, font) + 4 <= w)
      return fmt::format(
          "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"{}\" text-anchor=\"middle\" fill=\"white\">{}</text>\n",
          x0 + w / 2, lane_y + kLaneHeight / 2 + font * 0.36, font, xml_escape(s.label));
  return {};
}

std::string time_axis(double plot_x0, double plot_x1, double top, double axis_y, double end, const std::string& unit) {
  const double scale = (plot_x1 - plot_x0) / end;
  std::string out = "<g class=\"axis\">\n";
  out += fmt::format("<line x1=\"{}\" y1=\"{:.2f}\" x2=\"{}\" y2=\"{:.2f}\" stroke=\"#333\" stroke-width=\"1\"/>\n",
                     plot_x0, axis_y, plot_x1, axis_y);
  const double step = tick_step(end, static_cast<int>((plot_x1 - plot_x0) / 110));
  for (double t = 0; t <= end * (1 + 1e-9); t += step) {
    const double x = plot_x0 + t * scale;
    out += fmt::format(
        "<line x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{0:.2f}\" y2=\"{2:.2f}\" stroke=\"#d0d0d0\" stroke-width=\"0.6\"/>\n"
        "<line x1=\"{0:.2f}\" y1=\"{2:.2f}\" x2=\"{0:.2f}\" y2=\"{3:.2f}\" stroke=\"#333\" stroke-width=\"1\"/>\n"
        "<text x=\"{0:.2f}\" y=\"{4:.2f}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">{5:g}</text>\n",
        x, top, axis_y, axis_y + 5, axis_y + 19, t);
  }
  out += fmt::format(
      "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"13\" text-anchor=\"middle\" fill=\"#333\">time ({})</text>\n",
      (plot_x0 + plot_x1) / 2, axis_y + 36, xml_escape(unit_name(unit)));
  return out + "</g>\n";
}

std::string legend(const Present& p, double x, double y) {
  struct Entry {
    std::string fill, text;
    bool reverse_band = false, chunk_band = false;
  };
  std::vector<Entry> entries;
  if (p.f) entries.push_back({span_color_hex("F", 0), "F: forward"});
  if (p.b)
    entries.push_back({span_color_hex("B", 0), p.w ? "B: backward (input gradient where a W follows)" : "B: backward"});
  if (p.w) entries.push_back({span_color_hex("W", 0), "W: weight gradient (deferred)"});
  if (p.reverse)
    entries.push_back({span_color_hex("F", 0), "dark foot: reverse direction (entered at the last device)", true});
  if (p.later_chunk)
    entries.push_back({span_color_hex("F", 0), "light top: the micro-batch's later chunk (b)", false, true});
  if (p.bubble) entries.push_back({"url(#bubble)", "bubble: idle"});
  std::string out = "<g class=\"legend\">\n";
  for (const Entry& e : entries) {
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"26\" height=\"16\" fill=\"{}\" stroke=\"#888\" "
        "stroke-width=\"0.5\"/>\n",
        x, y - 12, e.fill);
    if (e.chunk_band)
      out += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"26\" height=\"4\" fill=\"white\" fill-opacity=\"0.45\"/>\n", x,
          y - 12);
    if (e.reverse_band)
      out += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"26\" height=\"4\" fill=\"black\" fill-opacity=\"0.43\"/>\n", x, y);
    out +=
        fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"13\">{}</text>\n", x + 32, y + 1, xml_escape(e.text));
    x += 32 + 0.9 * text_width(e.text, 13) + 24;  // lower-case text runs narrower than the labels' estimate
  }
  return out + "</g>\n";
}

}  // namespace

std::string timeline_export_title(const std::vector<Timeline>& timelines) {
  for (const Timeline& t : timelines)
    if (t.source == "measured") return t.name + " beside its theory";
  if (timelines.empty()) return "no timeline";
  return timelines.front().name + ": simulated from the parameters, no run";
}

std::string timeline_export_subtitle(const std::string& lesson_title, const Provenance* measured_on) {
  if (measured_on == nullptr) return lesson_title + ": theory only, simulated from the parameters (time in cost units)";
  return fmt::format("{}: measured on the {} backend ({}{}), theory in cost units", lesson_title, measured_on->kind,
                     measured_on->device, measured_on->emulated ? ", stages emulated" : "");
}

std::string timelines_to_svg(const std::vector<Timeline>& timelines, const std::string& title,
                             const std::string& subtitle) {
  double label_width = 90;
  for (const auto& t : timelines)
    for (const auto& lane : t.lanes) label_width = std::max(label_width, text_width(lane, 13) + 24);
  const double plot_x0 = label_width, plot_x1 = kWidth - kRightMargin;
  Present present;
  std::string body;
  double y = 72;
  for (const auto& t : timelines) {
    const double end = std::max(timeline_end(t), 1e-12);
    const double scale = (plot_x1 - plot_x0) / end;
    y += 30;
    body += fmt::format("<text x=\"10\" y=\"{:.2f}\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", y - 10,
                        xml_escape(t.name));
    body += fmt::format(
        "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"13\" text-anchor=\"end\" fill=\"#444\">{}, {}: "
        "makespan {:.4g} {}</text>\n",
        plot_x1, y - 10, xml_escape(t.source), xml_escape(t.mode), end, xml_escape(unit_name(t.time_unit)));
    const double top = y;
    for (std::size_t lane = 0; lane < t.lanes.size(); ++lane) {
      const double lane_y = y + lane * (kLaneHeight + kLaneGap);
      body += fmt::format("<text x=\"10\" y=\"{:.2f}\" font-size=\"13\">{}</text>\n", lane_y + kLaneHeight * 0.65,
                          xml_escape(t.lanes[lane]));
      body += fmt::format("<rect x=\"{}\" y=\"{:.2f}\" width=\"{}\" height=\"{}\" fill=\"#f2f2f2\"/>\n", plot_x0,
                          lane_y, plot_x1 - plot_x0, kLaneHeight);
    }
    const double axis_y = y + t.lanes.size() * (kLaneHeight + kLaneGap);
    body += time_axis(plot_x0, plot_x1, top, axis_y, end, t.time_unit);
    // The idle time of each lane, hatched and labelled where it is wide enough.
    const auto order = spans_by_lane(t);
    for (int lane = 0; lane < static_cast<int>(t.lanes.size()); ++lane)
      for (const IdleGap& g : lane_idle_gaps(t.spans, order[lane], lane, end, end * 1e-4)) {
        present.bubble = true;
        const double x0 = plot_x0 + g.start * scale, w = (g.end - g.start) * scale;
        const double lane_y = y + lane * (kLaneHeight + kLaneGap);
        body += fmt::format(
            "<rect class=\"bubble\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{}\" fill=\"url(#bubble)\"/>\n",
            x0, lane_y, w, kLaneHeight);
        if (text_width("bubble", 11) + 6 <= w)
          body += fmt::format(
              "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"11\" text-anchor=\"middle\" "
              "fill=\"#7a4a12\">bubble</text>\n",
              x0 + w / 2, lane_y + kLaneHeight / 2 + 4);
      }
    for (const auto& s : t.spans) {
      const double x0 = plot_x0 + s.start * scale, w = std::max(0.5, (s.end - s.start) * scale);
      const double lane_y = y + s.lane * (kLaneHeight + kLaneGap);
      present.f = present.f || s.kind == "F";
      present.b = present.b || s.kind == "B";
      present.w = present.w || s.kind == "W";
      body += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" stroke=\"white\" "
          "stroke-width=\"0.5\"><title>{}</title></rect>\n",
          x0, lane_y, w, kLaneHeight, span_color_hex(s.kind, s.micro_batch), xml_escape(s.label));
      if (s.direction == 1) {  // the reverse direction carries a dark band along its foot, as on screen
        present.reverse = true;
        body += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"black\" "
            "fill-opacity=\"0.43\"/>\n",
            x0, lane_y + kLaneHeight * 0.78, w, kLaneHeight * 0.22);
      }
      if (s.chunk > 0 && s.chunk != s.direction) {  // a later chunk of a micro-batch that passes a device twice
        present.later_chunk = true;
        body += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"white\" "
            "fill-opacity=\"0.45\"/>\n",
            x0, lane_y, w, kLaneHeight * 0.22);
      }
      body += span_label(s, x0, w, lane_y);
    }
    y = axis_y + 48;
  }
  body += legend(present, 10, y + 8);
  const double height = y + 30;
  return fmt::format(
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
             "font-family=\"DejaVu Sans, sans-serif\">\n"
             "<defs><pattern id=\"bubble\" width=\"7\" height=\"7\" patternUnits=\"userSpaceOnUse\" "
             "patternTransform=\"rotate(45)\"><rect width=\"7\" height=\"7\" fill=\"#fdf1e2\"/>"
             "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"7\" stroke=\"#e0a867\" stroke-width=\"2\"/></pattern></defs>\n"
             "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
             "<text class=\"title\" x=\"10\" y=\"32\" font-size=\"22\" font-weight=\"bold\">{2}</text>\n"
             "<text class=\"subtitle\" x=\"10\" y=\"56\" font-size=\"14\" fill=\"#444\">{3}</text>\n",
             kWidth, height, xml_escape(title), xml_escape(subtitle)) +
         body + "</svg>\n";
}

}  // namespace dlsys
