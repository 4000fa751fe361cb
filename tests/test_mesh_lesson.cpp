// The mesh lesson: its closed forms on a worked example, the parameters it refuses, and a quick run whose counted bytes
// and ledger equal them, whose weights agree with one device's, read back from its JSON as the same structs.
#include <doctest/doctest.h>

#include "engine/backend.h"
#include "engine/errors.h"
#include "lessons/common/run_lesson.h"
#include "lessons/mesh/mesh_lesson.h"
#include "lessons/mesh/mesh_planner.h"
#include "tests/support/typed_values.h"

using namespace dlsys;
using namespace dlsys::mesh_lesson;

TEST_CASE("mesh lesson: the closed forms of 2 x 2 x 2, h = 64, L = 8, B = 32, m = 4") {
  const MeshLesson lesson;
  const MeshTheory t = test::typed_theory(lesson, {"hidden=64", "layers=8", "batch=32", "micro_batches=4"});
  CHECK(t.ranks == 8);
  CHECK(t.rows_per_micro_batch == 4);  // 32 / (2 x 4)
  CHECK(t.layers_per_stage == 4);
  CHECK(t.inner_per_rank == 128);                           // 4h / tp
  CHECK(t.activation_bytes == 4 * 64 * 4);                  // rows h 4 B
  CHECK(t.shard_gradient_bytes == 4 * (2 * 64 * 128) * 4);  // L / pp layers of 2 h 4h / tp floats
  CHECK(t.bubble_fraction == doctest::Approx(1.0 / 5));     // (p - 1) / (m + p - 1)
  // A tp group: 2 ranks x 32 all-reduces x 2 (t - 1)/t x 1 KiB; a dp group: 2 ranks x 2 (d - 1)/d x 256 KiB.
  CHECK(t.tp_group_bytes == 2 * 32 * 1024);
  CHECK(t.dp_group_bytes == 2 * 262144);
  CHECK(t.pp_bytes == 8 * 4 * 1024);  // every rank sends m = 4 messages of 1 KiB (one way on each end stage)
  REQUIRE(t.rank_costs.size() == 8);
  const RankTheory& first = t.rank_costs[0];
  CHECK(first.in_flight == 2);                                  // stage 0 of 2: pp - p
  CHECK(first.activation_bytes == 2 * 4 * 4 * (64 + 128) * 4);  // 2 in flight x rows x L/pp (h + 4h/tp) x 4 B
  const RankTheory& last = t.rank_costs[7];
  CHECK(last.p == 1);
  CHECK(last.in_flight == 1);
  CHECK(last.activation_bytes == 4 * (4 * (64 + 128) + 64) * 4);  // and the output, for the loss
  CHECK(last.weight_bytes == 262144);
}

TEST_CASE("mesh lesson: more than eight ranks, or a mesh that does not divide the model, is refused by name") {
  const MeshLesson lesson;
  const auto refused = [&](const std::vector<std::string>& sets, const char* text) {
    const ParamValues params = ParamValues::parse(lesson.params(), sets);
    CHECK_THROWS_WITH_AS(lesson.validate(params, BackendKind::Cpu), doctest::Contains(text), BadInput);
  };
  refused({"dp=4"}, "parameters 'dp', 'tp', 'pp'");
  refused({"layers=7"}, "parameter 'layers'");
  refused({"tp=4", "dp=1", "hidden=66"}, "parameter 'hidden'");
  refused({"batch=36"}, "parameter 'batch'");
  CHECK_THROWS_AS(ParamValues::parse(lesson.params(), {"pp=9"}), BadInput);
}

