#pragma once
// Measured timelines meet the odd op that took many times its usual length (the OS took the core, a page fault):
// drawn to scale it stretches the axis and squeezes every other op into slivers. Such an op is drawn short instead:
// the stretch of time inside it where nothing else starts or ends is folded out of the axis, and the fold is marked
// with the time it holds, so the bulk of the run keeps the width and the outlier's true length is still said.
#include <vector>

#include "engine/run_result.h"

namespace dlsys::gui {

// A stretch of time taken out of the axis: [start, end) in the timeline's unit.
struct TimeFold {
  double start = 0;
  double end = 0;
  double length() const { return end - start; }
};

// An op is an outlier when it lasts more than `kOutlierFactor` times the median of its kind (a kind with at least
// `kOutlierPeers` ops); it is then drawn `kKeptFactor` medians long. A fold shorter than `kLeastFoldShare` of the run
// is not worth a break in the axis.
inline constexpr double kOutlierFactor = 4.0;
inline constexpr int kOutlierPeers = 4;
inline constexpr double kKeptFactor = 2.0;
inline constexpr double kLeastFoldShare = 0.05;

// The folds for timelines drawn on one time axis: outliers are found in the measured ones (`source` "measured");
// the spans of all of them bound the folds, so no start or end of any span is hidden. Sorted, not overlapping.
std::vector<TimeFold> outlier_folds(const std::vector<const Timeline*>& timelines);
// Where time `t` lies on the folded axis: `t` less the folded time before it (a time inside a fold maps to its start).
double folded_time(const std::vector<TimeFold>& folds, double t);
// A copy of `timeline` with every span's start and end on the folded axis (same spans, same order).
Timeline folded_timeline(const Timeline& timeline, const std::vector<TimeFold>& folds);

}  // namespace dlsys::gui
