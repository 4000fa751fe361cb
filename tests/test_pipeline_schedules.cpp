// The schedule engine: every generated schedule is legal, and the simulated bubbles equal the closed forms.
#include <doctest/doctest.h>

#include "engine/errors.h"
#include "kernels/pipeline/bubble_theory.h"
#include "kernels/pipeline/schedule.h"
#include "kernels/pipeline/simulate.h"

using namespace dlsys;
using namespace dlsys::pipeline;

namespace {

bool buildable(const ScheduleShape& shape) {
  try {
    check_shape(shape);
    return true;
  } catch (const BadInput&) {
    return false;
  }
}

double worst_idle(const Timing& t) {
  double worst = 0;
  for (double busy : t.busy) worst = std::max(worst, t.makespan - busy);
  return worst;
}

OpCosts costs(double f, double b, double w, double fb = 0) {
  OpCosts c;
  c.f = f;
  c.b = b;
  c.w = w;
  c.fb = fb;
  return c;
}

}  // namespace

TEST_CASE("every generated schedule is legal for many (p, m, v)") {
  int checked = 0;
  for (ScheduleKind kind : kAllSchedules)
    for (int p = 1; p <= 8; ++p)
      for (int m = 1; m <= 20; ++m)
        for (int v = 1; v <= (kind == ScheduleKind::Interleaved ? 4 : 1); ++v) {
          const ScheduleShape shape{kind, p, m, v};
          if (!buildable(shape)) continue;
          const Schedule s = make_schedule(shape);
          const auto problems = check_schedule(s);
          INFO(schedule_id(kind), " p=", p, " m=", m, " v=", v, ": ", problems.empty() ? "" : problems.front());
          CHECK(problems.empty());
          // Simulated timelines respect every dependency, with and without message latency and imbalance.
          OpCosts c = costs(1.0, 1.3, 0.7, 2.1);
          c.p2p = 0.25;
          c.stage_scale.assign(s.stages, 1.0);
          c.stage_scale.back() = 2.0;
          const Timing t = simulate(s, c);
          CHECK(check_timing(s, t, c.p2p).empty());
          ++checked;
        }
  CHECK(checked > 500);
}

TEST_CASE("the legality checker catches broken schedules") {
  Schedule s = make_schedule({ScheduleKind::OneFOneB, 3, 4, 1});
  SUBCASE("an op on the wrong device") {
    std::swap(s.device_ops[0].front(), s.device_ops[1].front());
    CHECK_FALSE(check_schedule(s).empty());
  }
  SUBCASE("an op missing") {
    s.device_ops[2].pop_back();
    CHECK_FALSE(check_schedule(s).empty());
  }
  SUBCASE("an op twice") {
    s.device_ops[1].push_back(s.device_ops[1].front());
    CHECK_FALSE(check_schedule(s).empty());
  }
  SUBCASE("a W without a split B") {
    s.device_ops[0].push_back({OpKind::W, 0, 0});
    CHECK_FALSE(check_schedule(s).empty());
  }
  SUBCASE("an order that deadlocks: the last stage runs B before the F it needs") {
    auto& last = s.device_ops[2];
    std::swap(last[0], last[1]);  // B0 before F0
    const auto problems = check_schedule(s);
    REQUIRE_FALSE(problems.empty());
    CHECK(problems.front().find("deadlock") != std::string::npos);
  }
  SUBCASE("a timeline that starts an op before its input arrives") {
    Timing t = simulate(s, OpCosts{});
    t.device_ops[1][0].start -= 0.5;
    CHECK_FALSE(check_timing(s, t, 0).empty());
  }
}

