#include "lessons/ddp/ddp_steps.h"

#include "lessons/ddp/ddp_lesson.h"

namespace dlsys::ddp {

std::shared_ptr<const DdpSteps> make_steps(const DdpParams& params, const DdpTheory& theory) {
  auto steps = std::make_shared<DdpSteps>();
  steps->split_shape = {2, 8};  // 256 weights: small enough to print, the same code as the trained model
  const training::DataSet data = training::make_data_set(steps->split_shape, kCourseBatch, 3);
  steps->split = batch_split(steps->split_shape, training::initial_weights(steps->split_shape, 5), data, kCourseBatch,
                             kCourseWorkers);
  steps->theory = theory;
  steps->chosen = dlsys::ddp_config(params);
  // Drawing 10^5 bucket edges helps nobody: the view draws the count instead when there are more than this.
  if (training::parameter_count(steps->chosen.shape) / steps->chosen.bucket_elements < 4096)
    steps->buckets = assign_buckets(steps->chosen.shape, steps->chosen.bucket_elements);
  const double grad = double(theory.wire_gradient_bytes), model = double(theory.gradient_bytes);
  const double w = steps->chosen.shape.width, batch = steps->chosen.global_batch;
  for (int n = 1; n <= 64; n *= 2) {
    RanksRow row{n, 2.0 * (n - 1) / n * grad, (n - 1) * (model + 2 * w * batch / n * 4), (n - 1) * grad, 0, 0};
    row.ring_traffic = 2 * row.ring_sent_per_rank;
    row.dataparallel_traffic = row.dataparallel_sent + row.dataparallel_received;
    steps->ranks.push_back(row);
  }
  const double ring = 2.0 * (steps->chosen.ranks - 1) / steps->chosen.ranks;
  for (const char* dtype : {"fp32", "bf16", "fp16"})
    for (int k : {1, 4}) {
      const double per_step = ring * double(theory.parameters) * (std::string(dtype) == "fp32" ? 4 : 2);
      steps->wire.push_back({dtype, k, per_step, per_step / k});
    }
  steps->simulated = dlsys::ddp_theory_timelines(params);
  return steps;
}

}  // namespace dlsys::ddp
