// Ranks as processes: every size is measured for the lab's ring over MPI_Sendrecv and for MPI's own all-reduce,
// reduce-scatter and all-gather (on GPUs: the lab's ring over CUDA IPC and NCCL's all-reduce across processes), each
// timed the same way and each checked on every rank against inputs.h's values.
#include "lessons/allreduce/mpi_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "engine/backend.h"
#include "engine/host_buffer.h"
#include "engine/host_memory.h"
#include "engine/measure.h"
#include "engine/mpi_world.h"
#include "engine/process_timing.h"
#include "engine/units.h"
#include "kernels/collectives/cost_model.h"
#include "kernels/collectives/ipc_ring_processes.h"
#include "kernels/collectives/mpi_collectives.h"
#include "kernels/collectives/nccl_processes.h"
#include "kernels/collectives/rank_reference.h"
#include "kernels/collectives/reference.h"
#include "kernels/collectives/step_record.h"
#include "lessons/allreduce/bench.h"
#include "lessons/allreduce/mpi_values.h"
#include "lessons/common/process_placement.h"
#include "lessons/common/run_plan.h"

namespace dlsys::allreduce {

using collectives::Op;

namespace {

constexpr double kBenchExpectedFraction = 0.8;
constexpr const char* kLabRing = "lab ring (MPI_Sendrecv)";
constexpr const char* kLabRingIpc = "lab ring (CUDA IPC)";
constexpr const char* kNccl = "NCCL (ncclAllReduce, ncclCommInitRank)";

// Every size the run measures, smallest first: the sweep's and the chosen one, each once.
std::vector<std::int64_t> sizes_of(const AllreduceParams& p) {
  std::vector<std::int64_t> sizes;
  for (double s : p.sizes) sizes.push_back(static_cast<std::int64_t>(s));
  sizes.push_back(static_cast<std::int64_t>(p.bytes));
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// Every implementation is timed as the threads' run times its collective (bench.h's time_calls), each sample after
// a barrier and the slowest rank's, so a collective is done only when its last rank is, and every rank takes the
// same samples: no rank decides alone how many.
struct RankTiming {
  TimingStats time;
  int calls_per_sample = 1;
};

ProcessRow row_of(Op op, std::string implementation, std::int64_t bytes, const RankTiming& t, std::int64_t wrong,
                  int n) {
  const double algbw = t.time.median_us > 0 ? double(bytes) / (t.time.median_us * 1e3) : 0.0;
  return ProcessRow{.collective = collectives::op_name(op),
                    .implementation = std::move(implementation),
                    .bytes = double(bytes),
                    .count = double(bytes / 4),
                    .time_us = t.time.median_us,
                    .time_min_us = t.time.min_us,
                    .time_max_us = t.time.max_us,
                    .algbw_gbps = algbw,
                    .busbw_gbps = collectives::busbw_factor(op, n) * algbw,
                    .wrong = wrong,
                    .calls_per_sample = t.calls_per_sample};
}

// Buffers are made on every rank and the ranks agree on the outcome, so a rank out of memory ends every rank alike.
template <class Make>
void make_on_every_rank(Make&& make) {
  int code = 0;
  std::string why;
  try {
    make();
  } catch (const std::bad_alloc&) {
    code = kExitRunFailure;
    why = "out of host memory making the send and recv buffers";
  } catch (const std::exception& e) {
    code = kExitRunFailure;
    why = e.what();
  }
  const mpi::Agreement agreed = mpi::agree(code, why);
  if (agreed.code != 0) throw RunFailure(fmt::format("rank {}: {}", agreed.rank, agreed.message));
}

struct CpuBuffers {
  HostBuffer<float> send, recv;
};

// The lab's ring for the lesson's op over the processes as a rank group (the same ring the threads' run calls),
// then MPI's three collectives, at every size.
std::vector<ProcessRow> measure_cpu(const AllreduceParams& p, const mpi::World& w, MemoryLedger& ledger, RunPlan& parts,
                                    const RunControl& control) {
  const std::unique_ptr<collectives::RankGroup> group = collectives::mpi::world_group();
  const std::vector<std::int64_t> sizes = sizes_of(p);
  const std::int64_t max_count = sizes.back() / 4;
  const int threads = std::max(1, describe_cpu().threads / w.local_size);
  CpuBuffers buffers;
  make_on_every_rank([&] {
    buffers.send = HostBuffer<float>(ledger, "send buffer (this rank)", max_count);
    buffers.recv = HostBuffer<float>(ledger, "recv buffer (this rank)", max_count);
    collectives::fill_inputs(buffers.send.data(), w.rank, max_count, threads);
    std::fill(buffers.recv.data(), buffers.recv.data() + max_count, 0.0f);  // touch the pages before timing
  });
  const float* send = buffers.send.data();
  float* recv = buffers.recv.data();
  const int repeats = p.repeats;
  const Op lab_op = p.op;
  std::vector<ProcessRow> rows;
  for (const std::int64_t bytes : sizes) {
    const std::int64_t count = bytes / 4;
    parts.start(fmt::format("{} over processes", format_bytes_binary(bytes)));
    struct Candidate {
      Op op;
      std::string implementation;
      std::function<void()> call;
      collectives::ChunkOwnership ownership;
    };
    collectives::RankGroup& ranks = *group;
    std::vector<Candidate> candidates{
        {lab_op,
         kLabRing,
         [=, &ranks] { ranks.run_on_ranks([&](int rank) { ranks.ring(rank, lab_op, send, recv, count); }); },
         {1}}};
    for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather})
      candidates.push_back({op,
                            collectives::mpi::library_function(op, count, w.size),
                            [=] { collectives::mpi::library(op, send, recv, count); },
                            {0}});
    for (const Candidate& c : candidates) {
      RankTiming t;
      t.time = time_calls(c.call, repeats, control, t.calls_per_sample, ranks.timer());
      // The checked call: outputs poisoned first, so an element the collective never wrote counts as wrong.
      std::fill(recv, recv + count, std::numeric_limits<float>::quiet_NaN());
      c.call();
      const std::int64_t wrong =
          ranks.sum_over_processes(collectives::count_wrong_on_rank(c.op, recv, count, w.rank, w.size, c.ownership));
      rows.push_back(row_of(c.op, c.implementation, bytes, t, wrong, w.size));
    }
  }
  return rows;
}

// Which GPU all-reduces a run can make: NCCL needs a GPU of its own per rank; the lab's ring over CUDA IPC needs every
// rank on one host (IPC handles do not cross hosts) and each GPU able to read the previous rank's.
struct GpuPlan {
  bool nccl = false, lab_ring = false;
  bool ranks_share_gpus = false;
  std::vector<std::string> caveats;
};

GpuPlan plan_gpu(const AllreduceParams& p, const mpi::World& w) {
  GpuPlan plan;
  const int gpus = cuda_status().device_count;
  plan.ranks_share_gpus = mpi::max_over_ranks(gpus < w.local_size ? 1.0 : 0.0) > 0;
  plan.nccl = !plan.ranks_share_gpus;
  plan.lab_ring = p.algo == Algo::Ring && w.hosts.size() == 1;
  if (plan.ranks_share_gpus)
    plan.caveats.push_back(fmt::format(
        "emulated: {} ranks share {} GPU{}, so they take turns on it; NCCL needs a GPU of its own per rank, so only "
        "the lab's ring runs",
        w.local_size, gpus, gpus == 1 ? "" : "s"));
  if (p.algo == Algo::Ring && w.hosts.size() > 1)
    plan.caveats.push_back(fmt::format(
        "ranks on {} hosts: CUDA IPC handles do not cross hosts, so the lab's ring does not run; NCCL alone",
        w.hosts.size()));
  return plan;
}

// The lab's ring over CUDA IPC, made and connected on every rank; nullptr (with a caveat) when some rank's GPU cannot
// read the previous rank's, which every rank agrees on.
std::unique_ptr<collectives::cuda::IpcRingRank> connect_lab_ring(const mpi::World& w, std::int64_t max_count,
                                                                 GpuPlan& plan) {
  std::unique_ptr<collectives::cuda::IpcRingRank> ring;
  make_on_every_rank([&] { ring = collectives::cuda::make_ipc_ring_rank(w.rank, w.size, w.local_rank, max_count); });
  std::vector<unsigned char> handles;
  make_on_every_rank([&] { handles = ring->handles(); });
  const std::vector<unsigned char> previous = mpi::shift_bytes_from_previous(handles.data(), handles.size());
  int code = 0;
  std::string why;
  try {
    ring->open_previous(previous);
  } catch (const std::exception& e) {
    code = kExitRunFailure;
    why = e.what();
  }
  const mpi::Agreement agreed = mpi::agree(code, why);
  if (agreed.code == 0) return ring;
  plan.lab_ring = false;
  plan.caveats.push_back(fmt::format("the lab's ring did not run: {}", agreed.message));
  return nullptr;
}

// On GPUs: the lab's ring over CUDA IPC and NCCL's all-reduce across processes, as the plan allows, both timed with
// CUDA events on each rank's stream and checked on every rank.
std::vector<ProcessRow> measure_gpu(const AllreduceParams& p, const mpi::World& w, MemoryLedger& ledger, RunPlan& parts,
                                    const RunControl& control, std::string& device, GpuPlan& plan) {
  const std::vector<std::int64_t> sizes = sizes_of(p);
  const std::int64_t max_count = sizes.back() / 4;
  HostBuffer<float> result;
  make_on_every_rank([&] { result = HostBuffer<float>(ledger, "checked result (this rank)", max_count); });
  std::unique_ptr<collectives::cuda::IpcRingRank> lab;
  if (plan.lab_ring) lab = connect_lab_ring(w, max_count, plan);
  std::unique_ptr<collectives::cuda::NcclProcessRank> nccl;
  if (plan.nccl) {
    make_on_every_rank([&] { nccl = collectives::cuda::make_nccl_process_rank(w.rank, w.local_rank, max_count); });
    make_on_every_rank([&] { nccl->join(w.size, mpi::broadcast_bytes); });
  }
  if (!lab && !nccl)
    throw RunFailure(fmt::format("neither all-reduce can run on these GPUs: {}", fmt::join(plan.caveats, "; ")));
  device = lab ? lab->device_description() : nccl->device_description();
  // Batches of calls timed with CUDA events on each rank's stream, each sample the slowest rank's after a barrier.
  const auto time_batches = [&](const std::function<double(int calls)>& batch_us) {
    RankTiming t;
    t.time = measure_batched([&](int calls) { return slowest_rank_us([&] { return batch_us(calls); }); },
                             timed_samples(p.repeats), [&] { control.check_cancelled(); }, t.calls_per_sample,
                             "CUDA events, slowest rank");
    return t;
  };
  const auto checked_row = [&](const std::string& implementation, std::int64_t bytes, const RankTiming& t) {
    const std::int64_t wrong = mpi::sum_over_ranks(collectives::count_wrong_on_rank(
        Op::AllReduce, result.data(), bytes / 4, w.rank, w.size, collectives::ChunkOwnership{0}));
    return row_of(Op::AllReduce, implementation, bytes, t, wrong, w.size);
  };
  std::vector<ProcessRow> rows;
  for (const std::int64_t bytes : sizes) {
    const std::int64_t count = bytes / 4;
    parts.start(fmt::format("{} over processes", format_bytes_binary(bytes)));
    if (lab) {
      const RankTiming t =
          time_batches([&](int calls) { return lab->time_all_reduce_us(count, calls, mpi::pass_token_around_ring); });
      lab->checked_all_reduce(count, result.data(), mpi::pass_token_around_ring);
      rows.push_back(checked_row(kLabRingIpc, bytes, t));
    }
    if (nccl) {
      const RankTiming t = time_batches([&](int calls) { return nccl->time_all_reduce_us(count, calls); });
      nccl->checked_all_reduce(count, result.data());
      rows.push_back(checked_row(kNccl, bytes, t));
    }
  }
  if (lab) {
    lab->close_previous();
    mpi::barrier();  // nobody has another rank's buffers open any more: each may free its own
  }
  return rows;
}

const ProcessRow* find_row(const std::vector<ProcessRow>& rows, const std::string& collective,
                           const std::string& implementation_prefix, double bytes) {
  for (const ProcessRow& row : rows)
    if (row.collective == collective && row.bytes == bytes && row.implementation.rfind(implementation_prefix, 0) == 0)
      return &row;
  return nullptr;
}

AllreduceProcessesMeasured summarize(const AllreduceParams& p, const mpi::World& w, bool on_gpu,
                                     std::vector<ProcessRow> rows) {
  AllreduceProcessesMeasured m;
  m.backend = on_gpu ? "cuda" : "cpu";
  m.world_size = w.size;
  m.hosts = w.hosts;
  m.mpi_library = w.library;
  const ProcessPlacement placement = process_placement(w);
  m.hardware_threads = placement.hardware_threads;
  m.ranks_on_this_host = w.local_size;
  m.oversubscribed = placement.oversubscribed;
  m.label = placement.label;
  for (const ProcessRow& row : rows) m.wrong += row.wrong;
  m.bench_bytes = rows.empty() ? 0 : rows.back().bytes;
  m.bench_expected_fraction = kBenchExpectedFraction;
  // The lab's ring against its peer at the largest size: MPI's collective of the same kind on the CPU, NCCL on GPUs.
  const std::string op = collectives::op_name(on_gpu ? Op::AllReduce : p.op);
  m.bench_peer = on_gpu ? "NCCL (ncclAllReduce)"
                        : collectives::mpi::library_function(p.op, std::int64_t(m.bench_bytes) / 4, w.size);
  const ProcessRow* lab = find_row(rows, op, "lab ring", m.bench_bytes);
  const ProcessRow* peer = find_row(rows, op, on_gpu ? "NCCL" : "MPI_", m.bench_bytes);
  if (lab) m.lab_ring_busbw_gbps = lab->busbw_gbps;
  if (peer) m.mpi_busbw_gbps = peer->busbw_gbps;
  if (lab && peer && peer->busbw_gbps > 0) {
    m.lab_ring_fraction_of_mpi_busbw = lab->busbw_gbps / peer->busbw_gbps;
    // The expectation is the CPU path's, against MPI; on GPUs the fraction is shown without one.
    m.bench_met = !on_gpu && *m.lab_ring_fraction_of_mpi_busbw >= kBenchExpectedFraction && m.wrong == 0;
  }
  if (m.oversubscribed)
    m.caveats.push_back(fmt::format(
        "oversubscribed: {} ranks share {} hardware threads, so a rank also waits for a core; both the lab's ring "
        "and MPI's collectives pay it, so compare them with each other, not with a real network",
        w.local_size, m.hardware_threads));
  if (w.hosts.size() == 1 && !on_gpu)
    m.caveats.push_back(
        "one host: MPI moves the bytes through shared memory, so these are copy bandwidths of this machine, not of a "
        "network");
  if (on_gpu && lab)
    m.caveats.push_back(
        "the lab's ring orders its steps through the host (an MPI message after each step), so small messages measure "
        "that handshake; NCCL orders its steps on the GPU");
  m.rows = std::move(rows);
  return m;
}

bool same_record(const collectives::CollectiveRecord& a, const collectives::CollectiveRecord& b) {
  if (a.op != b.op || a.n_ranks != b.n_ranks || a.count != b.count || a.chunk_begin != b.chunk_begin ||
      a.steps.size() != b.steps.size())
    return false;
  for (std::size_t s = 0; s < a.steps.size(); ++s) {
    if (a.steps[s].phase != b.steps[s].phase || a.steps[s].step != b.steps[s].step) return false;
    for (std::size_t r = 0; r < a.steps[s].ranks.size(); ++r) {
      const collectives::RankStep &x = a.steps[s].ranks[r], &y = b.steps[s].ranks.at(r);
      if (x.sent_chunk != y.sent_chunk || x.sent_to != y.sent_to || x.received_chunk != y.received_chunk ||
          x.received_from != y.received_from || x.reduced != y.reduced || x.values != y.values ||
          x.contributors != y.contributors)
        return false;
    }
  }
  return true;
}

// The ring between processes on the step-through's inputs (as many values per rank as ranks), recorded; rank 0
// compares it with the threads' ring's record.
void record_and_compare(const AllreduceParams& p, const mpi::World& w, AllreduceProcessesMeasured& m) {
  const std::vector<std::vector<float>> inputs = collectives::demo_inputs(w.size, w.size);
  const collectives::CollectiveRecord over_processes = collectives::mpi::record_ring(p.op, inputs[w.rank]);
  if (w.rank != 0) return;
  m.record_steps = static_cast<int>(over_processes.steps.size());
  m.record_matches_threads = same_record(over_processes, collectives::record_ring(p.op, inputs));
}

// Busbw against size, one series per collective and implementation (whiskers: the fastest and slowest sample), so
// the rows reach --csv and a plot as well as --json.
std::vector<Series> busbw_series(const std::vector<ProcessRow>& rows) {
  std::vector<Series> out;
  for (const ProcessRow& row : rows) {
    const std::string id = "busbw_" + row.collective + "_" +
                           (row.implementation.rfind("lab", 0) == 0    ? "lab_ring"
                            : row.implementation.rfind("NCCL", 0) == 0 ? "nccl"
                                                                       : "mpi");
    auto it = std::find_if(out.begin(), out.end(), [&](const Series& s) { return s.id == id; });
    if (it == out.end()) {
      out.push_back(Series{id,
                           row.collective + " / " + row.implementation,
                           "measured",
                           "message size",
                           "bytes",
                           "bus bandwidth",
                           "GB/s",
                           {}});
      it = out.end() - 1;
    }
    const double factor = row.time_us > 0 ? row.busbw_gbps * row.time_us : 0.0;  // busbw x time is constant
    it->points.push_back({row.bytes, row.busbw_gbps, row.time_max_us > 0 ? factor / row.time_max_us : 0.0,
                          row.time_min_us > 0 ? factor / row.time_min_us : 0.0});
  }
  return out;
}

}  // namespace