TEST_CASE("mesh lesson: a quick run's bytes and ledger equal the closed forms, its weights one device's") {
  const MeshLesson lesson;
  RunControl control;
  const ParamValues params = parse_lesson_params(lesson, {}, BackendKind::Cpu, true);
  const RunResult run = run_lesson(lesson, params, BackendKind::Cpu, control);
  const MeshMeasured& m = test::measured_of<MeshMeasured>(run);
  const MeshTheory& t = *run.theory_as<MeshTheory>();
  CHECK(m.bytes_match);
  CHECK(m.memory_match);
  CHECK(m.replicas_identical);
  CHECK(m.within_tolerance);
  CHECK(m.update_max_rel_err < t.update_tolerance);
  CHECK(m.tp_group_bytes == t.tp_group_bytes);
  CHECK(m.dp_group_bytes == t.dp_group_bytes);
  CHECK(m.pp_bytes == t.pp_bytes);
  REQUIRE(run.timelines.size() == 1);
  CHECK(int(run.timelines.front().lanes.size()) == t.ranks);
  CHECK(run.backend.emulated);
  const nlohmann::ordered_json json = to_json(run);
  RunResult back;
  lesson.read_values(json.at("theory"), json.at("measured"), back);
  CHECK(test::measured_of<MeshMeasured>(back).rank_runs.size() == m.rank_runs.size());
}

TEST_CASE("mesh lesson: the simulated timeline has a lane per rank and 1F1B's ops on each") {
  const MeshLesson lesson;
  const ParamValues params = ParamValues::parse(lesson.params(), {"dp=1", "tp=2", "pp=4", "micro_batches=8"});
  const std::vector<Timeline> timelines = lesson.theory_timelines(params);
  REQUIRE(timelines.size() == 1);
  CHECK(timelines.front().lanes.size() == 8);
  int forwards = 0;
  for (const TimelineSpan& s : timelines.front().spans) forwards += s.kind == "F";
  CHECK(forwards == 8 * 8);  // every rank, every micro-batch
}

TEST_CASE("mesh lesson: the planner's worked check, 7B at 16 B a parameter on 2 x 2 x 2 with ZeRO-1: 7.0 + 10.5 GB") {
  const MeshLesson lesson;
  const MeshTheory t = test::typed_theory(lesson, {});
  CHECK(t.seven_b_zero1_bytes == 17.5e9);
  CHECK(t.planner.plans > 0);
  CHECK(t.planner.fitting > 0);
  CHECK_FALSE(t.planner.best.empty());
  CHECK(t.planner.rules.size() == 4);
}

TEST_CASE("mesh lesson: the planner predicts the run's bytes and shard exactly, and its step time is measured beside") {
  const MeshLesson lesson;
  RunControl control;
  const ParamValues params = parse_lesson_params(lesson, {"dp=1", "tp=2", "pp=4"}, BackendKind::Cpu, true);
  const RunResult run = run_lesson(lesson, params, BackendKind::Cpu, control);
  const MeshMeasured& m = test::measured_of<MeshMeasured>(run);
  CHECK(double(m.busiest_tp_bytes) == m.prediction.tp_bytes);
  CHECK(double(m.busiest_pp_bytes) == m.prediction.pp_bytes);  // a middle stage: both ways
  CHECK(double(m.busiest_dp_bytes) == m.prediction.dp_bytes);
  CHECK(double(m.largest_weight_bytes) == m.prediction.weight_bytes);
  CHECK(m.prediction.bubble == doctest::Approx(3.0 / 7));  // (p - 1) / (m + p - 1), m = 4
  CHECK(m.prediction.step_us > 0);
  CHECK(m.step_over_prediction > 0);
  // Its inputs were measured: a layer's FLOP (4 rows h f / tp forward, twice that backward) over the probed times.
  REQUIRE(run.theory_as<MeshTheory>() != nullptr);
  const MeshTheory& t = *run.theory_as<MeshTheory>();
  const double rows = t.rows_per_micro_batch, h = t.hidden, f_per_rank = t.inner_per_rank;
  CHECK(m.prediction.rank_gflops ==
        doctest::Approx(12 * rows * h * f_per_rank / (m.prediction.probe_forward_us + m.prediction.probe_backward_us) *
                        1e-3));
  CHECK(m.prediction.probe_tp_all_reduce_us > 0);
  CHECK(m.prediction.probe_dp_all_reduce_us == 0);  // dp = 1
  CHECK(m.prediction.link_alpha_us >= 0);
}

