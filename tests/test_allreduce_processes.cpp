// The allreduce lesson's ranks-as-processes launcher, in-process: without an MPI launcher around the process (as
// under ctest), launcher=mpi is refused with exit 2 and a message saying what to do, whether or not the build has
// MPI; the per-rank oracle and the launch defaults are checked exactly. Runs under mpirun: tests/cli/mpi_processes.sh.
#include <doctest/doctest.h>

#include <cstdlib>
#include <limits>
#include <vector>

#include "engine/mpi_world.h"
#include "kernels/collectives/inputs.h"
#include "kernels/collectives/rank_reference.h"
#include "kernels/collectives/ring_schedule.h"
#include "lessons/allreduce/mpi_run.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;
using collectives::Op;

TEST_CASE("allreduce launcher=mpi without mpirun: exit 2 saying how to start it, or that the build has no MPI") {
  if (mpi::built_with_mpi() && !mpi::launcher_in_environment().empty()) {
    MESSAGE("skipped: this test process was itself started by an MPI launcher");
    return;
  }
  const auto r = testing::run_lesson_captured("allreduce", {"launcher=mpi", "sizes=1KiB", "bytes=1KiB"}, true);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("parameter 'launcher': value 'mpi'") != std::string::npos);
  CHECK(r.err.find(mpi::built_with_mpi() ? "mpirun -np 2" : "this build has no MPI") != std::string::npos);
  // The threads launcher named explicitly is today's run.
  const auto threads =
      testing::run_lesson_captured("allreduce", {"launcher=threads", "n=2", "sizes=1KiB", "bytes=1KiB", "repeats=1"});
  CHECK(threads.code == 0);
}

TEST_CASE("allreduce over processes: n takes the world size, the sweep reaches 64 MiB unless quick") {
  CHECK(allreduce::process_launch_params(3, false) == std::vector<std::string>{"n=3", "sizes=1KiB..64MiB"});
  CHECK(allreduce::process_launch_params(2, true) == std::vector<std::string>{"n=2"});
}

TEST_CASE("per-rank oracle: right results count 0 wrong, each changed element counts once") {
  // 3 ranks, 10 elements (chunks of 4, 3, 3): build each rank's correct output by hand, as the ring and MPI lay it.
  const int n = 3;
  const std::int64_t count = 10;
  for (const int shift : {0, 1}) {
    for (const Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather}) {
      for (int rank = 0; rank < n; ++rank) {
        std::vector<float> out(count, std::numeric_limits<float>::quiet_NaN());
        const int mine = collectives::mod(rank + shift, n);
        for (int c = 0; c < n; ++c) {
          if (op == Op::ReduceScatter && c != mine) continue;
          for (std::int64_t i = collectives::chunk_begin(count, n, c); i < collectives::chunk_begin(count, n, c + 1);
               ++i) {
            float sum = 0;
            for (int r = 0; r < n; ++r) sum += collectives::input_value(r, i);
            out[i] = op == Op::AllGather ? collectives::input_value(collectives::mod(c - shift, n), i) : sum;
          }
        }
        const collectives::ChunkOwnership ownership{shift};
        CHECK(collectives::count_wrong_on_rank(op, out.data(), count, rank, n, ownership) == 0);
        const std::int64_t probe = collectives::chunk_begin(count, n, mine);  // inside the rank's own chunk
        out[probe] += 1;
        CHECK(collectives::count_wrong_on_rank(op, out.data(), count, rank, n, ownership) == 1);
      }
    }
  }
}
