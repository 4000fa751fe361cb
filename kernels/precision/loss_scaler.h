#pragma once
// Dynamic loss scaling as PyTorch's GradScaler does it (torch.amp.GradScaler, update() and _amp_update_scale_): the
// loss is multiplied by the scale before backward, so gradients that would fall below fp16's smallest subnormal stay
// representable; the gradients are divided by it again before the optimizer step. An inf or NaN in any gradient means
// the scale was too large: that step is skipped and the scale backs off; after `growth_interval` clean steps in a row
// it grows again.
#include <cmath>

namespace dlsys::precision {

struct ScalerConfig {  // GradScaler's defaults
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;
};

enum class ScalerEvent { Clean, Grew, Skipped };

class LossScaler {
 public:
  explicit LossScaler(const ScalerConfig& config = {}) : config_(config), scale_(config.init_scale) {}

  double scale() const { return scale_; }
  int clean_steps_in_a_row() const { return growth_tracker_; }

  // After backward: `found_inf` when any gradient is inf or NaN (the step is then skipped by the caller).
  ScalerEvent update(bool found_inf) {
    if (found_inf) {
      scale_ *= config_.backoff_factor;
      growth_tracker_ = 0;
      return ScalerEvent::Skipped;
    }
    if (++growth_tracker_ == config_.growth_interval) {
      growth_tracker_ = 0;
      const double grown = scale_ * config_.growth_factor;
      if (std::isfinite(grown)) {
        scale_ = grown;
        return ScalerEvent::Grew;
      }
    }
    return ScalerEvent::Clean;
  }

 private:
  ScalerConfig config_;
  double scale_ = 1;
  int growth_tracker_ = 0;
};

}  // namespace dlsys::precision
