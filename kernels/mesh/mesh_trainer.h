#pragma once
// The model of mesh_model.h trained for real on dp x tp x pp CPU rank threads, and the same training on one device.
//
// Each rank is a thread of its own. In one optimizer step, rank (d, t, p) runs stage p's 1F1B op list
// (kernels/pipeline/schedule.h) over its replica's m micro-batches: a forward takes its input from the data (p = 0)
// or from rank (d, t, p - 1), runs the stage's layers on its shards with one tp all-reduce a layer, and hands its
// output to rank (d, t, p + 1); a backward takes the output gradient from the loss (last stage) or from rank
// (d, t, p + 1), runs the layers backward with one tp all-reduce a layer, and hands the input gradient back. Then
// every layer's gradient shard is all-reduced over the dp group (last layer first, one bucket a layer) and SGD steps
// the shard. The collectives are the lab's ring (one thread group per tp and per dp group, each called from the
// mesh's own rank threads); the pipeline's messages go through a mailbox as real copies. Every op is timestamped.
//
// With config.gemms the products of the blocks run there instead, and their time is still the host clock's around each
// layer: the rest of the rank's work (ReLU, residual, copies) and its waits stay on its thread.
//
// Memory per rank is recorded in the ledger under "<kind> rank <r>": weights, gradients, activations (what a
// micro-batch leaves for its backward), scratch (the backward's buffers) and messages (in flight between stages).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "kernels/mesh/mesh_model.h"
#include "kernels/mesh/rank_gemms.h"

namespace dlsys::mesh {

struct MeshTrainConfig {
  MeshModel model;
  int steps = 2;  // step s trains on rows [s B, (s + 1) B) of the data set
  float learning_rate = 0.05f;
  std::uint32_t seed = 13;
  // Where the ranks' block products run: null, OpenBLAS on each rank's own thread; else there (a GPU, every rank's).
  RankGemms* gemms = nullptr;
  // Before the first step, every rank at once times its own work this many times (MeshCostProbe); 0: no probe.
  int probe_repeats = 0;
};

// Ledger tags of rank r.
std::string rank_tag(const char* kind, int rank);  // "weights rank 3"

// One op of one rank, in us since the step's start (every rank's clock is the same steady_clock).
struct MeshSpan {
  int rank = 0;
  std::string kind;   // "F", "B" (the compute of a layer), "tp_all_reduce", "dp_all_reduce", "optimizer"
  std::string label;  // "F3", "B3", "tp AR", "dp bucket 1", "SGD"
  int micro_batch = -1;
  double start_us = 0, end_us = 0;
  std::int64_t bytes_sent = 0;  // collectives: counted by the links
};

// What one rank did in the last step and holds at the end.
struct MeshRankReport {
  int rank = 0;
  MeshCoord coord;
  std::int64_t tp_bytes = 0, dp_bytes = 0, pp_bytes = 0;  // sent in the last step: links (tp, dp), messages (pp)
  int tp_all_reduces = 0, dp_buckets = 0, pp_messages = 0;
  double compute_us = 0, tp_us = 0, dp_us = 0, step_us = 0;  // the last step
  // From the ledger, over the whole run.
  std::int64_t weight_bytes = 0, gradient_bytes = 0, peak_activation_bytes = 0, scratch_bytes = 0,
               peak_message_bytes = 0;
};

// What the ranks' pieces of work cost on this machine, timed on the run's own ranks, groups and products before its
// first step, every rank at once, so that the costs carry the cores' sharing: the inputs of the planner's estimate
// for the run's mesh. Means over every rank and repeat (a first, warm-up round not counted): a step is the sum of
// many such calls, so their mean cost, not the median's, adds up to it; with ranks sharing cores, a call's time is
// often one of two (the peer on a core, or waiting for one) and the median jumps between them from run to run.
struct MeshCostProbe {
  double forward_layer_us = 0;     // one layer's forward on a micro-batch: its two products, ReLU and residual
  double backward_layer_us = 0;    // its backward: the input gradient's two products and the weights' two
  double forward_layer_flop = 0;   // of the forward's products: 4 x rows x h x f / tp
  double backward_layer_flop = 0;  // of the backward's: twice the forward's
  double tp_all_reduce_us = 0;     // an activation or its gradient (rows x h floats) over the tp group; 0 with tp = 1
  double dp_all_reduce_us = 0;     // one layer's gradient shard over the dp group; 0 with dp = 1
  int repeats = 0;
};

struct MeshTrainResult {
  std::vector<float> initial_weights;  // the full vector, as the single device starts
  std::vector<float> weights;          // the full vector after the last step, gathered from replica 0's shards
  bool replicas_identical = true;      // every dp replica's shards bit-equal to replica 0's at the end
  std::vector<double> losses;          // per step, before its update
  std::vector<double> step_us;         // per step: first start to last end over every rank
  std::vector<MeshRankReport> ranks;
  std::vector<MeshSpan> last_step_spans;
  MeshCostProbe probe;  // all zero without config.probe_repeats
};

// `between_steps` is called before each step (cancellation: it may throw). Waiting ranks poll their links only when
// `poll` (every rank has a core). Throws std::invalid_argument for a model that model_problem() refuses.
MeshTrainResult train_on_mesh(const MeshTrainConfig& config, MemoryLedger& ledger,
                              const std::function<void()>& between_steps, bool poll);

// The same steps on one device: the whole batch at once, in the stack's own forward and backward.
struct SingleDeviceResult {
  std::vector<float> weights;
  std::vector<double> losses;
};
SingleDeviceResult train_on_one_device(const MeshTrainConfig& config);

}  // namespace dlsys::mesh
