// The real pipeline executor: every schedule computes the same weight gradients as one device over the whole batch,
// its measured timeline respects every dependency, and its memory follows the schedule's activations in flight.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/ledger.h"
#include "engine/run_control.h"
#include "kernels/pipeline/executor.h"
#include "kernels/pipeline/mlp_block.h"
#include "kernels/pipeline/pipeline_devices.h"
#include "tests/support/pipeline_cases.h"

using namespace dlsys;
using namespace dlsys::pipeline;

namespace {

ExecutorConfig small_config(ExecutionMode mode, int threads) {
  ExecutorConfig c;
  c.hidden = 24;  // awkward sizes: not a multiple of any vector width
  c.microbatch_rows = 5;
  c.mode = mode;
  c.hardware_threads = threads;
  c.warmup_steps = 0;
  c.min_warmup_ms = 0;
  c.repeats = 1;
  return c;
}

}  // namespace

TEST_CASE("MLP block: the input and weight gradients match finite differences") {
  const int rows = 3, h = 5;
  std::vector<float> w1(h * h), w2(h * h), x(rows * h), a(rows * h), y(rows * h);
  for (int i = 0; i < h * h; ++i) {
    w1[i] = 0.3f * std::sin(1.7f * i);
    w2[i] = 0.3f * std::cos(0.9f * i);
  }
  for (int i = 0; i < rows * h; ++i) x[i] = std::sin(0.37f * i + 0.2f);
  // Loss = sum(y * c) with fixed c, so dy = c.
  std::vector<float> c(rows * h);
  for (int i = 0; i < rows * h; ++i) c[i] = std::cos(0.5f * i);
  auto loss = [&](const std::vector<float>& W1, const std::vector<float>& W2, const std::vector<float>& X) {
    std::vector<float> aa(rows * h), yy(rows * h);
    mlp::forward(rows, h, W1.data(), W2.data(), X.data(), aa.data(), yy.data());
    double l = 0;
    for (int i = 0; i < rows * h; ++i) l += double(yy[i]) * c[i];
    return l;
  };
  mlp::forward(rows, h, w1.data(), w2.data(), x.data(), a.data(), y.data());
  std::vector<float> dz(rows * h), dx(rows * h), dw1(h * h, 0.0f), dw2(h * h, 0.0f);
  mlp::backward_input(rows, h, w1.data(), w2.data(), a.data(), c.data(), dz.data(), dx.data());
  mlp::backward_weight(rows, h, x.data(), a.data(), c.data(), dz.data(), dw1.data(), dw2.data());
  const float eps = 1e-3f;  // small enough not to cross a relu kink here, large enough for fp32
  for (int i = 0; i < h * h; i += 3) {
    auto p1 = w1, m1 = w1;
    p1[i] += eps;
    m1[i] -= eps;
    CHECK(dw1[i] == doctest::Approx((loss(p1, w2, x) - loss(m1, w2, x)) / (2 * eps)).epsilon(1e-2));
    auto p2 = w2, m2 = w2;
    p2[i] += eps;
    m2[i] -= eps;
    CHECK(dw2[i] == doctest::Approx((loss(w1, p2, x) - loss(w1, m2, x)) / (2 * eps)).epsilon(1e-2));
  }
  for (int i = 0; i < rows * h; i += 2) {
    auto px = x, mx = x;
    px[i] += eps;
    mx[i] -= eps;
    CHECK(dx[i] == doctest::Approx((loss(w1, w2, px) - loss(w1, w2, mx)) / (2 * eps)).epsilon(1e-2));
  }
}

TEST_CASE("every schedule's weight gradients equal one device over the whole batch, and its timeline is legal") {
  for (const testing::PipelineCase& k : testing::executor_cases())
    for (ExecutionMode mode : {ExecutionMode::Concurrent, ExecutionMode::Replayed}) {
      const Schedule s = make_schedule({k.kind, k.p, k.m, k.v});
      ExecutorConfig config = small_config(mode, k.p);  // tests run concurrent even when stages time-share cores
      config.last_stage_blocks = k.kind == ScheduleKind::ZbH1 ? 3 : 1;
      MemoryLedger ledger;
      RunControl control;
      const ExecutionResult r = execute_schedule(s, config, ledger, control);
      INFO(schedule_id(k.kind), " p=", k.p, " m=", k.m, " mode ", r.mode);
      CHECK(r.mode == (mode == ExecutionMode::Concurrent ? "concurrent" : "replayed"));
      testing::check_executed(s, k.p, config, r, 1e-6);
      // Every stashed activation was released by the end of the step.
      for (int d = 0; d < k.p; ++d) CHECK(ledger.current_bytes(activation_tag(d)) == 0);
    }
}

TEST_CASE("the CPU pipeline device runs a schedule as the executor does and says how: notes, core share, no GPUs") {
  const auto cpu = make_pipeline_device(BackendKind::Cpu);
  CHECK(std::string(cpu->timer()) == "steady_clock");
  CHECK_FALSE(cpu->fed_by_one_host_thread());
  const Schedule s = make_schedule({ScheduleKind::DualPipeV, 2, 4, 1});
  for (ExecutionMode mode : {ExecutionMode::Concurrent, ExecutionMode::Replayed}) {
    MemoryLedger ledger;
    RunControl control;
    const ExecutionResult r = cpu->execute(s, small_config(mode, 2), ledger, control);
    const bool concurrent = mode == ExecutionMode::Concurrent;
    INFO(r.mode);
    testing::check_executed(s, 2, small_config(mode, 2), r, 1e-6);
    CHECK(cpu->emulated(r));
    CHECK_FALSE(cpu->gpus_used(r).has_value());
    CHECK(cpu->core_share(r).has_value() == concurrent);
    const std::vector<std::string> notes = cpu->notes(s, r);
    REQUIRE(notes.size() == 2);  // how the stages ran, and the F&B pairs run one half after the other
    CHECK(notes[0].rfind(concurrent ? "stages are 2 CPU threads" : "replayed:", 0) == 0);
    CHECK(notes[1].find("F&B pair") != std::string::npos);
  }
}

TEST_CASE("GPipe stashes m micro-batches on device 0, 1F1B only p") {
  const int p = 2, m = 8;
  auto peak0 = [&](ScheduleKind kind) {
    MemoryLedger ledger;
    RunControl control;
    const auto r =
        execute_schedule(make_schedule({kind, p, m, 1}), small_config(ExecutionMode::Replayed, 1), ledger, control);
    return r.peak_activation_bytes[0];
  };
  const std::int64_t gpipe = peak0(ScheduleKind::GPipe), one = peak0(ScheduleKind::OneFOneB);
  CHECK(gpipe >= 3 * one);  // 8 stashed micro-batches against 2, plus the same transient buffers
}

TEST_CASE("concurrent mode is refused when stages would time-share cores") {
  CHECK(resolve_mode(ExecutionMode::Auto, 2, 2) == ExecutionMode::Concurrent);
  CHECK(resolve_mode(ExecutionMode::Auto, 3, 2) == ExecutionMode::Replayed);
  CHECK_THROWS_AS(resolve_mode(ExecutionMode::Concurrent, 3, 2), BadInput);
}
