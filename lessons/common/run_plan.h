#pragma once
// A run's parts in order, each with a weight (roughly its share of the run's time). Starting a part checks for
// cancellation and reports the progress so far under the part's name, so a lesson states its parts once instead of
// computing fractions by hand.
#include <string>

#include "engine/run_control.h"

namespace dlsys {

class RunPlan {
 public:
  // `total_weight`: the sum of the weights of every part the run will start.
  RunPlan(RunControl& control, double total_weight) : control_(control), total_(total_weight) {}
  // Throws Cancelled when the user asked to stop; else reports done / total (below 1 until finish) and `what`.
  void start(const std::string& what, double weight = 1);
  // A planned part the run left out (a case too slow to run): counted as done, nothing reported.
  void skip(double weight = 1) { done_ += weight; }
  // Every part done: progress 1.
  void finish() const { control_.progress(1.0, "done"); }
  RunControl& control() const { return control_; }

 private:
  RunControl& control_;
  double total_ = 1;
  double done_ = 0;
};

}  // namespace dlsys
