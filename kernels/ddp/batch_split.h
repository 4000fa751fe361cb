#pragma once
// The identity data parallelism rests on, on the real model: split a batch over W workers, let each compute the
// gradient of the mean loss over its own rows, average the W gradients, and the result is the gradient of the mean
// loss over the whole batch (up to the order of float additions).
#include <cstdint>
#include <vector>

#include "kernels/training/mlp_stack.h"

namespace dlsys::ddp {

struct BatchSplit {
  int batch = 0, workers = 0;
  std::vector<std::vector<float>> worker_grads;  // (workers, parameters): each of its own rows' mean loss
  std::vector<float> averaged;                   // mean of worker_grads
  std::vector<float> full;                       // the whole batch's mean loss, one backward
  std::vector<double> difference;                // averaged - full, element by element (in double)
  double max_abs_diff = 0;                       // max |averaged - full|
  double max_abs_grad = 0;                       // max |full|
  double max_rel_diff = 0;                       // max_abs_diff / max_abs_grad
};

// `batch` rows of `data` from row 0, split into `workers` equal shares (batch divisible by workers).
BatchSplit batch_split(const training::StackShape& shape, const std::vector<float>& weights,
                       const training::DataSet& data, int batch, int workers);

}  // namespace dlsys::ddp
