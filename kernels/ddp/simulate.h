#pragma once
// One DDP step simulated from assumed rates, for the timeline before a run (and `export` without --run): what the
// schedule of backward and bucket all-reduces looks like when nothing else competes for the machine. Every rank is
// identical here, so one rank is drawn.
#include <string>
#include <vector>

#include "kernels/ddp/buckets.h"
#include "kernels/ddp/trainer.h"

namespace dlsys::ddp {

struct AssumedRates {
  double gflops = 64;          // per rank, forward and backward GEMMs
  double link_gbps = 10;       // one direction, per rank
  double latency_us = 10;      // per ring step (handshake, launch)
  double optimizer_gbps = 10;  // the SGD step reads weights and gradients, writes weights
};

// Spans of rank 0 in microseconds: "F", one "B" per layer, one "all_reduce" per bucket (each starting when its last
// layer's backward ends and the previous all-reduce is done), "optimizer". Ring time per bucket of S bytes: 2 (N-1) x
// (latency + S / N / link rate).
std::vector<OpSpan> simulate_step(const TrainConfig& config, const AssumedRates& rates);

}  // namespace dlsys::ddp
