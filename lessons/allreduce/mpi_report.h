#pragma once
// The table `run allreduce --set launcher=mpi` prints on rank 0: every implementation at every size in nccl-tests'
// columns, then the benchmark line.
#include <string>

#include "lessons/allreduce/mpi_values.h"

namespace dlsys::allreduce {

// The benchmark in one sentence: the lab's ring against its peer at the largest size (or what ran alone), #wrong.
std::string processes_bench_sentence(const AllreduceProcessesMeasured& measured);

std::string processes_report(const AllreduceProcessesMeasured& measured);

}  // namespace dlsys::allreduce
