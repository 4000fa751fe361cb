#pragma once
// What the CPU and the CUDA pipeline executors share, so that their results compare: the deterministic weights and
// inputs, the single-device reference their weight gradients are checked against, an order in which ops may run one
// at a time, and how the timed steps are reported. Host code only (nvcc's host compiler reads it too: C++17).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "engine/ledger.h"
#include "kernels/pipeline/executor.h"

namespace dlsys::pipeline {

// Deterministic values in [-scale, scale): every executor and the reference see the same weights and inputs.
void fill_uniform(float* data, std::size_t n, std::uint32_t seed, float scale);
std::uint32_t weight_seed(int stage, int block, int which);  // which: 1 = W1, 2 = W2
std::uint32_t input_seed(int micro_batch);
float weight_scale(int hidden);
// MLP blocks of a model stage: the last one holds config.last_stage_blocks, every other one 1.
int blocks_of(int stage, int stages, const ExecutorConfig& config);

// Adds the pipeline's weight gradient of block `block` of model stage `stage` (which: 0 = dW1, 1 = dW2) into `sum`
// (hidden x hidden, zeroed by the caller), over every device that holds a replica of that stage.
using PipelineGradient = std::function<void(int stage, int block, int which, std::vector<double>& sum)>;
// Runs one device over the whole batch (m x rows rows at once, on the CPU) and returns the worst weight matrix's
// max |g - g_ref| / max |g_ref|. Its buffers are recorded in `ledger` under "reference".
double gradient_max_rel_err(const Schedule& schedule, const ExecutorConfig& config, MemoryLedger& ledger,
                            const PipelineGradient& pipeline_gradient);

// Every op as (device, index in the device's list), in the order a unit-cost simulation starts them (ties: lower
// device, then lower index). Run one at a time in this order, every op finds its inputs ready.
std::vector<std::pair<int, std::size_t>> legal_order(const Schedule& schedule);

// One timed training step.
struct MeasuredStep {
  Timing timing;                                  // measured, or replayed from the op durations
  std::vector<std::vector<double>> durations_us;  // per device, per op in list order
  std::vector<double> copies_us;                  // every message copy
  double cpu_us = 0, wall_us = 0;                 // CPU concurrent mode: CPU and wall time inside ops, all devices
};

// Each op's own duration (a pair: its two halves one after the other), for replaying a step on the schedule without
// its waiting overheads. Keeps a reference to `durations_us`.
DurationModel measured_model(const std::vector<std::vector<double>>& durations_us);

// Fills the result from the timed steps: every step's makespan and bubble fraction, then the median step (by
// makespan): its timeline with waits annotated, its op durations replayed on the schedule, its median op durations
// and its core share.
void report_steps(const Schedule& schedule, const std::vector<MeasuredStep>& steps, ExecutionResult& result);

}  // namespace dlsys::pipeline
