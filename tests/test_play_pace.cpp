#include <doctest/doctest.h>

#if DLSYS_HAVE_GUI
#include <string>

#include "app/gui/play_pace.h"

using dlsys::gui::play_seconds_for_caption;

TEST_CASE("Play stays on a step for its caption's words at 2.5 a second and 3 s to look, within 5 to 40 s") {
  CHECK(play_seconds_for_caption("") == doctest::Approx(5));  // a step without words: the least
  CHECK(play_seconds_for_caption("Two words") == doctest::Approx(5));
  std::string twenty;
  for (int i = 0; i < 20; ++i) twenty += "word\n ";  // line breaks and runs of spaces part words too
  CHECK(play_seconds_for_caption(twenty) == doctest::Approx(20 / 2.5 + 3));
  std::string long_caption;
  for (int i = 0; i < 500; ++i) long_caption += "word ";
  CHECK(play_seconds_for_caption(long_caption) == doctest::Approx(40));  // the most
  CHECK(play_seconds_for_caption("one two three four five six seven eight nine ten") <
        play_seconds_for_caption(twenty));
}
#endif
