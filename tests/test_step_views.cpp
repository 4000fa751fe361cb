// Every step of every lesson has its own view, keyed by the step id in the lesson text, and every view belongs to a
// step: a step added to a text without a view (or a view left behind) fails here, not on a student's screen.
#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "lessons/common/lesson_text.h"
#include "lessons/registry.h"

#if DLSYS_HAVE_GUI
#include <string>
#include <type_traits>
#include <vector>

#include "app/views/view.h"
#include "lessons/registry.h"

using namespace dlsys;

TEST_CASE("each lesson's step views match its text's steps, id by id and in order") {
  for (const Lesson* lesson : all_lessons()) {
    CAPTURE(lesson->id());
    const gui::StepViews* views = gui::find_step_views(lesson->id());
    REQUIRE(views != nullptr);
    std::vector<std::string> text_ids, view_ids;
    for (const LessonStep& step : lesson->text().steps) text_ids.push_back(step.id);
    for (const gui::StepViewEntry& entry : *views) {
      view_ids.push_back(entry.step_id);
      CHECK(static_cast<bool>(entry.draw));
    }
    CHECK(view_ids == text_ids);
  }
}

namespace {
// Whether a view could read the parameter panel's values by key through its context.
template <class Context, class = void>
struct HasPanelParams : std::false_type {};
template <class Context>
struct HasPanelParams<Context, std::void_t<decltype(std::declval<Context>().params)>> : std::true_type {};
}  // namespace

TEST_CASE("views get their lesson's typed step data and the run, not the panel's parameters by key") {
  CHECK_FALSE(HasPanelParams<gui::ViewContext>::value);
}

#endif  // the views exist only in builds with the GUI; the text's ids are checked in every build

using namespace dlsys;

TEST_CASE("a step header without an id is refused, naming the line") {
  CHECK_THROWS_WITH_AS(parse_lesson_text("# T\n## Step: Warm-up\ncaption\n"), doctest::Contains("## Step: Warm-up"),
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_lesson_text("# T\n## Step Warm up: x\n"), std::invalid_argument);
  const LessonText text =
      parse_lesson_text("# T\ncard\n## Step warmup: Warm-up\nfirst\n## Step steady_2: Steady\nsecond\n");
  REQUIRE(text.steps.size() == 2);
  CHECK(text.steps[0].id == "warmup");
  CHECK(text.steps[0].title == "Warm-up");
  CHECK(text.steps[0].caption == "first");
  CHECK(text.steps[1].id == "steady_2");
}

TEST_CASE("a step's Uses line names its parameters and stays out of its caption") {
  const LessonText text = parse_lesson_text("# T\n## Step a: A\nUses: p, m,schedule\nwords\n## Step b: B\nmore\n");
  REQUIRE(text.steps.size() == 2);
  CHECK(text.steps[0].uses == std::vector<std::string>{"p", "m", "schedule"});
  CHECK(text.steps[0].caption == "words");
  CHECK(text.steps[1].uses.empty());
  CHECK_THROWS_WITH_AS(parse_lesson_text("# T\n## Step a: A\nUses: p, Two words\n"), doctest::Contains("'Two words'"),
                       std::invalid_argument);
}

TEST_CASE("every name in a step's Uses line is a parameter of its lesson") {
  for (const Lesson* lesson : all_lessons()) {
    std::set<std::string> keys;
    for (const ParamSpec& spec : lesson->params()) keys.insert(spec.key);
    for (const LessonStep& step : lesson->text().steps)
      for (const std::string& key : step.uses) {
        CAPTURE(lesson->id());
        CAPTURE(step.id);
        CHECK_MESSAGE(keys.count(key) == 1, "'", key, "' is not one of the lesson's parameters");
      }
  }
}

// The panel lists a step's parameters first and folds the rest: a step without a Uses line would unfold them all, and
// a name given twice would draw the same control twice.
TEST_CASE("every step of every lesson names the parameters it is about, each once") {
  for (const Lesson* lesson : all_lessons()) {
    CAPTURE(lesson->id());
    for (const LessonStep& step : lesson->text().steps) {
      CAPTURE(step.id);
      CHECK_FALSE(step.uses.empty());
      const std::set<std::string> distinct(step.uses.begin(), step.uses.end());
      CHECK(distinct.size() == step.uses.size());
    }
  }
}
