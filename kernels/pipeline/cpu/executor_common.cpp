// What the CPU and CUDA pipeline executors share (see executor_common.h): initial values, the reference, the order
// of a one-at-a-time run, and the report of the timed steps.
#include "kernels/pipeline/executor_common.h"

#include <algorithm>
#include <cmath>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/pipeline/mlp_block.h"

namespace dlsys::pipeline {

void fill_uniform(float* data, std::size_t n, std::uint32_t seed, float scale) {
  fill_seeded_uniform({data, n}, spread_seed(seed), scale);
}
std::uint32_t weight_seed(int stage, int block, int which) { return 1000u * stage + 10u * block + which + 1; }
std::uint32_t input_seed(int micro_batch) { return 7000000u + micro_batch; }
float weight_scale(int hidden) { return 0.5f / std::sqrt(float(hidden)); }

int blocks_of(int stage, int stages, const ExecutorConfig& c) { return stage == stages - 1 ? c.last_stage_blocks : 1; }

double gradient_max_rel_err(const Schedule& s, const ExecutorConfig& c, MemoryLedger& ledger,
                            const PipelineGradient& pipeline_gradient) {
  using Buffer = HostBuffer<float>;
  const int h = c.hidden, rows = c.microbatch_rows * s.micro_batches();
  const std::size_t n = std::size_t(rows) * h, matrix = std::size_t(h) * h;
  struct Block {
    Buffer w1, w2, x, a;
  };
  std::vector<Block> blocks;
  std::vector<std::pair<int, int>> where;  // (stage, block in stage)
  for (int stage = 0; stage < s.stages; ++stage)
    for (int k = 0; k < blocks_of(stage, s.stages, c); ++k) {
      Block b{Buffer(ledger, "reference", matrix), Buffer(ledger, "reference", matrix), Buffer(ledger, "reference", n),
              Buffer(ledger, "reference", n)};
      fill_uniform(b.w1.data(), matrix, weight_seed(stage, k, 1), weight_scale(h));
      fill_uniform(b.w2.data(), matrix, weight_seed(stage, k, 2), weight_scale(h));
      blocks.push_back(std::move(b));
      where.emplace_back(stage, k);
    }
  // x of block 0: the micro-batches stacked, (m x rows, hidden).
  const std::size_t per_micro_batch = std::size_t(c.microbatch_rows) * h;
  for (int mb = 0; mb < s.micro_batches(); ++mb)
    fill_uniform(blocks[0].x.data() + mb * per_micro_batch, per_micro_batch, input_seed(mb), 1.0f);
  Buffer y(ledger, "reference", n), dy(ledger, "reference", n), dz(ledger, "reference", n), dx(ledger, "reference", n);
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    float* out = k + 1 < blocks.size() ? blocks[k + 1].x.data() : y.data();
    mlp::forward(rows, h, blocks[k].w1.data(), blocks[k].w2.data(), blocks[k].x.data(), blocks[k].a.data(), out);
  }
  for (std::size_t i = 0; i < n; ++i) dy[i] = y[i] / float(rows);  // loss = sum of y^2 / 2, over the batch's rows
  double worst = 0;
  Buffer dw1(ledger, "reference", matrix), dw2(ledger, "reference", matrix);
  for (std::size_t k = blocks.size(); k-- > 0;) {
    std::fill(dw1.data(), dw1.data() + matrix, 0.0f);
    std::fill(dw2.data(), dw2.data() + matrix, 0.0f);
    mlp::backward_input(rows, h, blocks[k].w1.data(), blocks[k].w2.data(), blocks[k].a.data(), dy.data(), dz.data(),
                        dx.data());
    mlp::backward_weight(rows, h, blocks[k].x.data(), blocks[k].a.data(), dy.data(), dz.data(), dw1.data(), dw2.data());
    std::swap(dy, dx);
    for (int which = 0; which < 2; ++which) {
      const float* ref = which == 0 ? dw1.data() : dw2.data();
      std::vector<double> sum(matrix, 0.0);
      pipeline_gradient(where[k].first, where[k].second, which, sum);
      double largest = 0, diff = 0;
      for (std::size_t i = 0; i < matrix; ++i) {
        largest = std::max(largest, double(std::fabs(ref[i])));
        diff = std::max(diff, std::fabs(sum[i] - ref[i]));
      }
      worst = std::max(worst, largest > 0 ? diff / largest : diff);
    }
  }
  return worst;
}

std::vector<std::pair<int, std::size_t>> legal_order(const Schedule& s) {
  struct Slot {
    double start;
    int device;
    std::size_t index;
  };
  const Timing unit = simulate(s, OpCosts{});
  std::vector<Slot> slots;
  for (int d = 0; d < s.devices(); ++d)  // timing lists follow the schedule's lists, so positions match
    for (std::size_t i = 0; i < unit.device_ops[d].size(); ++i) slots.push_back({unit.device_ops[d][i].start, d, i});
  std::stable_sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) {
    return a.start != b.start ? a.start < b.start : a.device != b.device ? a.device < b.device : a.index < b.index;
  });
  std::vector<std::pair<int, std::size_t>> order;
  for (const Slot& slot : slots) order.emplace_back(slot.device, slot.index);
  return order;
}

DurationModel measured_model(const std::vector<std::vector<double>>& durations_us) {
  DurationModel model;
  model.duration = [&durations_us](int d, std::size_t i, const Op&) { return durations_us[d][i]; };
  model.pair = [&durations_us](int d, std::size_t i) { return durations_us[d][i] + durations_us[d][i + 1]; };
  return model;
}

namespace {

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : summarize_us(std::move(v), "").median_us; }

OpDurations median_durations(const Schedule& s, const MeasuredStep& step) {
  std::vector<double> f, b, bf, w;
  for (int d = 0; d < s.devices(); ++d)
    for (std::size_t i = 0; i < s.device_ops[d].size(); ++i) {
      const Op& op = s.device_ops[d][i];
      const double t = step.durations_us[d][i];
      (op.kind == OpKind::F ? f : op.kind == OpKind::W ? w : op.split ? b : bf).push_back(t);
    }
  return {median_of(f), median_of(b), median_of(bf), median_of(w), median_of(step.copies_us)};
}

}  // namespace

void report_steps(const Schedule& s, const std::vector<MeasuredStep>& steps, ExecutionResult& result) {
  for (const MeasuredStep& st : steps) {
    result.step_makespans_us.push_back(st.timing.makespan);
    result.step_bubble_fractions.push_back(st.timing.bubble_fraction());
  }
  std::vector<std::size_t> index(steps.size());
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::sort(index.begin(), index.end(),
            [&](std::size_t a, std::size_t b) { return steps[a].timing.makespan < steps[b].timing.makespan; });
  const MeasuredStep& median = steps[index[index.size() / 2]];
  result.timing = median.timing;
  if (median.wall_us > 0) result.core_share = median.cpu_us / median.wall_us;
  annotate_waits(s, result.timing, 0.0);
  result.replay = simulate(s, measured_model(median.durations_us), 0.0);
  result.durations = median_durations(s, median);
}

}  // namespace dlsys::pipeline
