#include "kernels/moe/expert_devices.h"

namespace dlsys::moe {

void ExpertsCheckedOnCpu::forward(int rank, int expert, const float* x, std::int64_t rows, float* y) {
  device_.forward(rank, expert, x, rows, y);
  if (!checking_) return;
  std::vector<float>& reference = reference_[std::size_t(rank)];
  reference.resize(std::size_t(rows * experts_.hidden));
  cpu_.forward(rank, expert, x, rows, reference.data());
  checks_[std::size_t(rank)].merge(check_mlp_outputs(experts_.w1_of(expert), experts_.w2_of(expert), experts_.hidden,
                                                     experts_.ffn, x, rows, reference.data(), y));
}

MlpCheck ExpertsCheckedOnCpu::check() const {
  MlpCheck all;
  for (const MlpCheck& c : checks_) all.merge(c);
  return all;
}

}  // namespace dlsys::moe
