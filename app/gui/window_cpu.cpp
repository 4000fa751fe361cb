#include "app/gui/window_cpu.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dlsys::gui {

namespace {

// utime + stime of one thread, in seconds, and whether its name says it draws for the window. The name is the
// field in parentheses; a name may hold spaces or parentheses, so the fields after it are read from the last ')'.
struct ThreadCpu {
  double seconds = 0;
  bool rasteriser = false;
};

ThreadCpu read_thread(const std::filesystem::path& stat_path) {
  std::ifstream file(stat_path);
  std::string line;
  if (!std::getline(file, line)) return {};
  const auto open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  const std::string name = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  double utime = 0, stime = 0;
  // Fields 3..13 come before utime (14) and stime (15).
  for (int i = 3; i <= 13 && rest >> field; ++i) {
  }
  rest >> utime >> stime;
  const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
  return {(utime + stime) / (ticks_per_s > 0 ? ticks_per_s : 100.0), name.rfind("llvmpipe", 0) == 0};
}

}  // namespace

double window_cpu_seconds() {
  const std::string main_tid = std::to_string(getpid());
  double seconds = 0;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    const ThreadCpu thread = read_thread(task.path() / "stat");
    if (thread.rasteriser || task.path().filename() == main_tid) seconds += thread.seconds;
  }
  return seconds;
}

}  // namespace dlsys::gui