std::vector<std::string> process_launch_params(int world_size, bool quick) {
  std::vector<std::string> out{fmt::format("n={}", world_size)};
  if (!quick) out.push_back("sizes=1KiB..64MiB");
  return out;
}

void check_process_run(const AllreduceParams& p, BackendKind backend) {
  check_mpi_world(p.n, p.n_text, "allreduce");
  const mpi::World* w = mpi::world();
  if (backend == BackendKind::Cuda) {
    const std::string& algo = algo_name(p.algo);
    if (p.algo != Algo::Ring && p.algo != Algo::Library)
      throw BadInput(fmt::format(
          "parameter 'algo': value '{}' is not allowed with launcher=mpi on cuda; allowed: ring (the lab's ring over "
          "CUDA IPC, beside NCCL where every rank has a GPU of its own), library (NCCL alone)",
          algo));
    // NCCL refuses two ranks on one GPU ("invalid usage" from ncclCommInitRank): said here, before anything starts.
    // The lab's ring shares a GPU between ranks, but only on one host.
    const int gpus = cuda_status().device_count;
    const bool ranks_share_gpus = gpus < w->local_size;
    const bool library = p.algo == Algo::Library;
    if (ranks_share_gpus && (library || w->hosts.size() > 1))
      throw BadInput(fmt::format(
          "parameter 'launcher': value 'mpi' on cuda with {} needs one GPU per rank, and this host runs {} ranks on "
          "{} GPU{}; start at most {} rank{} per host{}",
          library ? "NCCL alone (algo=library)" : "ranks on several hosts", w->local_size, gpus, gpus == 1 ? "" : "s",
          gpus, gpus == 1 ? "" : "s",
          library ? ", or pass algo=ring (the lab's ring shares a GPU between ranks on one host)" : ""));
    if (p.op != Op::AllReduce)
      throw BadInput(
          fmt::format("parameter 'op': value '{}' is not allowed with launcher=mpi on cuda; allowed: allreduce",
                      collectives::op_name(p.op)));
  } else if (p.algo != Algo::Ring) {
    throw BadInput(
        fmt::format("parameter 'algo': value '{}' is not allowed with launcher=mpi on cpu; allowed: ring (MPI's own "
                    "collectives are measured beside it in every run)",
                    algo_name(p.algo)));
  }
  const std::vector<std::int64_t> sizes = sizes_of(p);
  const double largest = double(sizes.back());
  if (largest / 4 > double(INT_MAX))
    throw BadInput(fmt::format(
        "parameters 'bytes'/'sizes': {} is not allowed with launcher=mpi (MPI counts elements in an int); allowed: "
        "at most {} bytes",
        format_bytes_binary(largest), std::int64_t(INT_MAX) * 4));
  // Every rank on this host holds a send and a recv buffer of the largest size (on GPUs: one host copy to check).
  const double needed = largest * (backend == BackendKind::Cuda ? 1 : 2) * w->local_size;
  const HostMemory host = host_memory();
  if (!host.fits(needed))
    throw BadInput(fmt::format(
        "parameters 'bytes'/'sizes' up to {}: the {} ranks on this host need {} but only {} of host memory is "
        "available; lower bytes or sizes",
        format_bytes_binary(largest), w->local_size, format_bytes_both(needed), format_bytes_both(host.free_bytes)));
}

