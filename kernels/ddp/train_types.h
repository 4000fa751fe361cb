#pragma once
// What the data-parallel trainers (trainer.h on CPU threads, ddp_cuda.h on GPUs) take and give back. Plain C++17,
// for CUDA files too.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ddp/buckets.h"
#include "kernels/ddp/wire_format.h"
#include "kernels/training/mlp_stack.h"

namespace dlsys::ddp {

enum class SyncMode { Ddp, DataParallel };

struct TrainConfig {
  training::StackShape shape;
  int ranks = 2;
  int global_batch = 64;  // rows per optimizer step, all ranks together
  int accumulate = 1;     // micro-steps per optimizer step; DDP all-reduces on the last only (no_sync before it)
  std::int64_t bucket_elements = 1 << 20;
  WireFormat wire = WireFormat::Fp32;
  SyncMode mode = SyncMode::Ddp;
  int steps = 3;  // optimizer steps; step s trains on rows [s B, (s+1) B) of the data set
  float learning_rate = 0.05f;
  std::uint32_t seed = 7;

  int rows_per_micro_step() const { return global_batch / (ranks * accumulate); }
};

// One op on a rank, in microseconds since the step's start (the earliest rank's start).
struct OpSpan {
  int rank = 0;
  bool comm_lane = false;  // on the rank's communication thread (DDP), or the master's copies (DataParallel)
  std::string kind;        // "F", "B", "optimizer", "all_reduce" (DDP), "comm" (the DataParallel master's copies)
  std::string label;       // "F", "B7", "bucket 0", "replicate", ...
  double start_us = 0, end_us = 0;
};

// One rank's optimizer step. Definitions (also the lesson's):
//   step_us         the step's wall time on this rank, from the step's start to the end of its optimizer step.
//   compute_us      time the rank's compute thread spends in forward, backward and the optimizer step.
//   comm_us         time spent in collectives: the sum of the bucket all-reduces (DDP; including waiting for the
//                   other ranks to reach the same bucket), or the master's copies, gathers and summation
//                   (DataParallel).
//   hidden_comm_us  the part of comm_us that ran while this rank's last backward was still running.
//   exposed_comm_us time the compute thread waits for communication: from the end of its backward to the end of its
//                   last all-reduce (DDP; 0 if they ended first); the master's whole comm_us (DataParallel).
//   idle_us         step_us - compute_us - exposed_comm_us: waiting for other ranks, or for a core.
struct RankStep {
  double step_us = 0, compute_us = 0, comm_us = 0, hidden_comm_us = 0, exposed_comm_us = 0, idle_us = 0;
};

struct TrainResult {
  std::vector<float> weights;                      // rank 0's after the last step
  bool replicas_identical = true;                  // every rank's weights bit-equal to rank 0's at the end (DDP)
  std::vector<std::vector<RankStep>> steps;        // [step][rank]
  std::vector<OpSpan> last_step_spans;             // every op of the last step, every rank
  std::vector<Bucket> buckets;                     // DDP's, in reduction order
  std::int64_t rank0_bytes_sent_per_step = 0;      // counted: ring links (DDP), copies out of the master (DP)
  std::int64_t rank0_bytes_received_per_step = 0;  // counted
  // DDP on rank threads: true when one core was kept for the communication threads (engine/core_placement.h).
  bool communication_core_set_aside = false;
};

}  // namespace dlsys::ddp
