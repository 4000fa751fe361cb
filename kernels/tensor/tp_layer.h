#pragma once
// A transformer layer on t CPU rank threads (each a RankLayer<float> with its shards), stepped together, and the
// check of its outputs and weight gradients against the unsharded layer on one rank, in double.
#include <memory>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "kernels/tensor/rank_layer.h"
#include "kernels/tensor/tp_group.h"

namespace dlsys::tensor {

class TensorParallelLayer {
 public:
  // Every rank's buffers are allocated here, under "<kind> rank <r>" in `ledger`, with the group's links.
  TensorParallelLayer(const LayerShape& shape, MemoryLedger& ledger);
  // One forward + backward on every rank at once; the times of each rank, in rank order. OpenBLAS must run one thread
  // per call meanwhile (each rank is one "device"): see SingleThreadedBlas.
  std::vector<RankStepTimes> step();

  const LayerShape& shape() const { return shape_; }
  const RankLayer<float>& rank(int r) const { return *ranks_[static_cast<std::size_t>(r)]; }
  bool polls() const { return group_.polls(); }

 private:
  LayerShape shape_;
  TpGroup group_;
  std::vector<std::unique_ptr<RankLayer<float>>> ranks_;
};

// max |sharded - reference| / max |reference| for one tensor, gathered from every rank's shard or rows.
struct TensorError {
  std::string key;   // "output", "dw_qkv", ...: snake_case, for keys
  std::string name;  // "output", "dW_qkv", ...: for people
  double max_rel_err = 0;
};
// What one rank ends a step with, on the host, in RankLayer's layouts: its rows of the output and input gradient, its
// weight-gradient shards and its (whole) norms' gradient. The CPU ranks point at their own buffers; the CUDA ranks at
// copies brought back from the device.
struct RankResults {
  int rank = 0;
  const float* output = nullptr;
  const float* input_gradient = nullptr;
  const float* grad_wqkv = nullptr;
  const float* grad_wo = nullptr;
  const float* grad_w1 = nullptr;
  const float* grad_w2 = nullptr;
  const float* grad_norms = nullptr;
};
RankResults results_of(const RankLayer<float>& rank);

// The output, the input gradient and every weight gradient (W_qkv, W_o, W_1, W_2, the norms' gains and biases);
// `reference` is a RankLayer<double> with one rank, the same b, s, h, a, stepped once.
std::vector<TensorError> compare_with_reference(const LayerShape& shape, const std::vector<RankResults>& ranks,
                                                const RankLayer<double>& reference);
std::vector<TensorError> compare_with_reference(const TensorParallelLayer& layer, const RankLayer<double>& reference);
// That reference for `shape`: its layer unsharded (one rank, no sequence parallelism) in double, stepped once, its
// buffers in `ledger` under " (reference)".
RankLayer<double> stepped_reference_layer(const LayerShape& shape, MemoryLedger& ledger);

// OpenBLAS on one thread per call while it lives: the ranks are the parallelism, as one GPU each would be. Each of
// the `rank_threads` that will call it at once maps a buffer of its own in OpenBLAS: checked against the
// address-space limit first (engine/address_space.h; RunFailure when they would not fit). 0: the calling thread only.
class SingleThreadedBlas {
 public:
  explicit SingleThreadedBlas(int rank_threads = 0);
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int saved_;
};

}  // namespace dlsys::tensor