TEST_CASE("the course's numbers: idle fraction (n-1)/(m+n-1), and the misprint cannot be a share") {
  CHECK(theory::fill_drain_idle_fraction(2, 1) == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(theory::fill_drain_idle_fraction(2, 4) == doctest::Approx(0.2).epsilon(1e-15));
  CHECK(theory::fill_drain_idle_fraction(2, 10) == doctest::Approx(1.0 / 11.0).epsilon(1e-15));
  CHECK(theory::fill_drain_idle_fraction(2, 10) == doctest::Approx(0.0909).epsilon(1e-3));
  CHECK(theory::bubble_ratio(2, 4) == doctest::Approx(0.25));
  CHECK(theory::course_misprint(2, 1) == 0.0);
  CHECK(theory::course_misprint(2, 4) == doctest::Approx(-0.6));
  for (int m = 2; m <= 32; ++m) CHECK(theory::course_misprint(4, m) < 0);
}

TEST_CASE("uniform GPipe and 1F1B: the simulated bubble equals the closed form exactly") {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (int p = 1; p <= 8; ++p)
      for (int m = 1; m <= 24; ++m)
        for (const OpCosts& c : {costs(1, 1, 1), costs(1, 1.5, 0.5), costs(2, 3, 1)}) {
          const Schedule s = make_schedule({kind, p, m, 1});
          const Timing t = simulate(s, c);
          INFO(schedule_id(kind), " p=", p, " m=", m);
          CHECK(t.bubble_fraction() == doctest::Approx(theory::fill_drain_idle_fraction(p, m)).epsilon(1e-12));
          CHECK(t.bubble_ratio() == doctest::Approx(theory::bubble_ratio(p, m)).epsilon(1e-12));
          CHECK(t.makespan == doctest::Approx((m + p - 1) * (c.f + c.full_backward())).epsilon(1e-12));
        }
}

TEST_CASE("interleaved: the bubble shrinks by v, (p-1)/(v m)") {
  for (int p = 2; p <= 6; ++p)
    for (int v = 1; v <= 4; ++v)
      for (int m = p; m <= 4 * p; m += p) {
        const Schedule s = make_schedule({ScheduleKind::Interleaved, p, m, v});
        const Timing t = simulate(s, costs(1, 1, 1));
        INFO("p=", p, " m=", m, " v=", v);
        CHECK(s.stages == v * p);
        CHECK(t.bubble_ratio() == doctest::Approx(theory::bubble_ratio(p, m, v)).epsilon(1e-12));
        CHECK(t.bubble_fraction() == doctest::Approx(theory::interleaved_idle_fraction(p, m, v)).epsilon(1e-12));
      }
}

TEST_CASE("the course's interleaved layer placement: 16 layers, 4 devices, v = 2") {
  // Two layers per stage: stage s holds layers 2s+1, 2s+2 (1-based). Device 1 (0-based 0) gets stages 0 and 4.
  const Schedule s = make_schedule({ScheduleKind::Interleaved, 4, 4, 2});
  auto layers_of = [&](int device) {
    std::vector<int> layers;
    for (int stage = 0; stage < s.stages; ++stage)
      if (s.device_of(0, stage) == device) {
        layers.push_back(2 * stage + 1);
        layers.push_back(2 * stage + 2);
      }
    return layers;
  };
  CHECK(layers_of(0) == std::vector<int>{1, 2, 9, 10});
  CHECK(layers_of(1) == std::vector<int>{3, 4, 11, 12});
  CHECK(layers_of(3) == std::vector<int>{7, 8, 15, 16});
}

TEST_CASE("peak activations in flight: GPipe m, 1F1B min(p - r, m) on rank r") {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 16; ++m) {
      const Timing g = simulate(make_schedule({ScheduleKind::GPipe, p, m, 1}), OpCosts{});
      const Timing o = simulate(make_schedule({ScheduleKind::OneFOneB, p, m, 1}), OpCosts{});
      const Timing z = simulate(make_schedule({ScheduleKind::ZbH1, p, m, 1}), OpCosts{});
      for (int r = 0; r < p; ++r) {
        INFO("p=", p, " m=", m, " rank ", r);
        CHECK(in_flight(g, r).peak == theory::peak_inflight_gpipe(m));
        CHECK(in_flight(o, r).peak == theory::peak_inflight_1f1b(p, m, r));
        // ZB-H1 keeps deferred W's activations, but never more than rank 0 of 1F1B holds.
        CHECK(in_flight(z, r).peak <= std::min(p, m));
      }
      CHECK(in_flight(z, 0).peak == std::min(p, m));
    }
}

