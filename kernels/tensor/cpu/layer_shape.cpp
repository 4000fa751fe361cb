#include "kernels/tensor/layer_shape.h"

namespace dlsys::tensor {

const char* shape_problem(const LayerShape& s) {
  if (s.batch < 1 || s.seq < 1 || s.hidden < 1 || s.heads < 1 || s.ranks < 1) return "every size must be at least 1";
  if (s.hidden % s.heads != 0) return "the heads must divide the hidden size";
  if (s.heads % s.ranks != 0) return "the ranks must divide the heads (each rank keeps whole heads)";
  if (s.sequence_parallel && s.seq % s.ranks != 0)
    return "with sequence parallelism the ranks must divide the sequence";
  return "";
}

}  // namespace dlsys::tensor
