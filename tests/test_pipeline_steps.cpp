// What the `bubble` and `schedules` steps draw, from their step data: the phase each of the first steps picks out,
// one scale for the in-flight plots, the messages between devices, the comparison in one unit, and the defaults.
#include <doctest/doctest.h>

#include <memory>

#include "engine/params.h"
#include "kernels/pipeline/schedule.h"
#include "kernels/pipeline/simulate.h"
#include "lessons/pipeline_common/pipeline_lesson.h"
#include "lessons/pipeline_common/pipeline_steps.h"
#include "lessons/registry.h"

using namespace dlsys;
using namespace dlsys::pipeline;
using pipeline_lesson::PipelineSteps;

namespace {

std::shared_ptr<const PipelineSteps> steps_for(const std::string& lesson_id, const std::vector<std::string>& sets) {
  const Lesson& lesson = find_lesson(lesson_id);
  const auto params = ParamValues::parse(lesson.params(), sets);
  auto data = std::dynamic_pointer_cast<const PipelineSteps>(lesson.step_data(params));
  REQUIRE(data != nullptr);
  return data;
}

const pipeline_lesson::ScheduleComparison& entry(const pipeline_lesson::PipelineTheory& t, const std::string& id) {
  for (const auto& e : t.comparison)
    if (e.schedule == id) return e;
  FAIL("no comparison entry " << id);
  return t.comparison.front();
}

}  // namespace

TEST_CASE("teaching defaults: schedules at p = 4, m = 8 with 1F1B; bubble at GPipe, p = 2, m = 4") {
  const auto schedules = ParamValues::parse(find_lesson("schedules").params(), {});
  CHECK(schedules.text("schedule") == "1f1b");
  CHECK(schedules.integer("p") == 4);
  CHECK(schedules.integer("m") == 8);
  const auto bubble = ParamValues::parse(find_lesson("bubble").params(), {});
  CHECK(bubble.text("schedule") == "gpipe");
  CHECK(bubble.integer("p") == 2);
  CHECK(bubble.integer("m") == 4);
  // At the defaults DualPipe runs as chosen (even p, m = 2p): both directions, a bubble to see.
  const auto steps = steps_for("schedules", {});
  CHECK(steps->dualpipe_p == 4);
  CHECK(steps->dualpipe_m == 8);
  const auto& dual = steps->panel("dualpipe");
  REQUIRE(dual.error.empty());
  bool reverse = false;
  for (const auto& span : dual.timeline.spans) reverse = reverse || span.direction == 1;
  CHECK(reverse);
  CHECK(dual.sim->timing.bubble_fraction() > 0);
}

TEST_CASE("1F1B phases per device: p - r - 1 warm-up forwards, p - r before the first backward") {
  const Schedule s = make_schedule({ScheduleKind::OneFOneB, 4, 8, 1});
  OpCosts c;  // F = 1, input-gradient B = 1, W = 1: a full backward costs 2
  const Timing t = simulate(s, c);
  const auto phases = pipeline_lesson::device_phases(s, t);
  REQUIRE(phases.size() == 4);
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(phases[r].warmup_forwards == 4 - r - 1);
    CHECK(phases[r].forwards_before_first_backward == 4 - r);
    CHECK(phases[r].cooldown_ops == 4 - r);
    CHECK(phases[r].steady_ops == 2 * (8 - 4 + r));
    CHECK(phases[r].end == doctest::Approx(33));  // (m + p - 1)(F + B) = 11 x 3
  }
  // Device 0 waits for B0 until it has gone down and come back: F0 reaches device 3 at 3, its backward takes 2 per
  // device, so B0 starts on device 0 at 4 + 3 x 2 = 10. Its last forward F7 ends at 22.
  CHECK(phases[0].warmup_end == doctest::Approx(10));
  CHECK(phases[0].steady_end == doctest::Approx(22));
  CHECK(phases[3].warmup_end == doctest::Approx(4));
}

TEST_CASE("the schedules steps pick out their own phase: warm-up, steady state, cool-down") {
  const auto steps = steps_for("schedules", {});
  for (const char* id : {"warmup", "steady_state", "cooldown"}) REQUIRE(steps->phase_bands.count(id) == 1);
  const auto& warmup = steps->phase_bands.at("warmup");
  const auto& steady = steps->phase_bands.at("steady_state");
  const auto& cooldown = steps->phase_bands.at("cooldown");
  REQUIRE(warmup.size() == 4);
  for (int d = 0; d < 4; ++d) {
    CAPTURE(d);
    CHECK(warmup[d].lane == d);
    CHECK(warmup[d].start == 0);
    // The three bands tile the lane: each starts where the previous one ends, the last at the makespan.
    CHECK(steady[d].start == warmup[d].end);
    CHECK(cooldown[d].start == steady[d].end);
    CHECK(cooldown[d].end == doctest::Approx(33));
    CHECK(steady[d].end > steady[d].start);
  }
  CHECK(warmup[0].end == doctest::Approx(10));
  CHECK(steady[0].end == doctest::Approx(22));
}

TEST_CASE("the schedules steps say whether a run ran the panel's schedule, from the run's typed theory") {
  const auto steps = steps_for("schedules", {"schedule=1f1b"});
  RunResult run;
  CHECK_FALSE(steps->ran_chosen_schedule(run));  // a run without theory ran nothing the view can name
  pipeline_lesson::PipelineTheory theory;
  theory.schedule = "1f1b";
  run.theory = make_values(theory);
  CHECK(steps->ran_chosen_schedule(run));
  theory.schedule = "gpipe";
  run.theory = make_values(theory);
  CHECK_FALSE(steps->ran_chosen_schedule(run));
}

