// The mixture-of-experts lesson's run: the router (trained on the balance loss when asked), the single-rank reference,
// the expert-parallel layer checked against it, its six phases timed and their bytes counted on the links, an
// all-reduce of the dispatched tensor's size and the dense MLP of the same active parameters timed beside it, and two
// micro-batches in sequence against overlapped. Written once for ranks that are threads of this process and for ranks
// that are MPI processes (launcher=mpi): each local rank makes its own micro-batches, and what the run reports over
// every rank comes from every process (Ranks below). The experts' MLPs and the dense MLP run on the device the run
// picks once (kernels/moe/expert_devices.h): OpenBLAS on the rank threads, or cuBLAS with --backend cuda, on a GPU per
// rank where there are enough (the all-to-alls then over NCCL), else every rank on GPU 0.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>

#include "engine/measure.h"
#include "engine/mpi_world.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/mpi_collectives.h"
#include "kernels/collectives/nccl_thread_ranks.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/moe/expert_devices.h"
#include "kernels/moe/moe_layer.h"
#include "kernels/moe/overlap.h"
#include "kernels/tensor/tp_layer.h"
#include "lessons/common/process_placement.h"
#include "lessons/common/run_plan.h"
#include "lessons/moe/moe_lesson.h"

namespace dlsys {

using moe_lesson::MoeMeasured;
using moe_lesson::MoeParams;

namespace {

constexpr std::uint64_t kRouterSeed = 16, kExpertSeed = 1600, kDenseSeed = 9000, kInputSeed = 160000;
// The layer's output against the single-rank reference: same routing, same rows per expert in the same order, so on
// the CPU the BLAS may still round a row differently by the matrix it is in, and a few ulps of the outputs' size are
// allowed.
constexpr double kCpuOutputTolerance = 1e-4;

using Batch = std::vector<std::vector<float>>;  // per local rank: (tokens, H)

// The ranks of this process and what they share with the others. On threads every rank is here and nothing moves;
// as processes (launcher=mpi) this process holds one rank, MPI brings the other ranks' values (in rank order, so what
// is summed from them is summed in the same order as on threads), and each timed sample starts after a barrier and
// counts the slowest rank.
struct Ranks {
  const collectives::RankGroup* group = nullptr;
  int first = 0, local = 1;
  int here = 1;  // ranks on this host: they share its hardware threads
  bool processes = false;

