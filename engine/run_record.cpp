// Where and when a run was made, for the "recorded" object of every run file.
#include <unistd.h>

#include <array>
#include <ctime>

#include "engine/run_result.h"

#ifndef DLSYS_LAB_VERSION
#error "DLSYS_LAB_VERSION is set by engine/CMakeLists.txt from the project's version"
#endif

namespace dlsys {

const char* lab_version() { return DLSYS_LAB_VERSION; }

RunRecord record_here_and_now() {
  RunRecord record;
  record.lab_version = lab_version();
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) record.host = host.data();
  if (record.host.empty()) record.host = "unknown";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> stamp{};
  std::strftime(stamp.data(), stamp.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  record.date_utc = stamp.data();
  return record;
}

}  // namespace dlsys