TEST_CASE("[EXT] Korthikanti et al. 2023: interleaving multiplies 1F1B's peak activations by 1 + (p - 1)/(p v)") {
  // In chunks of 1/(p v) of the model, rank 0 holds p v + p - 1 of them at its peak: p stages' worth, times the factor.
  for (int p = 2; p <= 8; p *= 2)
    for (int v = 2; v <= 4; ++v)
      for (int m = 2 * p; m <= 4 * p; m += p) {  // from m = 2p, where rank 0 reaches its steady state
        INFO("p=", p, " v=", v, " m=", m);
        const Schedule s = make_schedule({ScheduleKind::Interleaved, p, m, v});
        const double stage_units = double(in_flight(simulate(s, OpCosts{}), 0).peak) / v;
        CHECK(stage_units == doctest::Approx(p * (1.0 + (p - 1.0) / (p * v))));
      }
}

TEST_CASE("1F1B warm-up: rank r runs min(p - r - 1, m) forwards before its first backward") {
  const int p = 5, m = 7;
  const Schedule s = make_schedule({ScheduleKind::OneFOneB, p, m, 1});
  for (int r = 0; r < p; ++r) {
    int forwards = 0;
    for (const Op& op : s.device_ops[r]) {
      if (op.kind == OpKind::B) break;
      ++forwards;
    }
    CHECK(forwards == std::min(p - r - 1, m) + 1);  // warm-up, then the steady state's first forward
  }
}

TEST_CASE("[EXT] DeepSeek-V3 Table 2: 1F1B (PP-1)(F+B), ZB1P (PP-1)(F+B-2W), DualPipe (PP/2-1)(F&B+B-3W)") {
  // Per-chunk costs in the zero-bubble notation: b = input gradient, full backward B = b + w.
  for (int p = 2; p <= 8; p += 2)
    for (int m : {2 * p, 2 * p + 2, 4 * p}) {
      for (const OpCosts& c : {costs(1, 1, 1), costs(1, 2, 0.5), costs(2, 1, 1)}) {
        const double F = c.f, B = c.full_backward(), W = c.w;
        INFO("p=", p, " m=", m, " f=", c.f, " b=", c.b, " w=", c.w);
        const Timing one = simulate(make_schedule({ScheduleKind::OneFOneB, p, m, 1}), c);
        CHECK(worst_idle(one) == doctest::Approx(theory::deepseek_1f1b_bubble(p, F, B)).epsilon(1e-12));
        const Timing zb = simulate(make_schedule({ScheduleKind::ZbH1, p, m, 1}), c);
        CHECK(worst_idle(zb) == doctest::Approx(theory::deepseek_zb1p_bubble(p, F, B, W)).epsilon(1e-12));
      }
      // DualPipe's row holds exactly for the costs its figure is drawn with, F = b = W, whatever the overlap F&B.
      for (double fb : {3.0, 2.5, 2.0}) {
        const OpCosts c = costs(1, 1, 1, fb);
        INFO("p=", p, " m=", m, " fb=", fb);
        const Timing dual = simulate(make_schedule({ScheduleKind::DualPipe, p, m, 1}), c);
        CHECK(worst_idle(dual) == doctest::Approx(theory::deepseek_dualpipe_bubble(p, fb, 2.0, 1.0)).epsilon(1e-12));
        // DualPipeV: the same bubble with the PP = 2p stages folded onto p/2 ... here p devices hold 2p stages.
        const Timing v = simulate(make_schedule({ScheduleKind::DualPipeV, p / 2, m, 1}), c);
        CHECK(worst_idle(v) == doctest::Approx(theory::deepseek_dualpipe_bubble(p, fb, 2.0, 1.0)).epsilon(1e-12));
      }
    }
}

