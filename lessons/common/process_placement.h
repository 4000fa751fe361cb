#pragma once
// Where the ranks of a run with one rank per process (`--set launcher=mpi`) are, in the words every such lesson shows:
// "ranks are processes under mpirun on <hosts>", and whether this host has more ranks than hardware threads.
#include <string>
#include <vector>

#include "engine/mpi_world.h"
#include "engine/params.h"
#include "engine/run_result.h"

namespace dlsys {

// Where a lesson's ranks run, in the order of kLauncherChoices (the `launcher` parameter's choices): threads of this
// process, or one MPI process each.
enum class Launcher { Threads, Mpi };
inline const std::vector<std::string> kLauncherChoices = {"threads", "mpi"};

// The `launcher` parameter: threads by default. `processes_help` says what launcher=mpi means for this lesson, after
// "threads of this process, or mpi: one process per rank, started by mpirun or srun".
ParamSpec launcher_param(const std::string& processes_help);

struct ProcessPlacement {
  std::string label;  // the sentence, with "(oversubscribed: ...)" when it is
  int hardware_threads = 0;
  bool oversubscribed = false;  // more ranks on this host than hardware threads
};

ProcessPlacement process_placement(const mpi::World& world);

// Whether `result` was measured with ranks as processes (its `launcher` parameter is mpi), for its report and views.
bool ran_as_processes(const RunResult& result);

// Refuses (BadInput) a `launcher=mpi` run of `lesson` that cannot be one: no MPI in the build, no launcher around
// this process, a world of one process, or a rank count `n` (written `n_text`, the lesson's parameter `key`) other
// than the world size.
void check_mpi_world(std::int64_t n, const std::string& n_text, const std::string& lesson,
                     const std::string& key = "n");

}  // namespace dlsys
