#pragma once
// The precision lesson's parameters as read once from the checked values (the specs are in precision_lesson.cpp).
#include <cstdint>
#include <string>

#include "kernels/precision/format.h"

namespace dlsys::precision {

struct PrecisionParams {
  Format format = Format::Fp16;
  bool scaling = true;       // dynamic loss scaling for the chosen format
  std::string round;         // a decimal to round into the format; empty: train
  int steps = 0;             // training steps of each training
  double loss_weight = 0;    // the loss is loss_weight x mean squared error
  double init_scale = 0;     // the loss scaler's first scale
  int growth_interval = 0;   // steps without overflow before the scale doubles
  double learning_rate = 0;  // Adam's
  std::int64_t gemm_n = 0;   // the GPU's cuBLAS GEMMs, n x n x n
  double max_minutes = 0;    // the run's limit
};

}  // namespace dlsys::precision
