// nn.DataParallel on rank threads of this process: rank 0, the master, replicates the model and scatters the batch
// each step, every rank computes, then the master gathers every gradient, sums and steps alone.
#include <cstring>
#include <memory>

#include "engine/abortable_barrier.h"
#include "engine/core_placement.h"
#include "kernels/ddp/cpu/replica.h"

namespace dlsys::ddp {

namespace {

class DataParallelOnThreads {
 public:
  DataParallelOnThreads(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger)
      : c_(c), data_(data), ledger_(ledger), barrier_(c.ranks) {
    for (int r = 0; r < c.ranks; ++r) reps_.push_back(std::make_unique<Replica>(c, r, ledger));
    for (int r = 1; r < c.ranks; ++r) {
      reps_[std::size_t(r)]->inputs.resize(std::size_t(share_) * width_);
      reps_[std::size_t(r)]->targets.resize(std::size_t(share_) * width_);
    }
    params_ = std::int64_t(master().weights.size());
    gathered_.resize(std::size_t(params_));
    gathered_16_.resize(c.wire == WireFormat::Fp32 ? 0 : std::size_t(params_));
    scratch_bytes_ = std::int64_t(gathered_.size() * 4 + gathered_16_.size() * 2) +
                     std::int64_t(c.ranks - 1) * 2 * share_ * width_ * 4;
    out_.steps.assign(std::size_t(c.steps), std::vector<RankStep>(std::size_t(c.ranks)));
    out_.communication_core_set_aside = cores_.set_aside;
    ledger.allocate("comm", scratch_bytes_);  // last: the destructor releases it
  }
  ~DataParallelOnThreads() { ledger_.release("comm", scratch_bytes_); }
  DataParallelOnThreads(const DataParallelOnThreads&) = delete;
  DataParallelOnThreads& operator=(const DataParallelOnThreads&) = delete;

  TrainResult run() {
    on_rank_threads(
        c_.ranks, [this](int r) { work(r); }, [this] { barrier_.abort(); });
    keep_last_step(out_, reps_);
    out_.weights = master().weights;
    out_.rank0_bytes_sent_per_step = sent_ / c_.steps;
    out_.rank0_bytes_received_per_step = received_ / c_.steps;
    return std::move(out_);
  }

 private:
  Replica& master() { return *reps_.front(); }
  void master_span(const char* label, double t) {
    master().compute_spans.push_back({0, false, "comm", label, t, us_since(origin_)});
  }

  void work(int r) {
    keep_current_thread_on(cores_.compute);
    Replica& rep = *reps_[std::size_t(r)];
    const int rows = c_.rows_per_micro_step();
    for (int s = 0; s < c_.steps; ++s) {
      if (!barrier_.arrive_and_wait()) return;
      rep.step_start_us = us_since(origin_);
      rep.compute_spans.clear();
      const int first_row = s * c_.global_batch;
      if (r == 0) replicate_and_scatter(first_row);  // the workers wait
      if (!barrier_.arrive_and_wait()) return;
      std::fill(rep.grads.begin(), rep.grads.end(), 0.0f);
      for (int j = 0; j < c_.accumulate; ++j) {
        const std::size_t offset = std::size_t(j) * rows * width_;
        const float* in = r == 0 ? data_.input_rows(first_row + j * rows) : rep.inputs.data() + offset;
        const float* tg = r == 0 ? data_.target_rows(first_row + j * rows) : rep.targets.data() + offset;
        forward_backward(c_, rep, in, tg, origin_, j == c_.accumulate - 1, [](int) {});
      }
      if (!barrier_.arrive_and_wait()) return;
      if (r == 0) {
        gather_and_sum();
        optimizer_step(c_, master(), origin_);
      }
      if (!barrier_.arrive_and_wait()) return;  // the workers wait for the master's step
      out_.steps[std::size_t(s)][std::size_t(r)] = summarize(rep, us_since(origin_), false);
    }
  }

  void replicate_and_scatter(int first_row) {
    double t = us_since(origin_);
    for (int q = 1; q < c_.ranks; ++q) {
      std::memcpy(reps_[std::size_t(q)]->weights.data(), master().weights.data(), std::size_t(params_) * 4);
      sent_ += params_ * 4;
    }
    master_span("replicate", t);
    t = us_since(origin_);
    for (int q = 1; q < c_.ranks; ++q) {
      Replica& worker = *reps_[std::size_t(q)];
      const int first = first_row + q * share_;
      std::memcpy(worker.inputs.data(), data_.input_rows(first), std::size_t(share_) * width_ * 4);
      std::memcpy(worker.targets.data(), data_.target_rows(first), std::size_t(share_) * width_ * 4);
      sent_ += std::int64_t(2) * share_ * width_ * 4;
    }
    master_span("scatter", t);
  }

  // Every gradient to the master, summed there in rank order.
  void gather_and_sum() {
    const double t = us_since(origin_);
    std::vector<float>& sum = master().grads;
    if (c_.wire != WireFormat::Fp32) {  // 16 bits on the wire: the master's own gradient is rounded the same way
      encode_16(c_.wire, sum.data(), gathered_16_.data(), params_);
      decode_16(c_.wire, gathered_16_.data(), sum.data(), params_);
    }
    for (int q = 1; q < c_.ranks; ++q) {
      const Replica& worker = *reps_[std::size_t(q)];
      if (c_.wire == WireFormat::Fp32) {
        std::memcpy(gathered_.data(), worker.grads.data(), std::size_t(params_) * 4);
      } else {
        encode_16(c_.wire, worker.grads.data(), gathered_16_.data(), params_);
        decode_16(c_.wire, gathered_16_.data(), gathered_.data(), params_);
      }
      received_ += params_ * wire_bytes_per_element(c_.wire);
      for (std::int64_t i = 0; i < params_; ++i) sum[std::size_t(i)] += gathered_[std::size_t(i)];
    }
    master_span("gather + sum", t);
  }

  const TrainConfig& c_;
  const training::DataSet& data_;
  MemoryLedger& ledger_;
  const int share_ = c_.global_batch / c_.ranks, width_ = c_.shape.width;
  TrainResult out_;
  std::vector<std::unique_ptr<Replica>> reps_;
  std::int64_t params_ = 0, scratch_bytes_ = 0, sent_ = 0, received_ = 0;
  std::vector<float> gathered_;
  std::vector<std::uint16_t> gathered_16_;
  // The same compute cores as DDP's (a fair race); the master moves the model and the gradients itself, so the core
  // DDP keeps for communication stays unused here: one thread doing every copy is DataParallel's design.
  const CoreSplit cores_ = split_cores_for_communication(c_.ranks, allowed_cores());
  const Clock::time_point origin_ = Clock::now();
  AbortableBarrier barrier_;
};

}  // namespace

TrainResult train_data_parallel(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger) {
  return DataParallelOnThreads(c, data, ledger).run();
}

}  // namespace dlsys::ddp
