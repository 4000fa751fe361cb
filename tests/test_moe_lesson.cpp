// The mixture-of-experts lesson: its closed forms at the defaults (capacity, the all-to-all against the all-reduce,
// DeepEP's published dispatch, the dense MLP's parameters), bad input, and a run whose expert-parallel output equals
// the reference, whose link bytes equal the routing's and the ring's closed form, and whose balance loss falls when on.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/run_control.h"
#include "lessons/common/process_placement.h"
#include "lessons/common/run_lesson.h"
#include "lessons/moe/moe_lesson.h"
#include "tests/support/cli_capture.h"
#include "tests/support/typed_values.h"

using namespace dlsys;

TEST_CASE("moe: the closed forms at the defaults, on four ranks") {
  const MoeLesson lesson;
  const moe_lesson::MoeTheory t = test::typed_theory(lesson, {"ranks=4"});
  CHECK(t.capacity == 320);  // ceil(1.25 x 1024 x 2 / 8)
  CHECK(t.capacity_total == 4 * 320);
  CHECK(t.experts_per_rank == 2);
  CHECK(t.dispatch_bytes_per_rank == 1024.0 * 2 * 256 * 4);
  CHECK(t.off_rank_share == 0.75);
  CHECK(t.dispatch_off_rank_bytes == 0.75 * 1024 * 2 * 256 * 4);
  CHECK(t.all_to_all_bus_factor == 0.75);
  CHECK(t.all_reduce_bus_factor == 1.5);
  CHECK(t.all_reduce_bytes_per_rank == 2 * t.dispatch_off_rank_bytes);
  CHECK(t.link_gbps == 0.1);  // one byte per 10 ns: the bytes' wire times in microseconds
  CHECK(t.dispatch_wire_us == doctest::Approx(0.75 * 1024 * 2 * 256 * 4 * 10 / 1e3));
  CHECK(t.all_reduce_wire_us == doctest::Approx(2 * t.dispatch_wire_us));
  CHECK(t.deepep_dispatch_bytes == 7569408);
  CHECK(t.expert_parameters == 8 * 2 * 256 * 512);
  CHECK(t.active_parameters == 2 * 2 * 256 * 512 + 256 * 8 + 8);
  CHECK(t.dense_ffn == 1024);
  CHECK(t.dense_parameters == 2 * 256 * 1024);
  CHECK(t.dense_flop_per_token == 4.0 * 256 * 1024);
  CHECK(t.moe_flop_per_token == t.dense_flop_per_token + 2.0 * 256 * 8);
  CHECK(t.balance_loss_worst == 8);
  const moe_lesson::MoeTheory one = test::typed_theory(lesson, {"ranks=1"});
  CHECK(one.off_rank_share == 0.0);
  CHECK(one.all_reduce_bytes_per_rank == 0.0);
}

TEST_CASE("moe: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("moe");
  check({"experts=0"},
        "parameter 'experts': value '0' is not allowed (out of range); allowed: an integer from 1 to 64");
  check({"ranks=9"}, "parameter 'ranks': value '9' is not allowed (out of range); allowed: an integer from 1 to 8");
  check({"ranks=3"},
        "parameter 'ranks': value '3' does not divide E = 8 experts, so the ranks would hold different numbers of "
        "experts; allowed: 1, 2, 4, 8");
  check({"experts=2", "top_k=3"},
        "parameter 'top_k': value '3' is more experts than there are (E = 2); allowed: 1 to E");
  check({"capacity_factor=0"}, "parameter 'capacity_factor': value '0' is not allowed");
  check({"aux_loss=maybe"}, "parameter 'aux_loss': value 'maybe' is not allowed");
  check({"skew=-1"}, "parameter 'skew': value '-1' is not allowed");
  check({"tokens=2048", "hidden=1024", "ffn=4096", "max_minutes=0.1"}, "more than max_minutes");
  check({"launcher=process"}, "parameter 'launcher': value 'process' is not allowed");
  // Outside mpirun (or without MPI in the build) processes are refused, naming the parameter; under mpirun the
  // processes' refusals are tests/cli/mpi_moe_processes.sh's.
  check({"launcher=mpi"}, "parameter 'launcher': value 'mpi'");
}

