#include "lessons/common/process_placement.h"

#include <fmt/format.h>

#include "engine/backend.h"
#include "engine/errors.h"

namespace dlsys {

namespace {

std::string launcher_name() { return mpi::launcher_in_environment().rfind("Open MPI", 0) == 0 ? "mpirun" : "srun"; }

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

}  // namespace

ParamSpec launcher_param(const std::string& processes_help) {
  return {.key = "launcher",
          .label = "ranks are",
          .type = ParamType::Choice,
          .default_text = "threads",
          .choices = kLauncherChoices,
          .help = "threads of this process, or mpi: one process per rank, started by mpirun or srun " + processes_help};
}

ProcessPlacement process_placement(const mpi::World& w) {
  ProcessPlacement out;
  out.hardware_threads = describe_cpu().threads;
  out.oversubscribed = w.local_size > out.hardware_threads;
  out.label = fmt::format("ranks are processes under {} on {}", launcher_name(), join(w.hosts));
  if (out.oversubscribed)
    out.label += fmt::format(" (oversubscribed: {} ranks share this host's {} hardware threads)", w.local_size,
                             out.hardware_threads);
  return out;
}

bool ran_as_processes(const RunResult& result) {
  const auto launcher = result.params.find("launcher");
  return launcher != result.params.end() && launcher->second == kLauncherChoices[std::size_t(Launcher::Mpi)];
}

void check_mpi_world(std::int64_t n, const std::string& n_text, const std::string& lesson, const std::string& key) {
  if (!mpi::built_with_mpi())
    throw BadInput(
        "parameter 'launcher': value 'mpi' is not allowed: this build has no MPI (CMake found none; install "
        "openmpi-bin and libopenmpi-dev, then build again); allowed: threads");
  const mpi::World* w = mpi::world();
  if (w == nullptr)
    throw BadInput(fmt::format(
        "parameter 'launcher': value 'mpi' needs one process per rank started by an MPI launcher: run it as "
        "`mpirun -np 2 dlsys-lab run {} --set launcher=mpi` (or with srun); here (the GUI, or a start without "
        "mpirun) allowed: threads",
        lesson));
  if (w->size < 2)
    throw BadInput(
        "parameter 'launcher': value 'mpi' needs at least 2 ranks, and this MPI world has 1 process: start it with "
        "`mpirun -np 2` (or more)");
  if (n != w->size)
    throw BadInput(fmt::format(
        "parameter '{}': value '{}' is not allowed with launcher=mpi in a world of {} processes (one rank per "
        "process); allowed: {}, or leave {} out and it takes the world size",
        key, n_text, w->size, w->size, key));
}

}  // namespace dlsys
