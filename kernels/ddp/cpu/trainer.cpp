// Data-parallel training's entry points (see trainer.h for what each does and what each time means): the ways of
// running the ranks are in ddp_ranks.cpp (over a RankGroup) and data_parallel.cpp, on the shared parts in replica.h.
#include "kernels/ddp/trainer.h"

#include <algorithm>
#include <cmath>

#include "kernels/collectives/collectives.h"
#include "kernels/ddp/cpu/replica.h"
#include "kernels/tensor/tp_layer.h"

namespace dlsys::ddp {

TrainResult train(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger) {
  if (c.mode == SyncMode::Ddp) {
    // Waiting ranks sleep instead of spinning: the compute threads need the cores the communication threads share.
    const std::unique_ptr<collectives::RankGroup> ranks =
        collectives::make_thread_group(c.ranks, ledger, collectives::CommOptions{.poll = false});
    return train_ddp(c, data, ledger, *ranks);
  }
  check_data(c, data);
  const tensor::SingleThreadedBlas blas(c.ranks);
  return train_data_parallel(c, data, ledger);
}

std::vector<float> train_single_rank(const TrainConfig& config, const training::DataSet& data) {
  check_data(config, data);
  const tensor::SingleThreadedBlas blas;
  TrainConfig c = config;
  c.ranks = 1;
  c.accumulate = 1;
  MemoryLedger ledger;
  Replica rep(c, 0, ledger);
  const Clock::time_point origin = Clock::now();
  for (int s = 0; s < c.steps; ++s) {
    std::fill(rep.grads.begin(), rep.grads.end(), 0.0f);
    forward_backward(c, rep, data.input_rows(s * c.global_batch), data.target_rows(s * c.global_batch), origin, true,
                     [](int) {});
    sgd(rep.weights, rep.grads, c.learning_rate);
  }
  return rep.weights;
}

double max_rel_err(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

double train_bytes(const TrainConfig& c) {
  const double params = double(training::parameter_count(c.shape)), w = c.shape.width;
  const double rows = c.rows_per_micro_step();
  const double per_rank = params * (4 + 4 + (c.wire == WireFormat::Fp32 ? 0 : 2)) +
                          (2.0 * c.shape.layers + 1) * rows * w * 4    // activations
                          + 3 * rows * w * 4                           // backward's scratch
                          + 2.0 * (c.global_batch / c.ranks) * w * 4;  // a worker's scattered rows
  const double links = c.ranks > 1 ? double(collectives::Communicator::link_bytes(c.ranks, {})) : 0.0;
  return c.ranks * per_rank + links + params * 6;  // the master's gather buffers
}

}  // namespace dlsys::ddp
