#pragma once
// What the data-parallel lesson's steps draw before a run: the course's batch of 10 split over 5 workers on a small
// instance of the real model (real gradients), the chosen gradient's buckets, and the bytes each way moves against N.
#include <memory>
#include <string>
#include <vector>

#include "engine/params.h"
#include "engine/run_result.h"
#include "kernels/ddp/batch_split.h"
#include "kernels/ddp/buckets.h"
#include "kernels/ddp/trainer.h"
#include "lessons/common/step_data.h"
#include "lessons/ddp/ddp_params.h"
#include "lessons/ddp/ddp_values.h"

namespace dlsys::ddp {

// Rank 0's bytes per optimizer step at N ranks, both ways, from the closed forms.
struct RanksRow {
  int n = 0;
  double ring_sent_per_rank = 0;     // DDP: 2 (N-1)/N x wire gradient bytes (sent; the same is received)
  double dataparallel_sent = 0;      // DataParallel's master: (N-1) (model + rows)
  double dataparallel_received = 0;  // (N-1) x wire gradient bytes
  double ring_traffic = 0;           // DDP rank 0 sent + received: 2 x ring_sent_per_rank
  double dataparallel_traffic = 0;   // the master's sent + received
};

// Bytes a rank sends in the ring per optimizer step and per micro-step, for a wire format and an accumulation.
struct WireRow {
  std::string grad_dtype;
  int accumulate = 1;
  double per_optimizer_step = 0;  // 2 (N-1)/N x parameters x bytes per value
  double per_micro_step = 0;      // the same / k
};

struct DdpSteps final : StepData {
  training::StackShape split_shape;  // the small model the batch split runs on
  BatchSplit split;                  // the course's batch of 10 over 5 workers
  DdpTheory theory;
  TrainConfig chosen;
  std::vector<Bucket> buckets;      // the chosen gradient's, in reduction order
  std::vector<RanksRow> ranks;      // N = 1, 2, 4, ..., 64
  std::vector<WireRow> wire;        // fp32, bf16, fp16 x k = 1, 4
  std::vector<Timeline> simulated;  // one step at the chosen bucket and with one bucket, from assumed rates
};

std::shared_ptr<const DdpSteps> make_steps(const DdpParams& params, const DdpTheory& theory);

// The course's example: 10 rows, 5 workers, 2 rows each.
inline constexpr int kCourseBatch = 10, kCourseWorkers = 5;

}  // namespace dlsys::ddp
