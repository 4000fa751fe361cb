#include "lessons/common/process_placement.h"

#include <fmt/format.h>

#include "engine/backend.h"

namespace dlsys {

namespace {

std::string launcher_name() { return mpi::launcher_in_environment().rfind("Open MPI", 0) == 0 ? "mpirun" : "srun"; }

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

}  // namespace

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

}  // namespace dlsys