  std::size_t at(int rank) const { return std::size_t(rank - first); }  // a local rank's place in a Batch
  // Every rank's values, in rank order, on every process, from one vector per local rank.
  template <class T>
  std::vector<std::vector<T>> every_rank(std::vector<std::vector<T>> mine) const {
    return processes ? mpi::all_gather(mine.front()) : mine;
  }
  double max(double value) const { return group->max_over_processes(value); }
  std::int64_t sum(std::int64_t value) const { return group->sum_over_processes(value); }
  void from_rank0(std::vector<float>& data) const {
    if (processes) mpi::broadcast_bytes(data.data(), data.size() * sizeof(float));
  }
  CallTimer timer() const { return group->timer(); }
};

Ranks ranks_of(const collectives::RankGroup& group, bool processes) {
  Ranks r{.group = &group, .first = group.first_local_rank(), .local = group.local_ranks(), .processes = processes};
  r.here = processes ? mpi::world()->local_size : group.size();
  return r;
}

// The local ranks' micro-batch `micro_batch`, each seeded by its rank: any process can make any rank's.
Batch make_batch(const moe::MoeShape& s, const Ranks& ranks, int micro_batch) {
  Batch batch;
  for (int r = ranks.first; r < ranks.first + ranks.local; ++r) {
    batch.emplace_back(std::size_t(s.tokens * s.hidden));
    moe::fill_uniform(batch.back().data(), s.tokens * s.hidden,
                      kInputSeed + std::uint64_t(micro_batch) * 64 + std::uint64_t(r));
  }
  return batch;
}

std::vector<const float*> read_only(const Batch& batch) {
  std::vector<const float*> out;
  for (const auto& rank : batch) out.push_back(rank.data());
  return out;
}
std::vector<float*> writable(Batch& batch) {
  std::vector<float*> out;
  for (auto& rank : batch) out.push_back(rank.data());
  return out;
}

// Every rank's routing counts (its tokens, drops, load and mean probability per expert; not its tokens' choices), in
// rank order, from the local ranks' routings.
std::vector<moe::Routing> every_rank(const std::vector<moe::Routing>& local, const Ranks& ranks) {
  std::vector<std::vector<std::int64_t>> counts;
  std::vector<std::vector<double>> probabilities;
  for (const moe::Routing& r : local) {
    std::vector<std::int64_t> c{r.tokens, r.dropped, r.top_k};
    c.insert(c.end(), r.wanted.begin(), r.wanted.end());
    c.insert(c.end(), r.kept.begin(), r.kept.end());
    counts.push_back(std::move(c));
    probabilities.push_back(r.mean_probability);
  }
  counts = ranks.every_rank(std::move(counts));
  probabilities = ranks.every_rank(std::move(probabilities));
  std::vector<moe::Routing> out(counts.size());
  for (std::size_t g = 0; g < counts.size(); ++g) {
    const std::vector<std::int64_t>& c = counts[g];
    const auto experts = std::ptrdiff_t(probabilities[g].size());
    out[g].tokens = c[0];
    out[g].dropped = c[1];
    out[g].top_k = int(c[2]);
    out[g].wanted.assign(c.begin() + 3, c.begin() + 3 + experts);
    out[g].kept.assign(c.begin() + 3 + experts, c.end());
    out[g].mean_probability = std::move(probabilities[g]);
  }
  return out;
}

// The routings of every rank as one: loads summed, probabilities averaged over all tokens.
moe::Routing merged(const std::vector<moe::Routing>& routings) {
  moe::Routing all = routings.front();
  for (std::size_t g = 1; g < routings.size(); ++g) {
    const moe::Routing& r = routings[g];
    all.tokens += r.tokens;
    all.dropped += r.dropped;
    for (std::size_t e = 0; e < all.wanted.size(); ++e) {
      all.wanted[e] += r.wanted[e];
      all.kept[e] += r.kept[e];
      all.mean_probability[e] += r.mean_probability[e];
    }
  }
  for (double& p : all.mean_probability) p /= double(routings.size());
  return all;
}

// Over the local ranks' outputs; Ranks::max takes it over every rank.
double max_abs_difference(const Batch& a, const Batch& b) {
  double err = 0;
  for (std::size_t r = 0; r < a.size(); ++r)
    for (std::size_t i = 0; i < a[r].size(); ++i) err = std::max(err, std::fabs(double(a[r][i]) - b[r][i]));
  return err;
}

// What each local rank has sent to its peers.
std::vector<std::int64_t> sent_by_local_ranks(const collectives::RankGroup& group) {
  std::vector<std::int64_t> out;
  for (int r = group.first_local_rank(); r < group.first_local_rank() + group.local_ranks(); ++r)
    out.push_back(group.bytes_sent_by(r));
  return out;
}
std::int64_t total(const std::vector<std::int64_t>& values) {
  std::int64_t sum = 0;
  for (std::int64_t v : values) sum += v;
  return sum;
}

// Spans as numbers (six a span) for Ranks::every_rank, and back.
std::vector<double> encoded(const std::vector<moe::PhaseSpan>& spans) {
  std::vector<double> out;
  for (const moe::PhaseSpan& s : spans)
    out.insert(out.end(),
               {double(s.rank), double(s.lane), double(s.micro_batch), double(s.phase), s.start_us, s.end_us});
  return out;
}
std::vector<moe::PhaseSpan> every_rank(const std::vector<moe::PhaseSpan>& local, const Ranks& ranks) {
  std::vector<moe::PhaseSpan> out;
  for (const std::vector<double>& rank : ranks.every_rank(std::vector<std::vector<double>>{encoded(local)}))
    for (std::size_t i = 0; i + 6 <= rank.size(); i += 6)
      out.push_back(
          {int(rank[i]), int(rank[i + 1]), int(rank[i + 2]), moe::Phase(int(rank[i + 3])), rank[i + 4], rank[i + 5]});
  return out;
}

Timeline timeline_of(const std::vector<moe::PhaseSpan>& spans, int ranks, std::string name, bool emulated) {
  Timeline t;
  t.name = std::move(name);
  t.source = "measured";
  t.mode = emulated ? "emulated" : "concurrent";
  for (int r = 0; r < ranks; ++r) {
    t.lanes.push_back(fmt::format("rank {} compute", r));
    t.lanes.push_back(fmt::format("rank {} comm", r));
  }
  for (const moe::PhaseSpan& s : spans)
    t.spans.push_back({.lane = 2 * s.rank + s.lane,
                       .start = s.start_us,
                       .end = s.end_us,
                       .kind = s.lane == 1 ? "all_to_all" : "compute",
                       .micro_batch = s.micro_batch,
                       .label = fmt::format("{} {}", s.micro_batch == 0 ? 'A' : 'B', moe::phase_name(s.phase))});
  return t;
}

// What the parts of a run share: the parameters, this process's ranks and their batches, the weights, the two rank
// groups (the all-to-alls' crossbar, and the compute side of the overlap) and the two layers of the overlap's
// micro-batches.
struct MoeRun {
  const MoeParams& p;
  RunContext& ctx;
  int hardware = 1;
  std::unique_ptr<collectives::RankGroup> comm, compute;
  Ranks ranks;
  Batch x, x_second, reference, y;
  moe::Router router;
  moe::Experts experts;
  std::unique_ptr<moe::ExpertParallelLayer> layer, second;
  MeasureOptions options;
  MoeMeasured m;
  // The device, picked once (use_device): what makes its MLPs for `max_rows` rows a call, and what times them.
  bool on_gpu = false;
  // With --backend cuda: where the ranks sit on the GPUs, and whether the all-to-alls go over NCCL (a GPU per rank).
  std::string gpu_placement;
  bool nccl = false;
  bool nccl_declined_for_wires = false;  // a GPU per rank, but link_gbps emulates wires between the rank threads
  std::function<std::unique_ptr<moe::ExpertMlps>(const moe::Experts&, std::int64_t max_rows)> make_mlps;
  CallTimer experts_timer;
  std::unique_ptr<moe::ExpertMlps> mlps;              // the experts'
  std::unique_ptr<moe::ExpertsCheckedOnCpu> checked;  // on a GPU: `mlps` checked against the CPU's in one forward

