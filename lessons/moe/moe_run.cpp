// The mixture-of-experts lesson's run: the router (trained on the balance loss when asked), the single-rank reference,
// the expert-parallel layer over rank threads checked against it, its six phases timed and their bytes counted on the
// links, an all-reduce of the dispatched tensor's size and the dense MLP of the same active parameters timed beside
// it, and two micro-batches in sequence against overlapped.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include "engine/measure.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/moe/moe_layer.h"
#include "kernels/moe/overlap.h"
#include "kernels/tensor/tp_layer.h"
#include "lessons/common/run_plan.h"
#include "lessons/moe/moe_lesson.h"

namespace dlsys {

using moe_lesson::MoeMeasured;
using moe_lesson::MoeParams;

namespace {

constexpr std::uint64_t kRouterSeed = 16, kExpertSeed = 1600, kDenseSeed = 9000, kInputSeed = 160000;

using Batch = std::vector<std::vector<float>>;  // per rank: (tokens, H)

Batch make_batch(const moe::MoeShape& s, int micro_batch) {
  Batch batch;
  for (int r = 0; r < s.ranks; ++r) {
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

double max_abs_difference(const Batch& a, const Batch& b) {
  double err = 0;
  for (std::size_t r = 0; r < a.size(); ++r)
    for (std::size_t i = 0; i < a[r].size(); ++i) err = std::max(err, std::fabs(double(a[r][i]) - b[r][i]));
  return err;
}

std::int64_t total_bytes_sent(const collectives::RankGroup& group, std::vector<std::int64_t>* per_rank = nullptr) {
  std::int64_t total = 0;
  for (int r = 0; r < group.size(); ++r) {
    const std::int64_t bytes = group.bytes_sent_by(r);
    total += bytes;
    if (per_rank) (*per_rank)[std::size_t(r)] = bytes;
  }
  return total;
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

// The router's part of the run: its training on the balance loss when asked, and what it did before.
void train_router(const MoeParams& p, const Batch& batch, moe::Router& router, MoeMeasured& m) {
  if (!p.aux_loss) return;
  std::vector<moe::Routing> before;
  for (const auto& rank : batch) before.push_back(moe::route_tokens(router, rank.data(), p.shape.tokens, p.shape));
  const moe::Routing all = merged(before);
  m.wanted_untrained = all.wanted;
  m.balance_loss_untrained = moe::balance_loss(all);
  m.balance_training = moe::train_for_balance(router, batch.front().data(), p.shape.tokens, p.shape,
                                              moe_lesson::kBalanceSteps, moe_lesson::kBalanceLearningRate);
}

// The six phases, each over all ranks at once, timed from this thread; the bytes each put on the links.
void time_phases(const MoeParams& p, moe::ExpertParallelLayer& layer, collectives::RankGroup& group, const Batch& x,
                 Batch& y, RunControl& control, MoeMeasured& m) {
  const int n = p.shape.ranks;
  std::vector<std::vector<double>> samples(moe::kPhases);
  std::vector<double> bytes(moe::kPhases, 0);
  std::vector<std::int64_t> before(static_cast<std::size_t>(n)), after(static_cast<std::size_t>(n));
  for (int call = 0; call < 1 + p.repeats; ++call) {
    control.check_cancelled();
    for (int ph = 0; ph < moe::kPhases; ++ph) {
      const std::int64_t sent_before = total_bytes_sent(group, &before);
      Stopwatch watch;
      group.run_on_ranks(
          [&](int r) { layer.run_phase(r, moe::Phase(ph), x[std::size_t(r)].data(), y[std::size_t(r)].data()); });
      const double us = watch.elapsed_us();
      const std::int64_t sent = total_bytes_sent(group, &after) - sent_before;
      if (call == 0) continue;  // the warm-up
      samples[std::size_t(ph)].push_back(us);
      bytes[std::size_t(ph)] = double(sent) / n;
      if (moe::Phase(ph) == moe::Phase::Dispatch) {
        m.bytes_match_routing = 1;
        double routed = 0;
        for (int r = 0; r < n; ++r) {
          std::int64_t to_others = 0;
          for (int q = 0; q < n; ++q)
            if (q != r) to_others += 4 * layer.dispatch_floats(r, q);
          routed += double(to_others);
          if (after[std::size_t(r)] - before[std::size_t(r)] != to_others) m.bytes_match_routing = 0;
        }
        m.dispatch_bytes_sent_per_rank = double(sent) / n;
        m.dispatch_bytes_routed_per_rank = routed / n;
      }
    }
  }
  m.moe_us = 0;
  for (int ph = 0; ph < moe::kPhases; ++ph) {
    const TimingStats t = summarize_us(samples[std::size_t(ph)], "steady_clock");
    m.phases.push_back({moe::phase_name(moe::Phase(ph)), spread_of(t), bytes[std::size_t(ph)]});
    m.moe_us += t.median_us;
  }
}

// What the parts of a run share: the parameters, the batches, the weights, the two groups of rank threads (the
// all-to-alls' crossbar, and the compute side of the overlap) and the two layers of the overlap's micro-batches.
struct MoeRun {
  const MoeParams& p;
  RunContext& ctx;
  int hardware = 1;
  Batch x, x_second, reference, y;
  moe::Router router;
  moe::Experts experts;
  std::unique_ptr<collectives::RankGroup> comm, compute;
  std::unique_ptr<moe::ExpertParallelLayer> layer, second;
  MeasureOptions options;
  MoeMeasured m;

  void between() const { ctx.control.check_cancelled(); }
};

// The router (trained on the balance loss when asked), the experts and the single-rank reference: the load per expert.
void route_with_reference(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  run.x = make_batch(s, 0);
  run.x_second = make_batch(s, 1);
  run.router = moe::make_router(s.hidden, s.experts, run.p.skew, kRouterSeed);
  train_router(run.p, run.x, run.router, run.m);
  run.experts = moe::make_experts(s.experts, s.hidden, s.ffn, kExpertSeed);
  run.reference = run.x;
  const moe::Routing all =
      merged(moe::reference_layer(s, run.router, run.experts, read_only(run.x), writable(run.reference)));
  run.m.wanted = all.wanted;
  run.m.kept = all.kept;
  run.m.dropped = all.dropped;
  run.m.dropped_share = double(all.dropped) / (double(all.tokens) * s.top_k);
  run.m.balance_loss = moe::balance_loss(all);
}

// The rank threads and the layers; one forward checked against the reference and its dispatch's bytes per pair.
void make_layers(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  const int n = s.ranks;
  // Waiting ranks spin only when every thread of both groups (compute and communication) has a core.
  collectives::CommOptions mesh;
  mesh.full_mesh = true;
  mesh.poll = 2 * n <= run.hardware;
  mesh.link_gbps = run.p.link_gbps;
  collectives::CommOptions plain;
  plain.poll = mesh.poll;
  run.comm = collectives::make_thread_group(n, run.ctx.ledger, mesh);
  run.compute = collectives::make_thread_group(n, run.ctx.ledger, plain);
  run.layer = std::make_unique<moe::ExpertParallelLayer>(s, run.router, run.experts, *run.comm);
  run.second = std::make_unique<moe::ExpertParallelLayer>(s, run.router, run.experts, *run.comm);
  run.y = run.x;
  run.comm->run_on_ranks(
      [&](int r) { run.layer->forward(r, run.x[std::size_t(r)].data(), run.y[std::size_t(r)].data()); });
  run.m.max_abs_err = max_abs_difference(run.y, run.reference);
  run.m.ranks = n;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) run.m.dispatch_bytes.push_back(4 * run.layer->dispatch_floats(i, j));
}

// The dispatch alone and a ring all-reduce of a dispatch's size, each repeated with warm caches.
void time_collectives(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  const int n = s.ranks;
  const TimingStats alone = measure(
      [&] {
        run.comm->run_on_ranks([&](int r) {
          run.layer->run_phase(r, moe::Phase::Dispatch, run.x[std::size_t(r)].data(), run.y[std::size_t(r)].data());
        });
      },
      run.options, [&] { run.between(); });
  run.m.dispatch_alone = spread_of(alone);
  const std::int64_t count = s.tokens * s.top_k * s.hidden;
  Batch tensors(std::size_t(n), std::vector<float>(std::size_t(count), 1.0f));
  const std::int64_t sent_before = total_bytes_sent(*run.comm);
  const TimingStats t = measure(
      [&] {
        run.comm->run_on_ranks([&](int r) {
          float* data = tensors[std::size_t(r)].data();
          run.comm->ring(r, collectives::Op::AllReduce, data, data, count);
        });
      },
      run.options, [&] { run.between(); });
  run.m.all_reduce = spread_of(t);
  run.m.all_reduce_bytes_per_rank = double(total_bytes_sent(*run.comm) - sent_before) / n / (1 + t.repeats);
}

// The dense MLP H -> k F -> H on every rank's tokens, and the FLOP of both layers.
void time_dense(MoeRun& run) {
  const moe::MoeShape& s = run.p.shape;
  const int n = s.ranks;
  const std::int64_t ffn = moe::dense_ffn(s);
  const moe::Experts dense = moe::make_experts(1, s.hidden, ffn, kDenseSeed);
  Batch hidden(std::size_t(n), std::vector<float>(std::size_t(s.tokens * ffn)));
  Batch out = run.x;
  const TimingStats t = measure(
      [&] {
        run.comm->run_on_ranks([&](int r) {
          const auto i = std::size_t(r);
          moe::mlp_forward(dense.w1_of(0), dense.w2_of(0), s.hidden, ffn, run.x[i].data(), s.tokens, hidden[i].data(),
                           out[i].data());
        });
      },
      run.options, [&] { run.between(); });
  MoeMeasured& m = run.m;
  m.dense = spread_of(t);
  std::int64_t kept_rows = 0;
  for (std::int64_t k : m.kept) kept_rows += k;
  const double tokens = double(s.tokens) * n;
  m.moe_flop = double(kept_rows) * moe::mlp_flop_per_row(s.hidden, s.ffn) + tokens * 2.0 * s.hidden * s.experts;
  m.dense_flop = tokens * moe::mlp_flop_per_row(s.hidden, ffn);
  m.moe_gflops = m.moe_flop / (m.moe_us * 1e3);
  m.dense_gflops = m.dense_flop / (m.dense.us * 1e3);
}

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
      run.options, [&] { run.between(); });
  m.max_abs_err =
      std::max({m.max_abs_err, max_abs_difference(y_seq, run.reference), max_abs_difference(y_over, run.reference),
                max_abs_difference(y_over_second, y_seq_second)});
  m.sequential = spread_of(seq);
  m.overlapped = spread_of(over);
  m.overlap_speedup = m.sequential.us / m.overlapped.us;
  const auto phase_us = [&](moe::Phase ph) { return m.phases[std::size_t(ph)].time.us; };
  m.ideal_overlapped_us = moe::ideal_overlapped_us(
      phase_us(moe::Phase::Route), phase_us(moe::Phase::Counts) + phase_us(moe::Phase::Dispatch),
      phase_us(moe::Phase::Experts), phase_us(moe::Phase::Combine), phase_us(moe::Phase::Finish));
  const bool shared = 2 * n > run.hardware;
  result.timelines.push_back(timeline_of(seq_spans, n, "two micro-batches in sequence (measured)", shared));
  result.timelines.push_back(
      timeline_of(over_spans, n, "overlapped: a communication thread per rank (measured)", shared));
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
  const int n = p.shape.ranks;
  MoeRun run{.p = p, .ctx = ctx};
  run.hardware = std::max(1, int(std::thread::hardware_concurrency()));
  run.options = MeasureOptions{.warmup = 1, .repeats = p.repeats};
  run.m.hardware_threads = run.hardware;
  run.m.emulated = n > run.hardware ? 1 : 0;
  run.m.overlap_emulated = 2 * n > run.hardware ? 1 : 0;
  RunPlan plan(ctx.control, 7);
  const tensor::SingleThreadedBlas one_blas_thread(2 * n);
  plan.start("the router, the experts and the single-rank reference");
  route_with_reference(run);
  plan.start("the expert-parallel layer, checked against the reference");
  make_layers(run);
  plan.start("the six phases, timed");
  time_phases(p, *run.layer, *run.comm, run.x, run.y, ctx.control, run.m);
  run.m.max_abs_err = std::max(run.m.max_abs_err, max_abs_difference(run.y, run.reference));
  plan.start("the dispatch alone, and an all-reduce of the dispatched tensor's size");
  time_collectives(run);
  plan.start("the dense MLP of the same active parameters");
  time_dense(run);
  plan.start("two micro-batches: in sequence and overlapped");
  time_overlap(run, result);
  // Same routing, same rows per expert in the same order: the BLAS may still round a row differently by the matrix
  // it is in, so a few ulps of the outputs' size are allowed.
  run.m.wrong = run.m.max_abs_err > 1e-4 ? 1 : 0;
  if (!run.m.balance_training.empty()) result.series.push_back(balance_training_series(run.m.balance_training));
  result.backend.emulated = true;  // ranks are threads of one CPU
  result.backend.repeats = p.repeats;
  result.backend.notes.push_back(
      n > run.hardware ? fmt::format("{} rank threads take turns on {} hardware threads (emulated ranks sharing cores)",
                                     n, run.hardware)
                       : fmt::format("{} rank threads on {} hardware threads", n, run.hardware));
  result.backend.notes.push_back(
      p.link_gbps > 0
          ? fmt::format("links emulated at {:g} GB/s per direction: each message is copied, then waits out its bytes "
                        "at that rate off the core",
                        p.link_gbps)
          : "links are memory copies (link_gbps = 0): an all-to-all takes a core as the experts do");
  result.measured = make_values(std::move(run.m));
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