RunResult run_over_processes(const Lesson& lesson, const AllreduceParams& p, RunContext& ctx) {
  const mpi::World& w = *mpi::world();
  const bool on_gpu = ctx.backend == BackendKind::Cuda;
  RunResult result = begin_result(lesson, ctx);
  std::string device;
  GpuPlan plan;
  if (on_gpu) plan = plan_gpu(p, w);
  RunPlan parts(ctx.control, double(sizes_of(p).size()));  // one part per size
  std::vector<ProcessRow> rows = on_gpu ? measure_gpu(p, w, ctx.ledger, parts, ctx.control, device, plan)
                                        : measure_cpu(p, w, ctx.ledger, parts, ctx.control);
  AllreduceProcessesMeasured m = summarize(p, w, on_gpu, std::move(rows));
  m.caveats.insert(m.caveats.begin(), plan.caveats.begin(), plan.caveats.end());
  if (!on_gpu) {
    record_and_compare(p, w, m);
    if (w.rank == 0 && !m.record_matches_threads)
      m.caveats.push_back(
          "the ring between processes recorded a different step-by-step account than the threads' ring on the same "
          "inputs: the schedules disagree");
  }
  result.backend.emulated = plan.ranks_share_gpus;
  result.backend.timer =
      on_gpu ? "CUDA events, slowest rank after a barrier" : "steady_clock, slowest rank after a barrier";
  result.backend.repeats = p.repeats;
  if (!device.empty()) result.backend.device = device;
  result.backend.notes.push_back(m.label);
  result.backend.notes.push_back(fmt::format("MPI library: {}", m.mpi_library));
  result.series = busbw_series(m.rows);
  result.measured = make_values(std::move(m));
  parts.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys::allreduce
