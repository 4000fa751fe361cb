#pragma once
// What the tensor lesson's steps draw before a run: the course's 4x4 example through the real column and row splits,
// why the nonlinearity must follow the column split (on the example's own numbers), the collectives of one layer as
// the real layer makes them, and the closed forms against t and h.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/tensor/layer_shape.h"
#include "kernels/tensor/linear_split.h"
#include "lessons/common/step_data.h"
#include "lessons/tensor/tensor_params.h"
#include "lessons/tensor/tensor_values.h"

namespace dlsys::tensor {

// One collective of one forward + backward, from the real layer's own record, sized for the chosen shape.
struct LayerCollective {
  std::string op;  // "allreduce", "reduce_scatter", "all_gather"
  std::string site;
  bool backward = false;
  std::int64_t elements = 0;  // at the chosen shape: b s h, or 4h for the norms' gradients
  double bytes_per_rank = 0;  // the ring's, fp32: 2 (t-1)/t or (t-1)/t x elements x 4
};

struct ScalingPoint {
  int t = 0;
  double flop_per_rank = 0;        // one forward + backward
  double comm_bytes_per_rank = 0;  // the lab's layer, fp32, at the chosen sp
};

struct ActivationPoint {
  int t = 0;
  std::int64_t none = 0, tensor = 0, tensor_sequence = 0;  // Korthikanti et al., 16-bit
  std::int64_t lab = 0;                                    // the lab's fp32 layer at the chosen sp
};

// Where communication outweighs what splitting saves, on hardware the lab does not have ([EXT] datasheet numbers):
// 4 all-reduces of 2 (t-1)/t x 2 s b h bytes (16-bit) against (1 - 1/t) of the layer's FLOP, no overlap, no latency.
struct Crossover {
  std::string hardware;  // "H100 SXM, NVLink 4"
  double tflops = 0;     // dense BF16
  double link_gbps = 0;  // one direction, per GPU
  double hidden = 0;     // below this h the all-reduces take longer than the FLOP saved (0: never, at this s)
};

struct TensorSteps final : StepData {
  LinearSplitRecord column, row;  // the course's example on two ranks
  // GeLU after the splits, on the course's numbers: where it is exact (column: GeLU of each rank's own slice of y)
  // and where it is not (row: the sum of each rank's GeLU(partial) against GeLU of the summed partials).
  std::vector<double> gelu_of_y, sum_of_gelu_partials;
  LayerShape shape;  // the chosen one
  TensorTheory theory;
  std::vector<LayerCollective> collectives;  // one forward + backward, rank 0's, in order
  std::vector<ScalingPoint> scaling;         // t = 1, 2, 4, ..., 64
  std::vector<ActivationPoint> activation;   // t = 1, 2, 4, 8, 16, 32, 64 dividing the heads
  std::vector<Crossover> crossovers;
};

std::shared_ptr<const TensorSteps> make_steps(const TensorParams& params, const TensorTheory& theory);

}  // namespace dlsys::tensor