TEST_CASE("[EXT] DeepSeek-V3 Table 2: parameters 2x and PP + 1 activations for DualPipe, PP for 1F1B and ZB1P") {
  for (int p = 2; p <= 8; p += 2) {
    const int m = 3 * p;
    const Schedule dual = make_schedule({ScheduleKind::DualPipe, p, m, 1});
    CHECK(dual.param_copies == theory::deepseek_param_copies(ScheduleKind::DualPipe));
    CHECK(dual.param_copies == 2);
    // Device i holds stage i of one replica and stage p-1-i of the other (the course: device 0 holds layers 0 and 7).
    for (int i = 0; i < p; ++i) {
      CHECK(dual.device_of(0, i) == i);
      CHECK(dual.device_of(m - 1, p - 1 - i) == i);
    }
    auto peak = [](const Schedule& s) {
      const Timing t = simulate(s, OpCosts{});
      int best = 0;
      for (int d = 0; d < s.devices(); ++d) best = std::max(best, in_flight(t, d).peak);
      return best;
    };
    CHECK(peak(dual) == theory::deepseek_activation(ScheduleKind::DualPipe, p));
    CHECK(peak(make_schedule({ScheduleKind::OneFOneB, p, m, 1})) ==
          theory::deepseek_activation(ScheduleKind::OneFOneB, p));
    CHECK(peak(make_schedule({ScheduleKind::ZbH1, p, m, 1})) == theory::deepseek_activation(ScheduleKind::ZbH1, p));
    CHECK(make_schedule({ScheduleKind::DualPipeV, p / 2, m, 1}).param_copies == 1);
  }
}

TEST_CASE("the formula table agrees with the simulation for uniform costs") {
  const OpCosts c = costs(1, 1, 1);
  for (ScheduleKind kind : kAllSchedules) {
    const int p = 4, m = 8, v = 2;
    const Schedule s = make_schedule({kind, p, m, v});
    const Timing t = simulate(s, c);
    const auto formula = theory::formula_bubble(kind, p, m, s.shape.chunks, c);
    INFO(schedule_id(kind));
    CHECK(worst_idle(t) == doctest::Approx(formula.bubble).epsilon(1e-12));
    if (formula.idle_fraction >= 0) CHECK(t.bubble_fraction() == doctest::Approx(formula.idle_fraction).epsilon(1e-12));
  }
}

TEST_CASE("schedule shapes that cannot be built are refused with the parameter named") {
  auto refused = [](ScheduleShape shape, const std::string& text) {
    try {
      check_shape(shape);
    } catch (const BadInput& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(text) != std::string::npos);
      return;
    }
    FAIL("accepted");
  };
  refused({ScheduleKind::OneFOneB, 0, 4, 1}, "parameter 'p'");
  refused({ScheduleKind::OneFOneB, 2, 0, 1}, "parameter 'm'");
  refused({ScheduleKind::Interleaved, 4, 6, 2}, "multiple of p");
  refused({ScheduleKind::Interleaved, 4, 8, 0}, "parameter 'v'");
  refused({ScheduleKind::DualPipe, 3, 12, 1}, "p must be even");
  refused({ScheduleKind::DualPipe, 4, 6, 1}, "at least 2p = 8");
  refused({ScheduleKind::DualPipe, 4, 9, 1}, "m must be even");
  refused({ScheduleKind::DualPipeV, 4, 7, 1}, "at least 2p = 8");
  CHECK_THROWS_AS(parse_schedule("2f2b"), BadInput);
  CHECK(parse_schedule("zb-h1") == ScheduleKind::ZbH1);
}
