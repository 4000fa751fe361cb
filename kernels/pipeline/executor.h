#pragma once
// The real pipeline: p stage workers run a schedule's op lists on real MLP blocks (mlp_block.h). A forward computes
// and stashes its activations and sends its output to the next stage through a mailbox (a real copy into a buffer
// the receiver owns); a backward computes the input gradient (B) and, at once or later, the weight gradient (W);
// weight gradients accumulate over the micro-batches. Every op is timestamped: that is the measured timeline.
//
// Two modes:
//   concurrent - one thread per device, ops wait for their inputs for real; idle time is real waiting.
//                Only when p <= hardware threads: with fewer cores, stages would time-share a core and their idle
//                time would mean nothing.
//   replayed   - each op runs for real, one at a time in a legal order, and its measured duration is replayed on the
//                schedule by the simulator (no waiting overheads, no contention between stages).
// The CUDA executor (executor_cuda.h) has the same contract, with streams for threads and a third mode, emulated:
// the devices are streams sharing one GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "engine/run_control.h"
#include "kernels/pipeline/schedule.h"
#include "kernels/pipeline/simulate.h"

namespace dlsys::pipeline {

enum class ExecutionMode { Auto, Concurrent, Replayed };

struct ExecutorConfig {
  int hidden = 512;           // MLP width
  int microbatch_rows = 64;   // rows (samples) per micro-batch
  int last_stage_blocks = 1;  // the last model stage holds this many blocks, every other stage one (imbalance)
  ExecutionMode mode = ExecutionMode::Auto;
  int hardware_threads = 0;  // 0: ask the system
  int warmup_steps = 1;
  // CPU: keep warming up until this much time has passed. OpenBLAS's pool threads spin for about 2^28 cycles after
  // the library starts and after every multi-threaded call; until they sleep they take a core from the stages, and
  // a run started at once (the first in a process, or right after a matmul run) measured twice the bubble.
  double min_warmup_ms = 250;
  int repeats = 3;  // timed steps; the median one (by makespan) is reported
};

// Median measured durations (us) of each kind of op in the reported step.
struct OpDurations {
  double f_us = 0, b_us = 0, b_full_us = 0, w_us = 0;  // b: split backward (input gradient); b_full: B and W at once
  double copy_us = 0;                                  // one message copy (inside the sending op)
};

struct ExecutionResult {
  std::string mode;  // "concurrent" | "replayed" | "emulated" (CUDA: several pipeline devices on one GPU)
  int hardware_threads = 0;
  Timing timing;                                    // the median step; times in us from the step's start
  Timing replay;                                    // that step's op durations replayed on the schedule, no overheads
  std::vector<double> step_makespans_us;            // every timed step
  std::vector<double> step_bubble_fractions;        // every timed step
  std::vector<std::int64_t> peak_activation_bytes;  // per device, from the memory ledger
  // CPU time the stage threads got while inside their ops, over the ops' wall time (concurrent mode): below 1 when
  // other processes or the other stage shared their core, which stretches ops and the waits behind them.
  double core_share = 1;
  double grad_max_rel_err = 0;  // vs one device over the whole batch: max |g - g_ref| / max |g_ref| per matrix
  OpDurations durations;
  // CUDA executor only: the GPUs the pipeline devices ran on, whether several shared one, and what that changes.
  int gpus = 0;
  bool emulated = false;
  std::vector<std::string> notes;
};

// Ledger tag of device d's activations (stashed inputs and outputs of its blocks, in-flight gradients for W).
std::string activation_tag(int device);
// Bytes the run will hold at most (weights, gradients, the worst case of stashed activations, the reference).
std::int64_t estimate_executor_bytes(const Schedule& schedule, const ExecutorConfig& config);
// Whether `mode` may run concurrently on this machine; Auto picks concurrent when p <= hardware threads.
ExecutionMode resolve_mode(ExecutionMode mode, int devices, int hardware_threads);

// Runs `repeats` (after `warmup_steps`) training steps of the schedule. Throws Cancelled between steps.
ExecutionResult execute_schedule(const Schedule& schedule, const ExecutorConfig& config, MemoryLedger& ledger,
                                 const RunControl& control);

}  // namespace dlsys::pipeline
