#pragma once
// The allreduce lesson with ranks as processes (`--set launcher=mpi` under mpirun or srun): one rank per process,
// the lab's ring over MPI point-to-point beside MPI's own collectives on the CPU; on GPUs the lab's ring over CUDA IPC
// beside NCCL across processes.
#include <string>
#include <vector>

#include "lessons/allreduce/allreduce_params.h"
#include "lessons/common/lesson.h"

namespace dlsys::allreduce {

// What a run with one rank per process starts from, before the user's assignments: n is the world size, and the
// sweep reaches 64 MiB (the benchmark's size) unless `quick`.
std::vector<std::string> process_launch_params(int world_size, bool quick);

// launcher=mpi: refuses (BadInput) a build without MPI, no MPI world (the GUI, a plain start), a world of one, n other
// than the world size, what the processes cannot run, and sizes that do not fit in memory, before anything is made.
void check_process_run(const AllreduceParams& params, BackendKind backend);

// Every rank calls it; rank 0's result holds the measurements (the others hold the same rows).
RunResult run_over_processes(const Lesson& lesson, const AllreduceParams& params, RunContext& context);

}  // namespace dlsys::allreduce