TEST_CASE("mesh lesson: the planner's link is fitted to the probed all-reduces") {
  const MeshParams p = test::typed_params(MeshLesson{}, {"dp=2", "tp=2", "pp=2"});
  const mesh::MeshModel model = p.mesh_model();
  const double tp_bytes = 4.0 * model.rows_per_micro_batch() * model.hidden;
  const double dp_bytes = 4.0 * double(model.layer_shard_elements());
  // Times of a link with alpha 30 us and beta 2 GB/s: a ring all-reduce of 2 ranks takes 2 steps and sends S.
  const auto ring_us = [](double bytes, double alpha_us, double beta_gbps) {
    return 2 * alpha_us + bytes / (beta_gbps * 1e3);
  };
  mesh::MeshCostProbe probe{.tp_all_reduce_us = ring_us(tp_bytes, 30, 2), .dp_all_reduce_us = ring_us(dp_bytes, 30, 2)};
  ProbedLink link = probed_link(p, probe);
  CHECK(link.probed);
  CHECK(link.link.latency_us == doctest::Approx(30));
  CHECK(link.link.bandwidth_gbps == doctest::Approx(2));
  // The larger message faster than the smaller (waiting for a core outweighed the bytes): no beta to fit, so beta is
  // assumed and alpha is the time the bytes leave, per step, averaged over the two.
  probe.tp_all_reduce_us = 400;
  probe.dp_all_reduce_us = 390;
  link = probed_link(p, probe);
  CHECK_FALSE(link.probed);
  CHECK(link.link.bandwidth_gbps == kRankLink.bandwidth_gbps);
  const double left_us = (400 - tp_bytes / (kRankLink.bandwidth_gbps * 1e3)) / 2 / 2 +
                         (390 - dp_bytes / (kRankLink.bandwidth_gbps * 1e3)) / 2 / 2;
  CHECK(left_us > 0);
  CHECK(link.link.latency_us == doctest::Approx(left_us));
}

TEST_CASE("mesh lesson: the planner's cluster and model are refused by their parameters' names") {
  const MeshLesson lesson;
  const ParamValues nodes = ParamValues::parse(lesson.params(), {"gpus=12"});
  CHECK_THROWS_WITH_AS(lesson.validate(nodes, BackendKind::Cpu), doctest::Contains("parameter 'gpus'"), BadInput);
  CHECK_THROWS_WITH_AS(ParamValues::parse(lesson.params(), {"model=gpt-9"}), doctest::Contains("parameter 'model'"),
                       BadInput);
}

TEST_CASE("mesh lesson: runs on CUDA, whose budget counts GPU 0's bytes; a CPU run's JSON has no GPU keys") {
  const MeshLesson lesson;
  CHECK(lesson.runs_on_cuda());
  if (!cuda_status().available)
    CHECK_THROWS_WITH_AS(lesson.validate(ParamValues::parse(lesson.params(), {}), BackendKind::Cuda),
                         doctest::Contains("of GPU memory but GPU 0 has 0 B"), BadInput);
  MeshMeasured m;
  const nlohmann::ordered_json cpu = m;
  CHECK_FALSE(cpu.contains("gemms_on_gpu"));
  CHECK_FALSE(cpu.contains("gpu_bytes"));
  MeshMeasured back;
  from_json(cpu, back);  // a recorded CPU run opens
  CHECK_FALSE(back.gemms_on_gpu);
  m.gemms_on_gpu = true;
  m.gpu_bytes = 4096;
  const nlohmann::ordered_json gpu = m;
  CHECK(gpu.at("gpu_bytes") == 4096);
  from_json(gpu, back);
  CHECK(back.gemms_on_gpu);
  CHECK(back.gpu_bytes == 4096);
}