TEST_CASE("moe: a run equals the reference, its link bytes equal the routing's, and the balance loss evens the load") {
  const MoeLesson lesson;
  RunControl control;
  for (const char* aux : {"aux_loss=off", "aux_loss=on"}) {
    CAPTURE(aux);
    const ParamValues params = ParamValues::parse(
        lesson.params(), {"tokens=64", "hidden=32", "ffn=64", "ranks=2", "repeats=1", "skew=1.5", aux});
    const RunResult run = run_lesson(lesson, params, BackendKind::Cpu, control);
    const auto& m = test::measured_of<moe_lesson::MoeMeasured>(run);
    CHECK(m.wrong == 0);
    CHECK(m.max_abs_err < 1e-5);
    CHECK(m.bytes_match_routing == 1);
    CHECK(m.dispatch_bytes.size() == 4);
    CHECK(m.dispatch_bytes_sent_per_rank == m.dispatch_bytes_routed_per_rank);
    // Two ranks at 0.1 GB/s (10 ns a byte): the busier of the two off-rank blocks, on the wire.
    const double busiest = double(std::max(m.dispatch_bytes[1], m.dispatch_bytes[2]));
    CHECK(m.dispatch_wire_busiest_us == doctest::Approx(busiest * 10 / 1e3));
    // The ring all-reduce of 64 x 2 x 32 floats on 2 ranks sends half of it per rank, twice: the tensor's size.
    CHECK(m.all_reduce_bytes_per_rank == 64.0 * 2 * 32 * 4);
    CHECK(m.phases.size() == 6);
    CHECK(m.phases[1].bytes_per_rank == 4.0 * 4);  // counts: E/N = 4 floats to the one peer
    CHECK(m.phases[4].bytes_per_rank > 0);         // the combine sends the rows back
    std::int64_t wanted = 0;
    for (std::int64_t w : m.wanted) wanted += w;
    CHECK(wanted == 2 * 64 * 2);
    CHECK(run.timelines.size() == 2);
    CHECK(m.sequential.us > 0);
    CHECK(m.overlapped.us > 0);
    if (m.balance_training.empty()) {
      CHECK(m.dropped > 0);  // skew 1.5 crowds the first experts past 1.25 x their share
    } else {
      CHECK(m.balance_training.size() == moe_lesson::kBalanceSteps + 1);
      CHECK(m.balance_loss < m.balance_loss_untrained);
    }
  }
}

TEST_CASE("moe: launcher=mpi with --backend cuda is refused naming both; a CPU run's JSON has no GPU keys") {
  const MoeLesson lesson;
  CHECK(lesson.runs_on_cuda());
  // The budget counts GPU 0's bytes on CUDA: without a GPU there is no memory to run in.
  if (!cuda_status().available)
    CHECK_THROWS_WITH_AS(lesson.validate(ParamValues::parse(lesson.params(), {"tokens=64"}), BackendKind::Cuda),
                         doctest::Contains("of GPU memory but GPU 0 has 0 B"), BadInput);
  const ParamValues mpi = ParamValues::parse(lesson.params(), {"launcher=mpi"});
  CHECK_THROWS_WITH_AS(
      lesson.validate(mpi, BackendKind::Cuda),
      "parameter 'launcher': value 'mpi' with --backend cuda is not supported: the GPU's experts serve "
      "rank threads of one process; allowed: launcher=threads with --backend cuda, or launcher=mpi "
      "with --backend cpu",
      BadInput);
  moe_lesson::MoeMeasured m;
  m.ranks = 1;
  m.dispatch_bytes = {0};
  nlohmann::ordered_json cpu = m;
  CHECK_FALSE(cpu.contains("experts_on_gpu"));
  CHECK_FALSE(cpu.contains("output_tolerance"));
  m.experts_on_gpu = true;
  m.experts_gpu_worst_share_of_bound = 0.25;
  m.output_tolerance = 1.5e-4;
  const nlohmann::ordered_json gpu = m;
  CHECK(gpu.at("experts_gpu_worst_share_of_bound") == 0.25);
  moe_lesson::MoeMeasured back;
  from_json(gpu, back);
  CHECK(back.experts_on_gpu);
  CHECK(back.output_tolerance == 1.5e-4);
  from_json(cpu, back);
  CHECK_FALSE(back.experts_on_gpu);
}

TEST_CASE("moe over processes: ranks takes the world size, and a recorded run says whether its ranks were processes") {
  CHECK(MoeLesson().process_launch_params(4, true) == std::vector<std::string>{"ranks=4"});
  RunResult run;
  CHECK_FALSE(ran_as_processes(run));
  run.params["launcher"] = "threads";
  CHECK_FALSE(ran_as_processes(run));
  run.params["launcher"] = "mpi";
  CHECK(ran_as_processes(run));
}
