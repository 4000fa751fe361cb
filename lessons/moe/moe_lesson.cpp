// The mixture-of-experts lesson's parameters, the one place it refuses them, its closed forms and its report.
#include "lessons/moe/moe_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "engine/errors.h"
#include "engine/units.h"
#include "kernels/collectives/all_to_all.h"
#include "kernels/collectives/communicator.h"
#include "kernels/moe/experts_cuda.h"
#include "lessons/common/process_placement.h"
#include "lessons/common/repeats_param.h"
#include "lessons/common/run_time_limit.h"

namespace dlsys {

using moe_lesson::MoeParams;
using moe_lesson::MoeTheory;

namespace {

// Four ranks where the machine has the hardware threads for them, else as many as it has (a power of two, so they
// divide the default 8 experts): a rank sharing a core with another cannot compute while the other's all-to-all
// waits, which is the overlap the lesson shows.
int default_ranks() {
  const int hardware = std::max(1, int(std::thread::hardware_concurrency()));
  int ranks = 1;
  while (2 * ranks <= std::min(4, hardware)) ranks *= 2;
  return ranks;
}

}  // namespace

std::vector<ParamSpec> MoeLesson::params() const {
  return {
      {.key = "experts",
       .label = "experts E",
       .type = ParamType::Integer,
       .default_text = "8",
       .min = 1,
       .max = 64,
       .help = "small MLPs H -> F -> H; E/N on each rank, so N must divide E"},
      {.key = "top_k",
       .label = "experts per token k",
       .type = ParamType::Integer,
       .default_text = "2",
       .min = 1,
       .max = 8,
       .help = "the k most probable experts of each token; at most E"},
      {.key = "capacity_factor",
       .label = "capacity factor",
       .type = ParamType::Real,
       .default_text = "1.25",
       .min = 0.1,
       .max = 16,
       .help = "an expert takes at most ceil(factor x tokens x k / E) of a rank's tokens; the rest are dropped"},
      {.key = "tokens",
       .label = "tokens per rank",
       .type = ParamType::Integer,
       .default_text = "1024",
       .min = 1,
       .max = 16384,
       .help = "each rank's micro-batch, routed as one group"},
      {.key = "hidden",
       .label = "hidden H",
       .type = ParamType::Integer,
       .default_text = "256",
       .min = 8,
       .max = 4096,
       .help = "a token's width: what the all-to-all moves per assignment, x 4 bytes"},
      {.key = "ffn",
       .label = "expert hidden F",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 8,
       .max = 16384,
       .help = "each expert's hidden layer; the dense MLP beside it has k F"},
      {.key = "ranks",
       .label = "expert-parallel ranks N",
       .type = ParamType::Integer,
       .default_text = std::to_string(default_ranks()),
       .min = 1,
       .max = 8,
       .help = "CPU ranks (two threads each when overlapping), or processes with launcher=mpi; 4 by default, fewer "
               "on a machine with fewer hardware threads; beyond the hardware threads they share cores, emulated"},
      {.key = "aux_loss",
       .label = "balance loss",
       .type = ParamType::Choice,
       .default_text = "off",
       .choices = {"off", "on"},
       .help = "on: train the router on Switch Transformer's balance loss first (100 steps)"},
      {.key = "skew",
       .label = "router skew",
       .type = ParamType::Real,
       .default_text = "1",
       .min = 0,
       .max = 4,
       .help = "the router's lean to the first experts: a bias of -skew ln(e + 1) (0: none)"},
      {.key = "link_gbps",
       .label = "link bandwidth (emulated)",
       .type = ParamType::Real,
       .default_text = "0.1",
       .min = 0,
       .max = 1000,
       .unit = "GB/s",
       .help = "each link between rank threads behaves as a wire of this many GB/s per direction: a message is copied, "
               "then waits out its bytes off the core, as on a network (0: memory copies only). 0.1 puts the "
               "all-to-alls near the experts' time, the 1:1 DeepSeek-V3 reports for cross-node expert parallelism"},
      repeats_param("timed forwards of each kind after one warm-up"),
      max_minutes_param(),
      launcher_param("(ranks is then the number of processes, and must divide experts)"),
  };
}

std::vector<std::string> MoeLesson::process_launch_params(int world_size, bool) const {
  return {fmt::format("ranks={}", world_size)};
}

MoeParams MoeLesson::read_params(const ParamValues& values) const {
  MoeParams p;
  p.shape = {.tokens = values.integer("tokens"),
             .hidden = values.integer("hidden"),
             .ffn = values.integer("ffn"),
             .experts = int(values.integer("experts")),
             .top_k = int(values.integer("top_k")),
             .capacity_factor = values.real("capacity_factor"),
             .ranks = int(values.integer("ranks"))};
  p.aux_loss = values.text("aux_loss") == "on";
  p.skew = values.real("skew");
  p.link_gbps = values.real("link_gbps");
  p.repeats = int(values.integer("repeats"));
  p.max_minutes = values.real("max_minutes");
  p.ranks_text = values.text("ranks");
  if (values.has("launcher")) p.launcher = static_cast<Launcher>(choice_index(values, "launcher", kLauncherChoices));
  return p;
}

void MoeLesson::check_params(const MoeParams& p, BackendKind backend) const {
  const moe::MoeShape& s = p.shape;
  if (p.launcher == Launcher::Mpi && backend == BackendKind::Cuda)
    throw BadInput(
        "parameter 'launcher': value 'mpi' with --backend cuda is not supported: the GPU's experts serve rank threads "
        "of one process; allowed: launcher=threads with --backend cuda, or launcher=mpi with --backend cpu");
  if (p.launcher == Launcher::Mpi) {
    check_mpi_world(s.ranks, p.ranks_text, "moe", "ranks");
    if (s.experts % s.ranks != 0)
      throw BadInput(fmt::format(
          "parameter 'experts': value '{}' does not divide among the {} processes (one rank each, E/N experts on "
          "every rank); allowed: a multiple of {}",
          s.experts, s.ranks, s.ranks));
  }
  if (s.top_k > s.experts)
    throw BadInput(fmt::format("parameter 'top_k': value '{}' is more experts than there are (E = {}); allowed: 1 to E",
                               s.top_k, s.experts));
  if (s.experts % s.ranks != 0) {
    std::string divisors;
    for (int n = 1; n <= std::min(8, s.experts); ++n)
      if (s.experts % n == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(n);
    throw BadInput(fmt::format(
        "parameter 'ranks': value '{}' does not divide E = {} experts, so the ranks would hold different numbers of "
        "experts; allowed: {}",
        s.ranks, s.experts, divisors));
  }
}

double moe_run_flop(const MoeParams& p) {
  const moe::MoeShape& s = p.shape;
  const double tokens = double(s.tokens) * s.ranks;
  const double forward = tokens * (s.top_k * moe::mlp_flop_per_row(s.hidden, s.ffn) + 2.0 * s.hidden * s.experts);
  const double dense = tokens * moe::mlp_flop_per_row(s.hidden, moe::dense_ffn(s));
  const double router_training =
      p.aux_loss ? (moe_lesson::kBalanceSteps + 1) * 6.0 * s.tokens * s.hidden * s.experts : 0.0;
  // The reference and the checked forward once; the forward, the dense MLP and the two micro-batches in sequence and
  // overlapped (four forwards), each 1 + repeats times.
  return 2 * forward + (1.0 + p.repeats) * (forward + dense + 4 * forward) + router_training;
}

RunBudget MoeLesson::budget_of(const MoeParams& p, BackendKind backend) const {
  const moe::MoeShape& s = p.shape;
  const double rows = double(s.tokens) * s.ranks;            // tokens of all ranks
  const double activations = 4.0 * rows * double(s.hidden);  // one (tokens, H) array for all ranks
  const double routed = activations * s.top_k;               // one dispatched copy of every assignment
  collectives::CommOptions mesh;
  mesh.full_mesh = true;
  RunBudget budget;
  // Inputs and outputs of three micro-batches and the reference, each layer's send, receive, back and returned
  // buffers (two layers live), the experts' hidden rows, the weights, and the links of two groups.
  budget.host_bytes = 8 * activations + 2 * 4 * routed + 4.0 * rows * s.top_k * double(s.ffn) +
                      4.0 * (double(moe::expert_parameters(s)) + double(moe::dense_parameters(s))) +
                      2.0 * double(collectives::Communicator::link_bytes(s.ranks, mesh));
  // On emulated wires the all-to-alls and the all-reduce also wait out their bytes: two all-to-alls a forward, in as
  // many forwards as moe_run_flop counts (the overlap hides some of it; this is the bound).
  const double forwards = 2 + (1.0 + p.repeats) * 5, alone = 1.0 + p.repeats;
  const MoeTheory t = theory_of(p);
  const double wire_seconds =
      1e-6 * (forwards * 2 * t.dispatch_wire_us + alone * (t.dispatch_wire_us + t.all_reduce_wire_us));
  double check_flop = 0;
  if (backend == BackendKind::Cuda) {
    // With every rank on GPU 0 it holds the experts' weights with every rank's buffers for an expert's N C rows, the
    // dense MLP's with buffers for a rank's tokens, and two cuBLAS handles a rank; with a GPU per rank each holds
    // less than that.
    const std::int64_t most_rows = std::int64_t(s.ranks) * moe::expert_capacity(s);
    budget.device_bytes = double(moe::cuda::gpu_experts_bytes(s.experts, s.hidden, s.ffn, s.ranks, most_rows) +
                                 moe::cuda::gpu_experts_bytes(1, s.hidden, moe::dense_ffn(s), s.ranks, s.tokens)) +
                          2.0 * s.ranks * kCublasHandleBytes;
    // The check of the GPU's experts on every rank at once: the CPU's outputs and hidden rows in floats, |x|, |W1|,
    // |W2|, |x| |W1| and M in doubles; its FLOP: the CPU's forward again, and M in double (counted at half the rate).
    const double rows_at_once = double(s.ranks) * double(most_rows);
    budget.host_bytes += 4.0 * rows_at_once * double(s.hidden + s.ffn) +
                         8.0 * (double(s.ranks) * 2 * s.hidden * s.ffn + rows_at_once * double(2 * s.hidden + s.ffn));
    check_flop = 3 * double(s.tokens) * s.ranks * s.top_k * moe::mlp_flop_per_row(s.hidden, s.ffn);
  }
  budget.cpu_seconds = estimated_seconds(moe_run_flop(p) + check_flop, kBlasGflopsPerThread, 1) + wire_seconds;
  budget.max_minutes = p.max_minutes;
  budget.sizes = fmt::format("parameters 'tokens' = {}, 'hidden' = {}, 'ffn' = {}, 'experts' = {}, 'ranks' = {}",
                             s.tokens, s.hidden, s.ffn, s.experts, s.ranks);
  budget.cpu_work = fmt::format(
      "{} timed rounds of the layer, the dense MLP and two micro-batches twice, 4 H F FLOP per token and expert, at "
      "{:g} GFLOP/s{}",
      1 + p.repeats, kBlasGflopsPerThread,
      wire_seconds > 0 ? fmt::format(", and {:.1f} s on the emulated links", wire_seconds) : "");
  budget.smaller = "tokens, hidden, ffn, top_k, ranks or repeats, or a faster link_gbps";
  return budget;
}

MoeTheory MoeLesson::theory_of(const MoeParams& p) const {
  const moe::MoeShape& s = p.shape;
  MoeTheory t;
  t.tokens = s.tokens;
  t.hidden = s.hidden;
  t.ffn = s.ffn;
  t.experts = s.experts;
  t.top_k = s.top_k;
  t.ranks = s.ranks;
  t.experts_per_rank = s.experts % s.ranks == 0 ? s.experts_per_rank() : 0;
  t.capacity_factor = s.capacity_factor;
  t.capacity = moe::expert_capacity(s);
  t.capacity_total = t.capacity * s.ranks;
  t.assignments_per_rank = s.tokens * s.top_k;
  t.dispatch_bytes_per_rank = double(moe::dispatch_bytes_per_rank(s.tokens, s.top_k, s.hidden, 4));
  t.off_rank_share = moe::off_rank_share(s.ranks);
  t.dispatch_off_rank_bytes = t.dispatch_bytes_per_rank * t.off_rank_share;
  t.all_to_all_bus_factor = collectives::all_to_all_bus_factor(s.ranks);
  t.all_reduce_bus_factor = 2 * t.all_to_all_bus_factor;
  t.all_reduce_bytes_per_rank = t.dispatch_bytes_per_rank * t.all_reduce_bus_factor;
  // The wires are emulated between rank threads only: processes talk through MPI at the machine's own speed.
  t.link_gbps = p.launcher == Launcher::Mpi ? 0 : p.link_gbps;
  if (t.link_gbps > 0) {  // bytes / (GB/s) is nanoseconds
    t.dispatch_wire_us = t.dispatch_off_rank_bytes / t.link_gbps / 1e3;
    t.all_reduce_wire_us = t.all_reduce_bytes_per_rank / t.link_gbps / 1e3;
  }
  t.deepep_dispatch_bytes = double(moe::dispatch_bytes_per_rank(128, 8, 7168, 1, 128));
  t.expert_parameters = moe::expert_parameters(s);
  t.router_parameters = moe::router_parameters(s);
  t.moe_parameters = t.expert_parameters + t.router_parameters;
  t.active_parameters = std::int64_t(s.top_k) * 2 * s.hidden * s.ffn + t.router_parameters;
  t.dense_ffn = moe::dense_ffn(s);
  t.dense_parameters = moe::dense_parameters(s);
  t.moe_flop_per_token = s.top_k * moe::mlp_flop_per_row(s.hidden, s.ffn) + 2.0 * s.hidden * s.experts;
  t.dense_flop_per_token = moe::mlp_flop_per_row(s.hidden, t.dense_ffn);
  t.rows_per_expert = double(s.tokens) * s.ranks * s.top_k / s.experts;
  t.balance_loss_even = 1;
  t.balance_loss_worst = s.experts;
  return t;
}

std::shared_ptr<const moe_lesson::MoeSteps> MoeLesson::step_data_of(const MoeParams& p) const {
  auto steps = std::make_shared<moe_lesson::MoeSteps>();
  steps->theory = theory_of(p);
  steps->aux_loss = p.aux_loss;
  steps->skew = p.skew;
  return steps;
}

std::string MoeLesson::text_report(const RunResult& result) const {
  const auto* t = result.theory_as<MoeTheory>();
  if (t == nullptr) return {};
  std::string out = fmt::format(
      "\nE = {} experts ({} a rank on N = {}), k = {}, {} tokens a rank, H = {}, F = {}: capacity ceil({} x {} x {} / "
      "{}) = {} a rank's tokens per expert\n",
      t->experts, t->experts_per_rank, t->ranks, t->top_k, t->tokens, t->hidden, t->ffn, t->capacity_factor, t->tokens,
      t->top_k, t->experts, t->capacity);
  out += fmt::format(
      "  dispatch per rank: tokens x k x H x 4 = {}, (N-1)/N = {} of it off-rank ({}); the combine as much back\n",
      format_bytes_both(t->dispatch_bytes_per_rank), format_number(t->off_rank_share, 4),
      format_bytes_both(t->dispatch_off_rank_bytes));
  out += fmt::format("  a ring all-reduce of that tensor sends 2 (N-1)/N of it per rank: {}\n",
                     format_bytes_both(t->all_reduce_bytes_per_rank));
  if (t->link_gbps > 0)
    out += fmt::format("  on links emulated at {} GB/s: the dispatch's wire time {}, the all-reduce's {}\n",
                       format_number(t->link_gbps, 4), format_duration_us(t->dispatch_wire_us),
                       format_duration_us(t->all_reduce_wire_us));
  out += fmt::format("  DeepEP's low-latency dispatch: 128 x 8 x (7168 + 7168/128 x 4) = {:.0f} B per rank\n",
                     t->deepep_dispatch_bytes);
  out += fmt::format("  parameters: layer {} ({} active a token), dense MLP of k F = {}: {}\n", t->moe_parameters,
                     t->active_parameters, t->dense_ffn, t->dense_parameters);
  const auto* m = result.measured_as<moe_lesson::MoeMeasured>();
  if (m == nullptr) return out;
  const bool processes = ran_as_processes(result);
  out += fmt::format("\nMeasured ({} rank {}{}):\n", t->ranks, processes ? "processes" : "threads",
                     m->emulated ? fmt::format(", emulated: more {} than the {} hardware threads",
                                               processes ? "processes" : "threads", m->hardware_threads)
                                 : "");
  out += fmt::format("  dropped {} of {} assignments ({}); balance loss {} (1 even, {} one expert){}\n", m->dropped,
                     t->assignments_per_rank * t->ranks, format_number(100 * m->dropped_share, 3) + " %",
                     format_number(m->balance_loss, 4), t->experts,
                     m->balance_training.empty() ? ""
                                                 : fmt::format(", {} before the router's training",
                                                               format_number(m->balance_loss_untrained, 4)));
  if (m->experts_on_gpu) {
    out += fmt::format(
        "  experts on the GPU against the CPU's: max |difference| {:.3g}, at worst {:.3g} of fp32's rounding bound "
        "({})\n",
        m->experts_gpu_max_abs_diff, m->experts_gpu_worst_share_of_bound, m->experts_gpu_wrong ? "WRONG" : "right");
    out += fmt::format("  output against the single-rank reference: max |error| {} (tolerance {:.3g}: {})\n",
                       m->max_abs_err, m->output_tolerance, m->max_abs_err > m->output_tolerance ? "WRONG" : "right");
  } else {
    out += fmt::format("  output against the single-rank reference: max |error| {} ({})\n", m->max_abs_err,
                       m->wrong ? "WRONG" : "right");
  }
  out += "  phase        time        bytes a rank\n";
  for (const moe_lesson::PhaseMeasured& ph : m->phases)
    out += fmt::format("  {:<9} {:>10}   {:>14.0f}\n", ph.phase, format_duration_us(ph.time.us), ph.bytes_per_rank);
  out += fmt::format("  dispatch bytes a rank: links {:.0f}, routing's counts {:.0f} ({})\n",
                     m->dispatch_bytes_sent_per_rank, m->dispatch_bytes_routed_per_rank,
                     m->bytes_match_routing ? "equal" : "DIFFER");
  out += fmt::format(
      "  each alone, repeated: the dispatch {}, a ring all-reduce of the same tensor {} ({:.0f} B a rank)\n",
      format_duration_us(m->dispatch_alone.us), format_duration_us(m->all_reduce.us), m->all_reduce_bytes_per_rank);
  if (m->dispatch_wire_busiest_us > 0)
    out += fmt::format("  the dispatch's wire time for the busiest rank's bytes: {} (even load: {})\n",
                       format_duration_us(m->dispatch_wire_busiest_us), format_duration_us(t->dispatch_wire_us));
  out +=
      fmt::format("benchmark: layer {} ({} GFLOP/s), dense MLP {} ({} GFLOP/s); ", format_duration_us(m->moe_us),
                  format_number(m->moe_gflops, 3), format_duration_us(m->dense.us), format_number(m->dense_gflops, 3));
  // Between processes the overlap needs MPI calls from a second thread; a run whose MPI did not allow them has none.
  if (result.timelines.empty()) return out + "two micro-batches: not run (see the notes)\n";
  out += fmt::format("two micro-batches: in sequence {}, overlapped {} (x{:.2f}), ideal {}\n",
                     format_duration_us(m->sequential.us), format_duration_us(m->overlapped.us), m->overlap_speedup,
                     format_duration_us(m->ideal_overlapped_us));
  return out;
}

}  // namespace dlsys
