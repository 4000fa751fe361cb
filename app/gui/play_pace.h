#pragma once
// How long Play stays on a step: long enough to read its caption aloud at a lecture's pace and then look at the
// figure, so a short step does not linger and a long one is not cut off mid-sentence.
#include <string>

namespace dlsys::gui {

inline constexpr double kPlayWordsPerSecond = 2.5;  // 150 words a minute: reading along with a projected slide
inline constexpr double kPlayLookSeconds = 3.0;     // then a look at the figure
inline constexpr double kPlayLeastSeconds = 5.0;
inline constexpr double kPlayMostSeconds = 40.0;

// The seconds Play shows a step whose caption is `caption`: its words at kPlayWordsPerSecond plus kPlayLookSeconds,
// within [kPlayLeastSeconds, kPlayMostSeconds].
double play_seconds_for_caption(const std::string& caption);

}  // namespace dlsys::gui
