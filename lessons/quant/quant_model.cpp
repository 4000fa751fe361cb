#include "lessons/quant/quant_model.h"

namespace dlsys::quant {

TrainedModel train_quant_model(int steps) {
  precision::ProblemSpec spec{.shape = quant_model_shape(), .batch = 256, .batches = 16, .noise = 0.05, .seed = 3};
  const precision::Problem problem = precision::make_problem(spec);
  precision::TrainOptions options;
  options.steps = steps;
  options.learning_rate = 1e-3;
  precision::TrainResult trained = precision::train_mlp(problem, options);
  TrainedModel m;
  m.shape = spec.shape;
  m.layout = precision::mlp_layout(spec.shape);
  m.weights = std::move(trained.final_weights);
  m.inputs = problem.inputs;
  m.samples = spec.batch * spec.batches;
  m.final_loss = trained.final_loss;
  return m;
}

std::vector<WeightMatrix> weight_matrices(const TrainedModel& m) {
  const precision::MlpShape& s = m.shape;
  return {{"W1", m.layout.w1, s.hidden, s.inputs},
          {"W2", m.layout.w2, s.hidden, s.hidden},
          {"W3", m.layout.w3, s.outputs, s.hidden}};
}

}  // namespace dlsys::quant
