#include "app/gui/timeline_folds.h"

#include <algorithm>
#include <map>
#include <string>

namespace dlsys::gui {

namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The median length of each kind of op in a timeline, for kinds with enough ops to tell an outlier from the rule.
std::map<std::string, double> median_by_kind(const Timeline& timeline) {
  std::map<std::string, std::vector<double>> lengths;
  for (const TimelineSpan& span : timeline.spans) lengths[span.kind].push_back(span.end - span.start);
  std::map<std::string, double> medians;
  for (auto& [kind, values] : lengths)
    if (static_cast<int>(values.size()) >= kOutlierPeers) medians[kind] = median_of(std::move(values));
  return medians;
}

// The longest stretch of [from, to) that holds no start or end of any span (`events` sorted).
TimeFold widest_quiet_stretch(const std::vector<double>& events, double from, double to) {
  TimeFold best{from, from};
  double last = from;
  for (auto it = std::upper_bound(events.begin(), events.end(), from); it != events.end() && *it < to; ++it) {
    if (*it - last > best.length()) best = {last, *it};
    last = *it;
  }
  if (to - last > best.length()) best = {last, to};
  return best;
}

}  // namespace

std::vector<TimeFold> outlier_folds(const std::vector<const Timeline*>& timelines) {
  std::vector<double> events;
  double run_end = 0;
  for (const Timeline* t : timelines)
    for (const TimelineSpan& span : t->spans) {
      events.push_back(span.start);
      events.push_back(span.end);
      run_end = std::max(run_end, span.end);
    }
  std::sort(events.begin(), events.end());
  std::vector<TimeFold> folds;
  for (const Timeline* t : timelines) {
    if (t->source != "measured") continue;
    const std::map<std::string, double> medians = median_by_kind(*t);
    for (const TimelineSpan& span : t->spans) {
      const auto median = medians.find(span.kind);
      if (median == medians.end() || median->second <= 0) continue;
      if (span.end - span.start <= kOutlierFactor * median->second) continue;
      // The span's own end is an event: the fold stops short of it, so the op is still seen to end.
      const TimeFold fold = widest_quiet_stretch(events, span.start + kKeptFactor * median->second, span.end);
      if (fold.length() >= kLeastFoldShare * run_end) folds.push_back(fold);
    }
  }
  std::sort(folds.begin(), folds.end(), [](const TimeFold& a, const TimeFold& b) { return a.start < b.start; });
  std::vector<TimeFold> merged;  // two outliers side by side on different lanes can share a quiet stretch
  for (const TimeFold& f : folds) {
    if (!merged.empty() && f.start <= merged.back().end)
      merged.back().end = std::max(merged.back().end, f.end);
    else
      merged.push_back(f);
  }
  return merged;
}

double folded_time(const std::vector<TimeFold>& folds, double t) {
  double removed = 0;
  for (const TimeFold& f : folds) {
    if (t <= f.start) break;
    removed += std::min(t, f.end) - f.start;
  }
  return t - removed;
}

Timeline folded_timeline(const Timeline& timeline, const std::vector<TimeFold>& folds) {
  Timeline out = timeline;
  for (TimelineSpan& span : out.spans) {
    span.start = folded_time(folds, span.start);
    span.end = folded_time(folds, span.end);
  }
  return out;
}

}  // namespace dlsys::gui
