#pragma once
// Where the ranks of a run with one rank per process (`--set launcher=mpi`) are, in the words every such lesson shows:
// "ranks are processes under mpirun on <hosts>", and whether this host has more ranks than hardware threads.
#include <string>

#include "engine/mpi_world.h"
#include "engine/params.h"

namespace dlsys {

struct ProcessPlacement {
  std::string label;  // the sentence, with "(oversubscribed: ...)" when it is
  int hardware_threads = 0;
  bool oversubscribed = false;  // more ranks on this host than hardware threads
};

ProcessPlacement process_placement(const mpi::World& world);

// Refuses (BadInput) a `launcher=mpi` run of `lesson` that cannot be one: no MPI in the build, no launcher around
// this process, a world of one process, or a rank count `n` other than the world size.
void check_mpi_world(const ParamValues& params, const std::string& lesson);
// The same for a lesson whose parameters are read: n and n as the user wrote it.
void check_mpi_world(std::int64_t n, const std::string& n_text, const std::string& lesson);

}  // namespace dlsys