TEST_CASE("GPipe and 1F1B activations in flight share one scale") {
  const auto steps = steps_for("schedules", {});
  // GPipe holds all m = 8 on some device; 1F1B at most p = 4. One scale: the larger, over the longer makespan.
  CHECK(steps->in_flight_max == 8);
  CHECK(steps->in_flight_time_max == doctest::Approx(33));
}

TEST_CASE("messages between devices: 2(p - 1) per micro-batch for 1F1B, 2(v p - 1) interleaved") {
  for (int p : {2, 3, 4})
    for (int v : {1, 2, 3}) {
      CAPTURE(p);
      CAPTURE(v);
      const int m = 2 * p;
      const ScheduleKind kind = v == 1 ? ScheduleKind::OneFOneB : ScheduleKind::Interleaved;
      const Schedule s = make_schedule({kind, p, m, v});
      OpCosts c;
      c.p2p = 0.25;
      const Timing t = simulate(s, c);
      const auto messages = pipeline_lesson::messages_of(s, t, c.p2p);
      CHECK(messages.size() == std::size_t(m * 2 * (v * p - 1)));
      for (const auto& msg : messages) {
        CHECK(msg.from_lane != msg.to_lane);
        CHECK(msg.arrives == doctest::Approx(msg.sent + 0.25));
      }
    }
  // The tip of DualPipeV's V is one device: stage p - 1 hands to stage p without a message.
  const Schedule v = make_schedule({ScheduleKind::DualPipeV, 4, 8, 1});
  CHECK(pipeline_lesson::messages_of(v, simulate(v, OpCosts{}), 0).size() == std::size_t(8 * 2 * (2 * 4 - 2)));

  const auto steps = steps_for("schedules", {});
  CHECK(steps->messages_per_micro_batch_1f1b == 6);
  CHECK(steps->messages_per_micro_batch_interleaved == 14);
  CHECK(steps->panel("1f1b_interleaved_m").message_count == 8 * 6);
  CHECK(steps->panel("interleaved").message_count == 8 * 14);
  CHECK(steps->panel("interleaved").messages.size() == 8 * 14);
}

TEST_CASE("interleaved chunks are told apart in the labels: F3a and F3b") {
  const auto steps = steps_for("schedules", {});
  int a = 0, b = 0;
  for (const auto& span : steps->panel("interleaved").timeline.spans) {
    a += span.label == "F3a";
    b += span.label == "F3b";
  }
  CHECK(a == 4);  // micro-batch 3 passes each of the 4 devices once per chunk
  CHECK(b == 4);
  for (const auto& span : steps->panel("1f1b").timeline.spans) CHECK(span.label.back() != 'a');
}

TEST_CASE("the comparison at p = 4, m = 8 in one unit: bubbles over a full-stage F + B, and over ideal time") {
  const auto steps = steps_for("schedules", {});
  REQUIRE(steps->theory_error.empty());
  const auto& t = steps->theory;
  // Costs per chunk F = 1, full B = 2 (input gradient 1), W = 1; a full stage is 1 chunk, 2 for interleaved v = 2
  // and for DualPipeV.
  struct Expected {
    const char* id;
    double stage_fb, formula, simulated, ratio;
  };
  for (const Expected& x :
       {Expected{"gpipe", 3, 3, 3, 3.0 / 8}, Expected{"1f1b", 3, 3, 3, 3.0 / 8},
        Expected{"interleaved", 6, 1.5, 1.5, 3.0 / 16}, Expected{"zb-h1", 3, 1, 1, 1.0 / 8},
        Expected{"dualpipe", 3, 2.0 / 3, 2.0 / 3, 1.0 / 12}, Expected{"dualpipev", 6, 1, 1, 1.0 / 8}}) {
    CAPTURE(x.id);
    const auto& e = entry(t, x.id);
    REQUIRE(e.available);
    CHECK(e.stage_fb == doctest::Approx(x.stage_fb));
    CHECK(e.bubble_stage_fb_formula == doctest::Approx(x.formula).epsilon(1e-12));
    CHECK(e.bubble_stage_fb_simulated == doctest::Approx(x.simulated).epsilon(1e-12));
    CHECK(e.bubble_ratio_simulated == doctest::Approx(x.ratio).epsilon(1e-12));
  }
  // The point of the normalisation: in raw cost units 1F1B and interleaved both show 9.
  CHECK(entry(t, "1f1b").bubble_formula == doctest::Approx(9));
  CHECK(entry(t, "interleaved").bubble_formula == doctest::Approx(9));
  // The interleaving step says the same in its own terms: (p-1)/m against (p-1)/(v m).
  CHECK(steps->formulas.interleaved_ratio_1f1b == doctest::Approx(3.0 / 8));
  CHECK(steps->formulas.interleaved_ratio == doctest::Approx(3.0 / 16));
}

TEST_CASE("the theory timeline for an export without a run is named as theory") {
  const Lesson& lesson = find_lesson("bubble");
  const auto timelines = lesson.theory_timelines(ParamValues::parse(lesson.params(), {}));
  REQUIRE(timelines.size() == 1);
  CHECK(timelines[0].name == "GPipe (fill-drain): p = 2, m = 4 (theory)");
  CHECK(timelines[0].source == "theory");
  CHECK(timelines[0].time_unit == "units");
  CHECK(timelines[0].spans.size() == 2 * 2 * 4);
}
