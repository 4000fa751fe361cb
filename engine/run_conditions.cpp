#include "engine/run_conditions.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace dlsys {

namespace {

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds of CPU time all cores spent outside idle and I/O wait since boot (the first line of /proc/stat).
double machine_busy_seconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") return 0;
  const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
  return (user + nice + system + irq + softirq + steal) / (ticks_per_s > 0 ? ticks_per_s : 100.0);
}

double own_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double load_average_1min() {
  std::ifstream loadavg("/proc/loadavg");
  double one = 0;
  loadavg >> one;
  return one;
}

}  // namespace

RunConditionsProbe::RunConditionsProbe()
    : start_wall_s_(wall_seconds()), start_busy_s_(machine_busy_seconds()), start_own_s_(own_cpu_seconds()) {}

RunConditions RunConditionsProbe::finish() const {
  RunConditions c;
  c.wall_s = wall_seconds() - start_wall_s_;
  c.hardware_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.load_average = load_average_1min();
  if (c.wall_s <= 0) return c;
  const double own_s = own_cpu_seconds() - start_own_s_;
  const double busy_s = machine_busy_seconds() - start_busy_s_;
  c.own_cpu_cores = own_s / c.wall_s;
  // The kernel's counters tick at 100 Hz: a run shorter than a few ticks cannot say much, and rounding may make
  // the difference slightly negative.
  c.other_busy_cores = std::clamp((busy_s - own_s) / c.wall_s, 0.0, double(c.hardware_threads));
  return c;
}

std::string RunConditions::sentence() const {
  // Each cause with the cores it took, what to do about it, and its words; the larger first, since a band that cannot
  // show the whole sentence shows its start.
  struct Cause {
    double cores;
    std::string what, remedy;
  };
  std::vector<Cause> causes;
  if (disturbed())
    causes.push_back(
        {other_busy_cores,
         fmt::format("other programs kept {:.1f} of this machine's {} cores busy", other_busy_cores, hardware_threads),
         "close what you can"});
  if (window_disturbed())
    causes.push_back({window_cpu_cores,
                      fmt::format("this window kept {:.2f} of a core busy drawing itself", window_cpu_cores),
                      "keep the mouse still while it runs"});
  if (causes.empty()) return {};
  std::stable_sort(causes.begin(), causes.end(), [](const Cause& a, const Cause& b) { return a.cores > b.cores; });
  std::string what = causes[0].what, remedy = causes[0].remedy;
  what[0] = char(std::toupper(static_cast<unsigned char>(what[0])));
  if (causes.size() > 1) {
    what += ", and " + causes[1].what;
    remedy += ", " + causes[1].remedy;
  }
  return fmt::format(
      "{} during this run, so its timings are slower and more scattered than the theory assumes: {} and press Run "
      "again.",
      what, remedy);
}

}  // namespace dlsys
