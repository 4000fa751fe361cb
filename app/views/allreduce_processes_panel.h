#pragma once
// The allreduce lesson's measured step for a run whose ranks were processes (`launcher=mpi`, recorded with --json
// under mpirun and opened with --open-run; the window itself never starts MPI): who ran where, busbw against size for
// the lab's ring and MPI's collectives, nccl-tests' table and the benchmark sentence.
#include "app/views/view.h"
#include "lessons/allreduce/mpi_values.h"

namespace dlsys::gui {

void draw_allreduce_processes_measured(const ViewContext& ctx, const allreduce::AllreduceProcessesMeasured& m);

}  // namespace dlsys::gui
