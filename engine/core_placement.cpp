#include "engine/core_placement.h"

#include <pthread.h>
#include <sched.h>

namespace dlsys {

std::vector<int> allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}

bool keep_current_thread_on(const std::vector<int>& cores) {
  if (cores.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

CoreSplit split_cores_for_communication(int computing_threads, const std::vector<int>& allowed) {
  CoreSplit split;
  if (allowed.size() < 2 || computing_threads < int(allowed.size())) return split;
  split.compute.assign(allowed.begin(), allowed.end() - 1);
  split.communication.push_back(allowed.back());
  split.set_aside = true;
  return split;
}

}  // namespace dlsys
