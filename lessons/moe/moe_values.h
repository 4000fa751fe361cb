#pragma once
// The mixture-of-experts lesson's closed forms and measurements, declared once (engine/lesson_values.h).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::moe_lesson {

struct MoeTheory {
  std::int64_t tokens = 0, hidden = 0, ffn = 0;
  int experts = 0, top_k = 0, ranks = 0, experts_per_rank = 0;
  double capacity_factor = 0;
  std::int64_t capacity = 0;              // ceil(capacity_factor x tokens x k / E): per expert, of one rank's tokens
  std::int64_t capacity_total = 0;        // N C: per expert, of all ranks' tokens
  std::int64_t assignments_per_rank = 0;  // tokens x k
  // A rank's dispatch, fp32, nothing dropped: tokens x k x hidden x 4 bytes; (N-1)/N of it leaves the rank when the
  // routing is even. The combine sends as much back.
  double dispatch_bytes_per_rank = 0;
  double off_rank_share = 0;
  double dispatch_off_rank_bytes = 0;
  // The ring all-reduce of a tensor of that size: 2 (N-1)/N of it per rank.
  double all_reduce_bytes_per_rank = 0;
  double all_to_all_bus_factor = 0;  // (N-1)/N
  double all_reduce_bus_factor = 0;  // 2 (N-1)/N
  // On emulated wires of link_gbps (0: none): the time those bytes take on a rank's wire, one round after another.
  double link_gbps = 0;
  double dispatch_wire_us = 0;       // T k H 4 (N-1)/N / bandwidth
  double all_reduce_wire_us = 0;     // T k H 4 2 (N-1)/N / bandwidth
  double deepep_dispatch_bytes = 0;  // DeepEP's README: 128 x 8 x (7168 + 7168/128 x 4) = 7,569,408
  // Parameters and FLOP per token: the layer against the dense MLP H -> k F -> H of the same active parameters.
  std::int64_t expert_parameters = 0, router_parameters = 0, moe_parameters = 0;
  std::int64_t active_parameters = 0;  // k experts and the router: what one token uses
  std::int64_t dense_ffn = 0, dense_parameters = 0;
  double moe_flop_per_token = 0;    // k 4 H F + 2 H E
  double dense_flop_per_token = 0;  // 4 H k F
  double rows_per_expert = 0;       // N tokens k / E: an expert's GEMM rows when the load is even
  double balance_loss_even = 0;     // 1
  double balance_loss_worst = 0;    // E
};
DLSYS_VALUES_JSON(MoeTheory, tokens, hidden, ffn, experts, top_k, ranks, experts_per_rank, capacity_factor, capacity,
                  capacity_total, assignments_per_rank, dispatch_bytes_per_rank, off_rank_share,
                  dispatch_off_rank_bytes, all_reduce_bytes_per_rank, all_to_all_bus_factor, all_reduce_bus_factor,
                  link_gbps, dispatch_wire_us, all_reduce_wire_us, deepep_dispatch_bytes, expert_parameters,
                  router_parameters, moe_parameters, active_parameters, dense_ffn, dense_parameters, moe_flop_per_token,
                  dense_flop_per_token, rows_per_expert, balance_loss_even, balance_loss_worst)

// One phase of the expert-parallel forward: the median over the repeats of the time from its start on every rank to
// its end on the last.
struct PhaseMeasured {
  std::string phase;
  SpreadUnitLast time;
  double bytes_per_rank = 0;  // what the phase put on links, averaged over the ranks
};
DLSYS_VALUES_JSON(PhaseMeasured, phase, time, bytes_per_rank)

struct MoeMeasured {
  // The router, summed over the ranks: assignments routed to each expert and those under capacity.
  std::vector<std::int64_t> wanted, kept;
  std::vector<std::int64_t> wanted_untrained;  // with the balance loss on: the router's load before its training
  std::int64_t dropped = 0;
  double dropped_share = 0;  // of all assignments
  double balance_loss = 0;   // of the router the layer ran with (rank 0's tokens)
  double balance_loss_untrained = 0;
  std::vector<double> balance_training;  // the loss at each training step (balance loss on)
  // The layer's output against the single-rank reference with the same drops.
  double max_abs_err = 0;
  int wrong = 0;
  // Dispatch bytes from rank i to rank j, row-major (N, N), the own block on the diagonal (copied, never sent).
  int ranks = 0;
  std::vector<std::int64_t> dispatch_bytes;
  double dispatch_bytes_sent_per_rank = 0;    // measured on the links, averaged over the ranks
  double dispatch_bytes_routed_per_rank = 0;  // what the routing sends to other ranks' experts, from its counts
  int bytes_match_routing = 0;
  // On emulated wires: the busiest rank's dispatch bytes (the most any rank sends or receives off-rank) over the
  // bandwidth. With a skewed router it exceeds the even load's wire time; the dispatch cannot end sooner. 0 without.
  double dispatch_wire_busiest_us = 0;
  std::vector<PhaseMeasured> phases;  // route, counts, dispatch, experts, combine, finish
  double moe_us = 0;                  // the phases together
  // The dispatch alone, repeated with warm caches as the all-reduce is: the two collectives on equal terms.
  SpreadUnitLast dispatch_alone;
  SpreadUnitLast all_reduce;  // a ring all-reduce of tokens x k x H
  double all_reduce_bytes_per_rank = 0;
  SpreadUnitLast dense;                 // the dense MLP on every rank's tokens
  double moe_flop = 0, dense_flop = 0;  // per forward, all ranks
  double moe_gflops = 0, dense_gflops = 0;
  // Two micro-batches: one after the other, and overlapped (a communication thread per rank).
  SpreadUnitLast sequential;
  SpreadUnitLast overlapped;
  double ideal_overlapped_us = 0;  // from the phases, if copies and compute never shared a core
  double overlap_speedup = 0;      // sequential / overlapped
  int hardware_threads = 0;
  int emulated = 0;          // more rank threads than hardware threads: ranks take turns on cores
  int overlap_emulated = 0;  // the same for the overlap's two threads a rank
  // GPU runs only (the keys are absent from a CPU run's JSON): the experts' MLPs and the dense MLP on cuBLAS on GPU 0.
  // Each expert's outputs in the checked forward against the CPU's mlp_forward of the same rows, as a share of fp32's
  // rounding bound (moe::mlp_rounding_factor); the layer's output against the reference then held to the CPU's 1e-4
  // plus the largest of those bounds, as the gates of a token sum to at most 1.
  bool experts_on_gpu = false;
  double experts_gpu_max_abs_diff = 0;
  double experts_gpu_worst_share_of_bound = 0;
  bool experts_gpu_wrong = false;
  double output_tolerance = 0;
  double gpu_bytes = 0;  // allocated on GPU 0 for the experts and the dense MLP (cuBLAS's workspaces not counted)
};
// Written flat; read back with the lengths the views index by checked (moe_values.cpp).
void to_json(nlohmann::ordered_json& json, const MoeMeasured& measured);
void from_json(const nlohmann::ordered_json& json, MoeMeasured& measured);

}  // namespace dlsys::moe_lesson
