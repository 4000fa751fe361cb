#pragma once
// What `run allreduce --set launcher=mpi` measured: ranks are processes, the lab's ring over MPI point-to-point
// beside MPI's own collectives, every row in nccl-tests' columns. `--json` writes these under "measured" with these
// field names as keys.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::allreduce {

// One collective at one size, timed the same way for every implementation: a barrier, then back-to-back calls; a
// sample is the slowest rank's time; the row shows the median sample (and the fastest and slowest).
struct ProcessRow {
  std::string collective;      // "allreduce", "reduce_scatter", "all_gather"
  std::string implementation;  // "lab ring (MPI_Sendrecv)", "MPI_Allreduce", "NCCL (ncclAllReduce)", ...
  double bytes = 0;
  double count = 0;  // float32 elements
  double time_us = 0, time_min_us = 0, time_max_us = 0;
  double algbw_gbps = 0, busbw_gbps = 0;  // busbw: all-reduce 2(N-1)/N, reduce-scatter and all-gather (N-1)/N
  std::int64_t wrong = 0;                 // summed over ranks
  int calls_per_sample = 1;
};

struct AllreduceProcessesMeasured {
  std::string launcher = "mpi";
  std::string backend;  // "cpu" or "cuda"
  int world_size = 0;
  std::vector<std::string> hosts;
  std::string mpi_library;   // the first line of MPI_Get_library_version
  std::string label;         // what the screen and the report say about the ranks
  int hardware_threads = 0;  // of rank 0's host
  int ranks_on_this_host = 0;
  bool oversubscribed = false;  // more ranks on rank 0's host than its hardware threads
  std::vector<ProcessRow> rows;
  std::int64_t wrong = 0;  // over every row
  // The benchmark: at the largest size, the lab's ring busbw over the busbw of MPI's collective of the same kind.
  double bench_bytes = 0;
  std::string bench_peer;                              // e.g. "MPI_Allreduce", "NCCL (ncclAllReduce)"
  double lab_ring_busbw_gbps = 0, mpi_busbw_gbps = 0;  // mpi_: the peer's (NCCL's on GPUs)
  // Against MPI's collective on the CPU, NCCL's on GPUs; none when either did not run.
  NullableField<double> lab_ring_fraction_of_mpi_busbw;  // null on the GPU path, so a script finds the key either way
  double bench_expected_fraction = 0.8;
  bool bench_met = false;
  // The ring between processes run once more on the step-through's tiny inputs with its per-step record, gathered on
  // rank 0 and compared with the threads' ring's record of the same inputs (the lesson's steps draw that one).
  int record_steps = 0;                 // rows of the record: the start and every step (CPU path; 0 on GPUs)
  bool record_matches_threads = false;  // every rank's chunks, values and contributors, step for step
  std::vector<std::string> caveats;
};

// Read back from a recorded run (`dlsys-lab --open-run FILE.json`); a missing or mistyped key throws JsonKeyError.
DLSYS_VALUES_JSON(ProcessRow, collective, implementation, bytes, count, time_us, time_min_us, time_max_us, algbw_gbps,
                  busbw_gbps, wrong, calls_per_sample)
DLSYS_VALUES_JSON(AllreduceProcessesMeasured, launcher, backend, world_size, hosts, mpi_library, label,
                  hardware_threads, ranks_on_this_host, oversubscribed, wrong, bench_bytes, bench_peer,
                  lab_ring_busbw_gbps, mpi_busbw_gbps, lab_ring_fraction_of_mpi_busbw, bench_expected_fraction,
                  bench_met, record_steps, record_matches_threads, caveats, rows)

}  // namespace dlsys::allreduce
