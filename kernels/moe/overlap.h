#pragma once
// DualPipe's point on CPU ranks: while the all-to-all of one micro-batch travels, the experts of another compute. Two
// micro-batches A and B go through the expert-parallel layer (one ExpertParallelLayer each, same weights):
//   in sequence - each rank runs A's six phases, then B's, on one thread;
//   overlapped  - each rank has two threads, as a GPU has a compute stream and a communication stream: the compute
//                 thread routes A and B, runs A's experts while B is dispatched and B's while A is combined, then
//                 finishes both; the communication thread runs the counts, dispatch and combine all-to-alls, each as
//                 soon as its input is ready.
// On CPU threads the copies of an all-to-all take a core as the GEMMs do (a GPU has copy engines and NVLink), so what
// the overlap hides is bounded by the time ranks spend waiting for their peers, not by the whole all-to-all.
#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "kernels/moe/moe_layer.h"

namespace dlsys::moe {

// One phase of one micro-batch on one rank's lane (0: compute, 1: communication), in microseconds from the start.
struct PhaseSpan {
  int rank = 0;
  int lane = 0;
  int micro_batch = 0;
  Phase phase = Phase::Route;
  double start_us = 0, end_us = 0;
};

struct MicroBatches {
  std::array<ExpertParallelLayer*, 2> layers{};
  // Per micro-batch, per local rank of the groups (first_local_rank() onwards: every rank on threads, this process's
  // between processes): (tokens, H).
  std::array<std::vector<const float*>, 2> inputs;
  std::array<std::vector<float*>, 2> outputs;
};

// Both micro-batches on `group`'s threads, one after the other. Spans appended to `spans` when given.
void run_in_sequence(const MicroBatches& work, collectives::RankGroup& group, std::vector<PhaseSpan>* spans);
// Both overlapped: the compute side on `compute`'s threads, the all-to-alls on `comm`'s (the group the layers were
// made with). Same outputs as run_in_sequence.
void run_overlapped(const MicroBatches& work, collectives::RankGroup& compute, collectives::RankGroup& comm,
                    std::vector<PhaseSpan>* spans);

// The time of the overlapped schedule if communication and compute never slowed each other (a GPU's copy engines and
// SMs), from one micro-batch's phase times: route R, counts + dispatch D, experts X, combine C, finish F.
double ideal_overlapped_us(double route_us, double dispatch_us, double experts_us, double combine_us, double finish_us);

}  // namespace dlsys::moe
