#pragma once
// The tensor lesson's parameters as read once from the checked values (the specs are in tensor_lesson.cpp).
#include <string>
#include <vector>

#include "kernels/tensor/layer_shape.h"

namespace dlsys::tensor {

enum class TensorMode { Run, Theory };      // run the layer, or the calculator alone
enum class TensorExample { None, Course };  // course: the course's 4x4 example only

struct TensorParams {
  LayerShape shape;  // b, s, h, a, t and sequence parallelism
  TensorMode mode = TensorMode::Run;
  TensorExample example = TensorExample::None;
  std::vector<double> hidden_sweep;
  std::string hidden_sweep_text;  // as given, for the messages
  int repeats = 0;
  double max_minutes = 0;  // the run's limit
};

}  // namespace dlsys::tensor
