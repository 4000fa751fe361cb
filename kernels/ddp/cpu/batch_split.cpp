// The batch-split identity, computed (see batch_split.h).
#include "kernels/ddp/batch_split.h"

#include <algorithm>
#include <cmath>

namespace dlsys::ddp {

namespace {

std::vector<float> mean_loss_gradient(const training::StackShape& shape, const std::vector<float>& weights,
                                      const training::DataSet& data, int first_row, int rows) {
  std::vector<float> grads(weights.size(), 0.0f);
  training::Activations acts(shape, rows);
  const training::LayerWeights w = training::flat_weights(shape, weights.data());
  training::forward(shape, w, data.input_rows(first_row), data.target_rows(first_row), rows, acts);
  training::backward(
      shape, w, data.target_rows(first_row), rows, acts,
      [&](int layer) { return grads.data() + training::layer_offset(shape, layer); }, [](int) {});
  return grads;
}

}  // namespace

BatchSplit batch_split(const training::StackShape& shape, const std::vector<float>& weights,
                       const training::DataSet& data, int batch, int workers) {
  BatchSplit out;
  out.batch = batch;
  out.workers = workers;
  out.averaged.assign(weights.size(), 0.0f);
  const int share = batch / workers;
  for (int r = 0; r < workers; ++r) {
    out.worker_grads.push_back(mean_loss_gradient(shape, weights, data, r * share, share));
    for (std::size_t i = 0; i < weights.size(); ++i) out.averaged[i] += out.worker_grads.back()[i] / float(workers);
  }
  out.full = mean_loss_gradient(shape, weights, data, 0, batch);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    out.difference.push_back(double(out.averaged[i]) - double(out.full[i]));
    out.max_abs_diff = std::max(out.max_abs_diff, std::fabs(out.difference.back()));
    out.max_abs_grad = std::max(out.max_abs_grad, std::fabs(double(out.full[i])));
  }
  out.max_rel_diff = out.max_abs_grad > 0 ? out.max_abs_diff / out.max_abs_grad : out.max_abs_diff;
  return out;
}

}  // namespace dlsys::ddp
