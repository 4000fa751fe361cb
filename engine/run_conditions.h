#pragma once
// What else the machine was doing while a run measured: how many cores other processes kept busy (from the kernel's
// CPU counters in /proc/stat, less this process's own CPU time from getrusage) and the load average. A timing taken
// while other programs compete for the cores is slower and noisier than the lesson's theory assumes; the screen must
// say so rather than let such a number refute the lesson.
#include <string>

namespace dlsys {

struct RunConditions {
  double wall_s = 0;
  double own_cpu_cores = 0;     // this process's CPU time over the wall time: cores it kept busy on average
  double other_busy_cores = 0;  // cores other processes kept busy on average
  // Cores the lab's own window kept busy drawing while the run measured (a part of own_cpu_cores; 0 from the
  // command line, which draws nothing).
  double window_cpu_cores = 0;
  int hardware_threads = 0;
  double load_average = 0;  // the 1-minute load average at the end

  // A quarter of a core or more taken from a run: enough to stretch and scatter its timings.
  static constexpr double kDisturbingCores = 0.25;
  // Other processes took that much.
  bool disturbed() const { return other_busy_cores >= kDisturbingCores; }
  // The lab's own window took that much drawing itself while the run measured: with Mesa's software renderer a frame
  // at 1920x1080 costs about 30 ms, and moving the mouse over the window draws frames at full rate.
  bool window_disturbed() const { return window_cpu_cores >= kDisturbingCores; }
  // One plain sentence for the screen: what disturbed the run, how much, and what to do; empty when nothing did.
  std::string sentence() const;
};

// Starts counting when made; finish() reads the counters again.
class RunConditionsProbe {
 public:
  RunConditionsProbe();
  RunConditions finish() const;

 private:
  double start_wall_s_ = 0, start_busy_s_ = 0, start_own_s_ = 0;
};

}  // namespace dlsys
