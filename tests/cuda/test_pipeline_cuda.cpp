// The pipeline executor on GPUs: every schedule's weight gradients equal one device over the whole batch (the CPU
// reference the CPU executor is checked against), its measured timeline respects every dependency, its memory follows
// the activations in flight, and the lessons say where the run happened (one GPU per device, or emulated).
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/ledger.h"
#include "engine/run_control.h"
#include "kernels/pipeline/executor.h"
#include "kernels/pipeline/executor_cuda.h"
#include "tests/support/cli_capture.h"
#include "tests/support/cuda_devices.h"
#include "tests/support/pipeline_cases.h"

using namespace dlsys;
using namespace dlsys::pipeline;

namespace {

ExecutorConfig small_config(ExecutionMode mode) {
  ExecutorConfig c;
  c.hidden = 24;  // awkward sizes: no multiple of a warp or a tensor-core tile
  c.microbatch_rows = 5;
  c.mode = mode;
  c.warmup_steps = 0;
  c.min_warmup_ms = 0;
  c.repeats = 1;
  return c;
}

// Event timestamps on one GPU are ordered by the stream waits, up to the timer's resolution (about 0.5 us); with
// several GPUs their clocks agree only to the host's launch skew between the start events.
double timing_tolerance_us(int devices) { return testing::cuda_device_count() >= devices ? 50.0 : 1.0; }

// Whether the run says that every timed step was one launch of the step's CUDA Graph (one GPU, not replayed); a
// capture that failed says so instead.
bool says_graph(const std::vector<std::string>& notes) {
  bool found = false;
  for (const std::string& note : notes) found = found || note.find("one launch of a CUDA Graph") != std::string::npos;
  return found;
}

}  // namespace

TEST_CASE("GPU pipeline: every schedule's gradients equal one device over the whole batch, its timeline is legal") {
  for (const testing::PipelineCase& k : testing::executor_cases())
    for (ExecutionMode mode : {ExecutionMode::Auto, ExecutionMode::Replayed}) {
      const Schedule s = make_schedule({k.kind, k.p, k.m, k.v});
      ExecutorConfig config = small_config(mode);
      config.last_stage_blocks = k.kind == ScheduleKind::ZbH1 ? 3 : 1;
      MemoryLedger ledger;
      RunControl control;
      const ExecutionResult r = cuda::execute_schedule(s, config, ledger, control);
      INFO(schedule_id(k.kind), " p=", k.p, " m=", k.m, " mode ", r.mode);
      const bool emulated = testing::cuda_device_count() < k.p;
      CHECK(r.emulated == emulated);
      CHECK(r.gpus == (emulated ? 1 : k.p));
      CHECK(r.mode == (mode == ExecutionMode::Replayed ? "replayed" : emulated ? "emulated" : "concurrent"));
      CHECK_FALSE(r.notes.empty());
      CHECK(says_graph(r.notes) == (mode != ExecutionMode::Replayed && r.gpus == 1));
      testing::check_executed(s, k.p, config, r, timing_tolerance_us(k.p));
      // The GPU counts the buffers the CPU counts, in the order the CPU runs them one at a time.
      ExecutorConfig cpu_config = config;
      cpu_config.mode = ExecutionMode::Replayed;
      MemoryLedger cpu_ledger;
      const ExecutionResult cpu = pipeline::execute_schedule(s, cpu_config, cpu_ledger, control);
      CHECK(r.peak_activation_bytes == cpu.peak_activation_bytes);
    }
}

TEST_CASE("GPU pipeline: GPipe stashes m micro-batches on device 0, 1F1B only p") {
  const int p = 2, m = 8;
  auto peak0 = [&](ScheduleKind kind) {
    MemoryLedger ledger;
    RunControl control;
    return cuda::execute_schedule(make_schedule({kind, p, m, 1}), small_config(ExecutionMode::Replayed), ledger,
                                  control)
        .peak_activation_bytes[0];
  };
  CHECK(peak0(ScheduleKind::GPipe) >= 3 * peak0(ScheduleKind::OneFOneB));
}

TEST_CASE("GPU pipeline: mode=concurrent without one GPU per device is bad input, not an emulation") {
  const int p = testing::cuda_device_count() + 1;
  MemoryLedger ledger;
  RunControl control;
  CHECK_THROWS_AS(cuda::execute_schedule(make_schedule({ScheduleKind::OneFOneB, p, 2 * p, 1}),
                                         small_config(ExecutionMode::Concurrent), ledger, control),
                  BadInput);
}

TEST_CASE("GPU pipeline: a run that does not fit in GPU memory is bad input") {
  MemoryLedger ledger;
  RunControl control;
  ExecutorConfig config = small_config(ExecutionMode::Auto);
  config.hidden = 4096;
  config.microbatch_rows = 1 << 20;  // 16 GiB per activation, 256 micro-batches
  CHECK_THROWS_AS(cuda::execute_schedule(make_schedule({ScheduleKind::GPipe, 2, 256, 1}), config, ledger, control),
                  BadInput);
}

TEST_CASE("schedules on --backend cuda: the result says it ran on the GPU and how") {
  const auto r = testing::run_cli_captured({"run", "schedules", "--backend", "cuda", "--set", "schedule=1f1b", "--set",
                                            "p=2", "--set", "m=8", "--set", "hidden=64", "--set", "microbatch=8",
                                            "--set", "repeats=1", "--json", "-"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const bool emulated = testing::cuda_device_count() < 2;
  CHECK(j["backend"]["kind"] == "cuda");
  CHECK(j["backend"]["timer"] == "cuda_event");
  CHECK(j["backend"]["emulated"] == emulated);
  CHECK(j["measured"]["mode"] == (emulated ? "emulated" : "concurrent"));
  CHECK(j["measured"]["gpus"] == (emulated ? 1 : 2));
  CHECK(j["measured"]["grad_max_rel_err"].get<double>() < 1e-4);
  bool says_where = false;
  for (const auto& note : j["backend"]["notes"])
    says_where = says_where || note.get<std::string>().find(emulated ? "emulated" : "one GPU per") == 0;
  CHECK(says_where);
  std::vector<std::string> notes;
  for (const auto& note : j["backend"]["notes"]) notes.push_back(note.get<std::string>());
  CHECK(says_graph(notes) == emulated);
  REQUIRE(j["timeline"].size() == 3);
  CHECK(j["timeline"][1]["mode"] == j["measured"]["mode"]);
}
