#pragma once
// Which cores this process may run on, and keeping a thread on some of them. Used where a lesson emulates devices
// that each have their own engine (a GPU's communication stream, a NIC) with threads that would otherwise take turns
// with the computing threads for the same cores.
#include <vector>

namespace dlsys {

// The cores the scheduler lets this process use (its affinity mask, which a container or taskset may narrow), in
// increasing order; empty if the mask cannot be read.
std::vector<int> allowed_cores();

// Keeps the calling thread on `cores` from now on; false (and nothing changed) if `cores` is empty or refused.
bool keep_current_thread_on(const std::vector<int>& cores);

// Cores for threads that compute and threads that communicate. When there are at least as many computing threads as
// cores, the communicating threads would only run in the gaps between the computing threads' time slices, and no
// communication could overlap computation as it does on hardware with its own engine for it: then the last allowed
// core is set aside for communication and the computing threads share the others (`set_aside` true). Otherwise (or
// with a single core) both lists are empty: every thread may run anywhere.
struct CoreSplit {
  std::vector<int> compute, communication;
  bool set_aside = false;
};
CoreSplit split_cores_for_communication(int computing_threads, const std::vector<int>& allowed);

}  // namespace dlsys
