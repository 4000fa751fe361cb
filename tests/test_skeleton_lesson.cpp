// The skeleton lesson (lessons/skeleton), which README tells a new lesson to copy: its typed parameters, theory,
// budget, a real run and the run read back through the same declarations, so the skeleton stays true.
#include <doctest/doctest.h>

#include "engine/errors.h"
#include "lessons/common/run_lesson.h"
#include "lessons/skeleton/skeleton_lesson.h"
#include "tests/support/typed_values.h"

using namespace dlsys;
using namespace dlsys::skeleton;

TEST_CASE("skeleton lesson: parameters read once, a choice as its enum, theory from closed forms") {
  const SkeletonLesson lesson;
  const SkeletonParams p = test::typed_params(lesson, {"n=1024", "op=axpy"});
  CHECK(p.n == 1024);
  CHECK(p.op == Op::Axpy);
  const SkeletonTheory scale = test::typed_theory(lesson, {"n=1024"});
  CHECK(scale.flop == 1024);
  CHECK(scale.bytes == 8192);  // read x, write y
  CHECK(scale.intensity == 0.125);
  const SkeletonTheory axpy = test::typed_theory(lesson, {"n=1024", "op=axpy"});
  CHECK(axpy.flop == 2048);
  CHECK(axpy.bytes == 12288);  // read x and y, write y
  CHECK(axpy.arrays == 3);
}

TEST_CASE("skeleton lesson: the budget refuses a run over max_minutes before it starts") {
  const SkeletonLesson lesson;
  const ParamValues params = ParamValues::parse(lesson.params(), {"n=1073741824", "repeats=100", "max_minutes=0.1"});
  CHECK_THROWS_WITH_AS(lesson.validate(params, BackendKind::Cpu), doctest::Contains("more than max_minutes"), BadInput);
}

TEST_CASE("skeleton lesson: a run is checked, timed and read back from its JSON as the same structs") {
  const SkeletonLesson lesson;
  RunControl control;
  const ParamValues params = ParamValues::parse(lesson.params(), {"n=4096", "op=axpy", "repeats=2"});
  const RunResult run = run_lesson(lesson, params, BackendKind::Cpu, control);
  const SkeletonMeasured& m = test::measured_of<SkeletonMeasured>(run);
  CHECK(m.wrong == 0);
  CHECK(m.max_abs_err == 0);
  CHECK(m.time_min_us <= m.time_us);
  CHECK(m.gbps > 0);
  const nlohmann::ordered_json json = to_json(run);
  RunResult back;
  lesson.read_values(json.at("theory"), json.at("measured"), back);
  CHECK(test::measured_of<SkeletonMeasured>(back).time_us == m.time_us);
  REQUIRE(back.theory_as<SkeletonTheory>() != nullptr);
  CHECK(back.theory_as<SkeletonTheory>()->bytes == 12288 * 4);
}