  void between() const { ctx.control.check_cancelled(); }
  // Work on every local rank at once, each with its own batch entry.
  void on_ranks(const std::function<void(int rank, std::size_t at)>& work) {
    comm->run_on_ranks([&](int r) { work(r, ranks.at(r)); });
  }
};

// With a GPU per rank thread, the all-to-alls go over NCCL between the GPUs, staged to them and back within each
// call; NCCL refuses two ranks on one GPU, so with fewer GPUs they stay between the threads (emulated).
void use_nccl_where_every_rank_has_a_gpu(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  const collectives::cuda::Placement placement = collectives::cuda::place_ranks(s.ranks);
  run.gpu_placement = placement.description;
  if (placement.emulated || !collectives::cuda::nccl_compiled()) return;
  if (run.p.link_gbps > 0) {
    run.nccl_declined_for_wires = true;
    return;
  }
  // A rank sends at most its kept assignments' rows and receives at most its experts' capacity from every rank (and
  // the reverse in the combine); the counts' exchange is E floats.
  const std::int64_t most_rows = std::max(s.tokens * s.top_k, std::int64_t(s.experts) * moe::expert_capacity(s));
  const std::int64_t max_floats = std::max<std::int64_t>(most_rows * s.hidden, s.experts);
  run.comm = collectives::with_nccl_all_to_all(std::move(run.comm),
                                               collectives::cuda::make_nccl_thread_ranks(s.ranks, max_floats));
  run.nccl = true;
}

// The rank groups: threads of this process, or the MPI world (twice: the overlap's compute side beside the
// all-to-alls).
void make_groups(MoeRun& run) {
  const int n = run.p.shape.ranks;
  if (run.p.launcher == Launcher::Mpi) {
    run.comm = collectives::mpi::world_group();
    run.compute = collectives::mpi::world_group();
  } else {
    // Waiting ranks spin only when every thread of both groups (compute and communication) has a core.
    collectives::CommOptions mesh;
    mesh.full_mesh = true;
    mesh.poll = 2 * n <= run.hardware;
    mesh.link_gbps = run.p.link_gbps;
    collectives::CommOptions plain;
    plain.poll = mesh.poll;
    run.comm = collectives::make_thread_group(n, run.ctx.ledger, mesh);
    run.compute = collectives::make_thread_group(n, run.ctx.ledger, plain);
    if (run.ctx.backend == BackendKind::Cuda) use_nccl_where_every_rank_has_a_gpu(run);
  }
  run.ranks = ranks_of(*run.comm, run.p.launcher == Launcher::Mpi);
}

template <class Device>
void use_device(MoeRun& run, Device device) {
  run.on_gpu = Device::kOnGpu;
  run.experts_timer = device.timer(run.ranks.timer());
  const int ranks = run.p.shape.ranks;
  run.make_mlps = [ranks, device](const moe::Experts& experts, std::int64_t max_rows) {
    return device.make(experts, ranks, max_rows);
  };
}

// The router's part of the run: its training on the balance loss when asked (on rank 0's micro-batch, where rank 0
// is; the other processes take its weights), and what it did before.
void train_router(MoeRun& run) {
  const MoeParams& p = run.p;
  if (!p.aux_loss) return;
  std::vector<moe::Routing> before;
  for (const auto& rank : run.x) before.push_back(moe::route_tokens(run.router, rank.data(), p.shape.tokens, p.shape));
  const moe::Routing all = merged(every_rank(before, run.ranks));
  run.m.wanted_untrained = all.wanted;
  run.m.balance_loss_untrained = moe::balance_loss(all);
  if (run.ranks.first == 0)
    run.m.balance_training = moe::train_for_balance(run.router, run.x.front().data(), p.shape.tokens, p.shape,
                                                    moe_lesson::kBalanceSteps, moe_lesson::kBalanceLearningRate);
  run.ranks.from_rank0(run.router.weights);
  run.ranks.from_rank0(run.router.bias);
}

// The router (trained on the balance loss when asked), the experts and the single-rank reference of the local ranks'
// tokens: the load per expert, over every rank.
void route_with_reference(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  run.x = make_batch(s, run.ranks, 0);
  run.x_second = make_batch(s, run.ranks, 1);
  run.router = moe::make_router(s.hidden, s.experts, run.p.skew, kRouterSeed);
  train_router(run);
  run.experts = moe::make_experts(s.experts, s.hidden, s.ffn, kExpertSeed);
  run.reference = run.x;
  const moe::Routing all = merged(every_rank(
      moe::reference_layer(s, run.router, run.experts, read_only(run.x), writable(run.reference)), run.ranks));
  run.m.wanted = all.wanted;
  run.m.kept = all.kept;
  run.m.dropped = all.dropped;
  run.m.dropped_share = double(all.dropped) / (double(all.tokens) * s.top_k);
  run.m.balance_loss = moe::balance_loss(all);
}

// The most off-rank bytes any rank sends or receives in an all-to-all with `bytes` from rank i to rank j (row-major):
// on a wire a rank's own traffic each way follows one block after another.
double busiest_rank_bytes(const std::vector<std::int64_t>& bytes, int n) {
  double busiest = 0;
  for (int r = 0; r < n; ++r) {
    double sent = 0, received = 0;
    for (int q = 0; q < n; ++q)
      if (q != r) {
        sent += double(bytes[std::size_t(r * n + q)]);
        received += double(bytes[std::size_t(q * n + r)]);
      }
    busiest = std::max({busiest, sent, received});
  }
  return busiest;
}

// The layers on the run's device (an expert takes at most N C rows a forward: C from each rank); one forward checked
// against the reference, on a GPU each expert's outputs also against the CPU's; its dispatch's bytes per pair.
void make_layers(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  run.mlps = run.make_mlps(run.experts, s.ranks * moe::expert_capacity(s));
  moe::ExpertMlps* first = run.mlps.get();
  if (run.on_gpu) {
    run.checked = std::make_unique<moe::ExpertsCheckedOnCpu>(*run.mlps, run.experts, s.ranks);
    first = run.checked.get();
  }
  run.layer = std::make_unique<moe::ExpertParallelLayer>(s, run.router, run.experts, *run.comm, first);
  run.second = std::make_unique<moe::ExpertParallelLayer>(s, run.router, run.experts, *run.comm, run.mlps.get());
  run.y = run.x;
  run.on_ranks([&](int r, std::size_t at) { run.layer->forward(r, run.x[at].data(), run.y[at].data()); });
  run.m.max_abs_err = run.ranks.max(max_abs_difference(run.y, run.reference));
  run.m.output_tolerance = kCpuOutputTolerance;
  if (run.checked) {
    const moe::MlpCheck check = run.checked->check();
    run.checked->set_checking(false);
    MoeMeasured& m = run.m;
    m.experts_on_gpu = true;
    m.experts_gpu_max_abs_diff = check.max_abs_diff;
    m.experts_gpu_worst_share_of_bound = check.worst_share_of_bound;
    m.experts_gpu_wrong = !check.agrees();
    // A token's output is its gates times its experts' outputs, the gates summing to at most 1: it moves from the
    // reference's by at most the largest expert difference allowed, beside the weighted sum's own rounding.
    m.output_tolerance = kCpuOutputTolerance + check.largest_bound;
  }
  run.m.ranks = s.ranks;
  std::vector<std::vector<std::int64_t>> rows;
  for (int i = run.ranks.first; i < run.ranks.first + run.ranks.local; ++i) {
    rows.emplace_back();
    for (int j = 0; j < s.ranks; ++j) rows.back().push_back(4 * run.layer->dispatch_floats(i, j));
  }
  for (const std::vector<std::int64_t>& row : run.ranks.every_rank(std::move(rows)))
    run.m.dispatch_bytes.insert(run.m.dispatch_bytes.end(), row.begin(), row.end());
  if (run.p.link_gbps > 0 && !run.ranks.processes)
    run.m.dispatch_wire_busiest_us = busiest_rank_bytes(run.m.dispatch_bytes, s.ranks) / run.p.link_gbps / 1e3;
}

// The dispatch's bytes on the links, rank by rank, against what the routing sends to other ranks' experts.
void check_dispatch_bytes(MoeRun& run, const std::vector<std::int64_t>& before, const std::vector<std::int64_t>& after,
                          std::int64_t sent) {
  const int n = run.p.shape.ranks;
  std::int64_t routed = 0, differing = 0;
  for (int r = run.ranks.first; r < run.ranks.first + run.ranks.local; ++r) {
    std::int64_t to_others = 0;
    for (int q = 0; q < n; ++q)
      if (q != r) to_others += 4 * run.layer->dispatch_floats(r, q);
    routed += to_others;
    if (after[run.ranks.at(r)] - before[run.ranks.at(r)] != to_others) ++differing;
  }
  run.m.bytes_match_routing = run.ranks.sum(differing) == 0 ? 1 : 0;
  run.m.dispatch_bytes_sent_per_rank = double(sent) / n;
  run.m.dispatch_bytes_routed_per_rank = double(run.ranks.sum(routed)) / n;
}

// The six phases, each over all ranks at once, timed from this thread; the bytes each put on the links.
void time_phases(MoeRun& run) {
  const int n = run.p.shape.ranks;
  std::vector<std::vector<double>> samples(moe::kPhases);
  std::vector<double> bytes(moe::kPhases, 0);
  const CallTimer timer = run.ranks.timer();
  for (int call = 0; call < 1 + run.p.repeats; ++call) {
    run.between();
    for (int ph = 0; ph < moe::kPhases; ++ph) {
      const std::vector<std::int64_t> before = sent_by_local_ranks(*run.comm);
      const double us = time_call_us(moe::Phase(ph) == moe::Phase::Experts ? run.experts_timer : timer, [&] {
        run.on_ranks([&](int r, std::size_t at) {
          run.layer->run_phase(r, moe::Phase(ph), run.x[at].data(), run.y[at].data());
        });
      });
      const std::vector<std::int64_t> after = sent_by_local_ranks(*run.comm);
      if (call == 0) continue;  // the warm-up
      samples[std::size_t(ph)].push_back(us);
      const std::int64_t sent = run.ranks.sum(total(after) - total(before));
      bytes[std::size_t(ph)] = double(sent) / n;
      if (moe::Phase(ph) == moe::Phase::Dispatch) check_dispatch_bytes(run, before, after, sent);
    }
  }
  run.m.moe_us = 0;
  for (int ph = 0; ph < moe::kPhases; ++ph) {
    const TimingStats t = summarize_us(samples[std::size_t(ph)],
                                       moe::Phase(ph) == moe::Phase::Experts ? run.experts_timer.name : timer.name);
    run.m.phases.push_back({moe::phase_name(moe::Phase(ph)), spread_of(t), bytes[std::size_t(ph)]});
    run.m.moe_us += t.median_us;
  }
  run.m.max_abs_err = std::max(run.m.max_abs_err, run.ranks.max(max_abs_difference(run.y, run.reference)));
}

// The dispatch alone and a ring all-reduce of a dispatch's size, each repeated with warm caches.
void time_collectives(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  const CallTimer timer = run.ranks.timer();
  const TimingStats alone = measure(
      [&] {
        run.on_ranks([&](int r, std::size_t at) {
          run.layer->run_phase(r, moe::Phase::Dispatch, run.x[at].data(), run.y[at].data());
        });
      },
      run.options, [&] { run.between(); }, timer);
  run.m.dispatch_alone = spread_of(alone);
  const std::int64_t count = s.tokens * s.top_k * s.hidden;
  Batch tensors(std::size_t(run.ranks.local), std::vector<float>(std::size_t(count), 1.0f));
  const std::int64_t sent_before = total(sent_by_local_ranks(*run.comm));
  const TimingStats t = measure(
      [&] {
        run.on_ranks([&](int r, std::size_t at) {
          float* data = tensors[at].data();
          run.comm->ring(r, collectives::Op::AllReduce, data, data, count);
        });
      },
      run.options, [&] { run.between(); }, timer);
  run.m.all_reduce = spread_of(t);
  const std::int64_t sent = run.ranks.sum(total(sent_by_local_ranks(*run.comm)) - sent_before);
  run.m.all_reduce_bytes_per_rank = double(sent) / s.ranks / (1 + t.repeats);
}

// The dense MLP H -> k F -> H on every rank's tokens, and the FLOP of both layers.
void time_dense(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  const std::int64_t ffn = moe::dense_ffn(s);
  const moe::Experts dense = moe::make_experts(1, s.hidden, ffn, kDenseSeed);
  const std::unique_ptr<moe::ExpertMlps> mlp = run.make_mlps(dense, s.tokens);
  run.m.gpu_bytes = double(mlp->device_bytes() + run.mlps->device_bytes());
  Batch out = run.x;
  const TimingStats t = measure(
      [&] {
        run.on_ranks([&](int r, std::size_t at) { mlp->forward(r, 0, run.x[at].data(), s.tokens, out[at].data()); });
      },
      run.options, [&] { run.between(); }, run.experts_timer);
  MoeMeasured& m = run.m;
  m.dense = spread_of(t);
  std::int64_t kept_rows = 0;
  for (std::int64_t k : m.kept) kept_rows += k;
  const double tokens = double(s.tokens) * s.ranks;
  m.moe_flop = double(kept_rows) * moe::mlp_flop_per_row(s.hidden, s.ffn) + tokens * 2.0 * s.hidden * s.experts;
  m.dense_flop = tokens * moe::mlp_flop_per_row(s.hidden, ffn);
  m.moe_gflops = m.moe_flop / (m.moe_us * 1e3);
  m.dense_gflops = m.dense_flop / (m.dense.us * 1e3);
}

// Whether this process may run the overlap: its communication thread calls MPI while the main thread computes, which
// between processes needs MPI_THREAD_SERIALIZED or more. On threads always.
bool overlap_allowed(const MoeRun& run) { return !run.ranks.processes || mpi::world()->serialized_calls; }

// Two micro-batches in sequence and overlapped, timed in alternation; both outputs checked; the last call's spans.
void time_overlap(MoeRun& run, RunResult& result) {
  const int n = run.p.shape.ranks;
  MoeMeasured& m = run.m;
  Batch y_seq = run.x, y_seq_second = run.x, y_over = run.x, y_over_second = run.x;
  moe::MicroBatches in_sequence, overlapped;
  in_sequence.layers = overlapped.layers = {run.layer.get(), run.second.get()};
  in_sequence.inputs = overlapped.inputs = {read_only(run.x), read_only(run.x_second)};
  in_sequence.outputs = {writable(y_seq), writable(y_seq_second)};
  overlapped.outputs = {writable(y_over), writable(y_over_second)};
  std::vector<moe::PhaseSpan> seq_spans, over_spans;
  const auto [seq, over] = measure_pair(
      [&] {
        seq_spans.clear();
        moe::run_in_sequence(in_sequence, *run.comm, &seq_spans);
      },
      [&] {
        over_spans.clear();
        moe::run_overlapped(overlapped, *run.compute, *run.comm, &over_spans);
      },
      run.options, [&] { run.between(); }, run.ranks.timer());
  m.max_abs_err = std::max(m.max_abs_err, run.ranks.max(std::max({max_abs_difference(y_seq, run.reference),
                                                                  max_abs_difference(y_over, run.reference),
                                                                  max_abs_difference(y_over_second, y_seq_second)})));
  m.sequential = spread_of(seq);
  m.overlapped = spread_of(over);
  m.overlap_speedup = m.sequential.us / m.overlapped.us;
  const auto phase_us = [&](moe::Phase ph) { return m.phases[std::size_t(ph)].time.us; };
  m.ideal_overlapped_us = moe::ideal_overlapped_us(
      phase_us(moe::Phase::Route), phase_us(moe::Phase::Counts) + phase_us(moe::Phase::Dispatch),
      phase_us(moe::Phase::Experts), phase_us(moe::Phase::Combine), phase_us(moe::Phase::Finish));
  const bool shared = m.overlap_emulated != 0;
  result.timelines.push_back(
      timeline_of(every_rank(seq_spans, run.ranks), n, "two micro-batches in sequence (measured)", shared));
  result.timelines.push_back(timeline_of(every_rank(over_spans, run.ranks), n,
                                         "overlapped: a communication thread per rank (measured)", shared));
}

// Where the ranks sat on the GPUs and what ran there.
void add_gpu_notes(const MoeRun& run, RunResult& result) {
  const int n = run.p.shape.ranks;
  if (run.nccl) {
    result.backend.notes.push_back(fmt::format(
        "{}: the all-to-alls over NCCL (each rank's ncclSend and ncclRecv to every rank in one group), each rank's "
        "blocks staged from host memory to its GPU and back within the call; the all-reduce beside them is the lab's "
        "ring between the rank threads in host memory",
        run.gpu_placement));
    result.backend.notes.push_back(
        "on each rank's GPU: the experts' MLPs and the dense MLP, cuBLAS sgemm in fp32 (no TF32) and a ReLU kernel; "
        "the weights uploaded once, each expert's routed rows uploaded and its outputs downloaded within the call, "
        "which returns with them on the host and is timed by the rank threads' clock. The router, the weighted sums "
        "and the reference run on the CPU");
    return;
  }
  result.backend.notes.push_back(
      run.nccl_declined_for_wires
          ? fmt::format("{}, but link_gbps emulates wires between the rank threads, so the all-to-alls stay on them, "
                        "not on NCCL (link_gbps=0: NCCL between the GPUs); the experts on GPU 0",
                        run.gpu_placement)
          : fmt::format("ranks emulated: the {} ranks share GPU 0; the all-to-all moves tokens between rank threads in "
                        "host memory, not over NCCL, which needs a GPU per rank ({})",
                        n, run.gpu_placement));
  result.backend.notes.push_back(
      "on GPU 0: the experts' MLPs and the dense MLP, cuBLAS sgemm in fp32 (no TF32) and a ReLU kernel, each rank on "
      "its own stream; the weights uploaded once, each expert's routed rows uploaded and its outputs downloaded "
      "within the experts phase, which is timed with CUDA events, as is the dense MLP. The router, the all-to-alls, "
      "the weighted sums and the reference run on the CPU, timed with steady_clock");
}

// Where the ranks ran, and what the run could not do there.
void add_notes(const MoeRun& run, RunResult& result) {
  const int n = run.p.shape.ranks;
  result.backend.repeats = run.p.repeats;
  if (run.on_gpu) add_gpu_notes(run, result);
  if (!run.ranks.processes) {
    // Ranks that are threads of one CPU, unless each drives a GPU of its own and has a core to do it from.
    result.backend.emulated = !run.nccl || n > run.hardware;
    result.backend.notes.push_back(
        n > run.hardware
            ? fmt::format("{} rank threads take turns on {} hardware threads (emulated ranks sharing cores)", n,
                          run.hardware)
            : fmt::format("{} rank threads on {} hardware threads", n, run.hardware));
    result.backend.notes.push_back(
        run.p.link_gbps > 0
            ? fmt::format("links emulated at {:g} GB/s per direction: each message is copied, then waits out its "
                          "bytes at that rate off the core",
                          run.p.link_gbps)
            : "links are memory copies (link_gbps = 0): an all-to-all takes a core as the experts do");
    return;
  }
  const mpi::World& world = *mpi::world();
  const ProcessPlacement placement = process_placement(world);
  result.backend.emulated = placement.oversubscribed;
  result.backend.notes.push_back(placement.label);
  if (overlap_allowed(run))
    result.backend.notes.push_back(fmt::format(
        "the all-to-alls over MPI_Alltoallv and the all-reduce over the lab's ring on MPI_Sendrecv, at MPI's speed "
        "(link_gbps emulates wires between rank threads only); for the overlap a communication thread per process "
        "beside its compute thread ({})",
        world.thread_level));
  else
    result.backend.notes.push_back(fmt::format(
        "two micro-batches in sequence and overlapped: not run, as the overlap's communication thread calls MPI "
        "beside the main thread and this MPI library provided only {} ({}); launcher=threads runs them",
        world.thread_level, world.library));
}

Series balance_training_series(const std::vector<double>& losses) {
  Series training;
  training.id = "balance_training";
  training.name = "balance loss while the router trains (measured)";
  training.role = "measured";
  training.x_label = "training step";
  training.y_label = "E sum f_i P_i";
  for (std::size_t i = 0; i < losses.size(); ++i)
    training.points.push_back({double(i), losses[i], losses[i], losses[i]});
  return training;
}

}  // namespace

RunResult MoeLesson::run_with(const MoeParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  MoeRun run{.p = p, .ctx = ctx};
  run.hardware = std::max(1, int(std::thread::hardware_concurrency()));
  run.options = MeasureOptions{.warmup = 1, .repeats = p.repeats};
  make_groups(run);
  run.m.hardware_threads = run.hardware;
  run.m.emulated = run.ranks.here > run.hardware ? 1 : 0;
  run.m.overlap_emulated = 2 * run.ranks.here > run.hardware ? 1 : 0;
  const bool overlap = overlap_allowed(run);
  RunPlan plan(ctx.control, overlap ? 7 : 6);
  const tensor::SingleThreadedBlas one_blas_thread(2 * run.ranks.local);
  if (ctx.backend == BackendKind::Cuda)
    use_device(run, moe::CudaMoeExperts{.devices = run.nccl ? p.shape.ranks : 1});
  else
    use_device(run, moe::CpuMoeExperts{});
  plan.start("the router, the experts and the single-rank reference");
  route_with_reference(run);
  plan.start("the expert-parallel layer, checked against the reference");
  make_layers(run);
  plan.start("the six phases, timed");
  time_phases(run);
  plan.start("the dispatch alone, and an all-reduce of the dispatched tensor's size");
  time_collectives(run);
  plan.start("the dense MLP of the same active parameters");
  time_dense(run);
  if (overlap) {
    plan.start("two micro-batches: in sequence and overlapped");
    time_overlap(run, result);
  }
  run.m.wrong = run.m.max_abs_err > run.m.output_tolerance || run.m.experts_gpu_wrong ? 1 : 0;
  if (!run.m.balance_training.empty()) result.series.push_back(balance_training_series(run.m.balance_training));
  add_notes(run, result);
  result.measured = make_values(std::move(run.m));
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
