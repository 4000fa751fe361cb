// Ranks as processes for the ddp lesson (ddp_processes.h): the checks, and the gathering of every rank's timings,
// spans and replica onto rank 0 after kernels/ddp's per-process trainer has run.
#include "lessons/ddp/ddp_processes.h"

#include <fmt/format.h>

#include <climits>
#include <sstream>

#include "engine/backend.h"
#include "engine/mpi_world.h"
#include "kernels/collectives/mpi_collectives.h"
#include "kernels/ddp/ddp_cuda.h"
#include "kernels/ddp/trainer.h"
#include "lessons/common/process_placement.h"

namespace dlsys::ddp {

namespace {

// One rank's steps and last-step spans as text lines, for gather_text: "step ..." then "span ... label".
std::string encode(const TrainResult& mine) {
  std::string out;
  for (const std::vector<RankStep>& step : mine.steps) {
    const RankStep& s = step.front();
    out += fmt::format("step {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}\n", s.step_us, s.compute_us, s.comm_us,
                       s.hidden_comm_us, s.exposed_comm_us, s.idle_us);
  }
  for (const OpSpan& span : mine.last_step_spans)
    out += fmt::format("span {} {} {} {:.17g} {:.17g} {}\n", span.rank, span.comm_lane ? 1 : 0, span.kind,
                       span.start_us, span.end_us, span.label);
  return out;
}

void decode(const std::string& text, int rank, TrainResult& all) {
  std::istringstream in(text);
  std::size_t step = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string what;
    fields >> what;
    if (what == "step") {
      RankStep& s = all.steps.at(step++).at(std::size_t(rank));
      fields >> s.step_us >> s.compute_us >> s.comm_us >> s.hidden_comm_us >> s.exposed_comm_us >> s.idle_us;
    } else if (what == "span") {
      OpSpan span;
      int comm = 0;
      fields >> span.rank >> comm >> span.kind >> span.start_us >> span.end_us;
      span.comm_lane = comm != 0;
      std::getline(fields >> std::ws, span.label);
      all.last_step_spans.push_back(std::move(span));
    }
  }
}

// The GPU trainer's links between processes, through MPI.
cuda::ProcessLinks mpi_links(const mpi::World& w) {
  return {.rank = w.rank,
          .local_rank = w.local_rank,
          .shift_from_previous =
              [](const std::vector<unsigned char>& mine) {
                return mpi::shift_bytes_from_previous(mine.data(), mine.size());
              },
          .pass_token = mpi::pass_token_around_ring,
          .barrier = mpi::barrier,
          .agree =
              [](const std::string& failure) {
                const mpi::Agreement agreed = mpi::agree(failure.empty() ? 0 : kExitRunFailure, failure);
                if (agreed.code != 0) throw RunFailure(fmt::format("rank {}: {}", agreed.rank, agreed.message));
              }};
}

}  // namespace

std::vector<std::string> process_launch_params(int world_size) { return {fmt::format("n={}", world_size)}; }

void check_process_run(const DdpParams& p, BackendKind backend) {
  check_mpi_world(p.n, p.n_text, "ddp");
  if (backend == BackendKind::Cuda && mpi::world()->hosts.size() > 1)
    throw BadInput(fmt::format(
        "parameter 'launcher': value 'mpi' with --backend cuda for ddp needs every rank on one host (its processes "
        "all-reduce over CUDA IPC), and these ranks are on {} hosts; allowed: one host, or --backend cpu",
        mpi::world()->hosts.size()));
  if (p.mode != SyncMode::Ddp)
    throw BadInput(fmt::format(
        "parameter 'mode': value '{}' is not allowed with launcher=mpi (the processes all-reduce gradient buckets "
        "with the lab's ring; DataParallel's master runs on rank threads); allowed: ddp, or launcher = threads",
        "dataparallel"));
  if (p.grad_dtype != WireFormat::Fp32)
    throw BadInput(fmt::format(
        "parameter 'grad_dtype': value '{}' is not allowed with launcher=mpi (the ring between processes carries "
        "fp32); allowed: fp32, or launcher = threads for 16-bit wires",
        wire_name(p.grad_dtype)));
  const double gradient_bytes = 8.0 * double(p.layers) * double(p.width) * p.width;
  if (gradient_bytes > double(INT_MAX))
    throw BadInput(fmt::format(
        "parameters 'layers'/'width': a gradient of {:.0f} bytes is not allowed with launcher=mpi (MPI counts "
        "bytes in an int when the replicas are compared); allowed: at most {} bytes",
        gradient_bytes, INT_MAX));
  const mpi::World* w = mpi::world();
  if (!w->serialized_calls)
    throw BadInput(fmt::format(
        "parameter 'launcher': value 'mpi' needs an MPI library that allows calls from a communication thread "
        "(MPI_THREAD_SERIALIZED); this one provided {} ({}); allowed: threads",
        w->thread_level, w->library));
}

TrainResult train_over_processes(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger,
                                 BackendKind backend) {
  const mpi::World& w = *mpi::world();
  TrainResult mine = backend == BackendKind::Cuda ? cuda::train_gpu_process(c, data, ledger, mpi_links(w))
                                                  : train_ddp(c, data, ledger, *collectives::mpi::world_group());

  // Every replica against rank 0's, bit for bit.
  std::vector<float> rank0 = mine.weights;
  mpi::broadcast_bytes(rank0.data(), rank0.size() * sizeof(float));
  const std::int64_t differing = mpi::sum_over_ranks(rank0 == mine.weights ? 0 : 1);

  const std::vector<std::string> texts = mpi::gather_text(encode(mine));
  if (w.rank != 0) return mine;
  TrainResult all;
  all.weights = std::move(mine.weights);
  all.replicas_identical = differing == 0;
  all.buckets = std::move(mine.buckets);
  all.rank0_bytes_sent_per_step = mine.rank0_bytes_sent_per_step;
  all.rank0_bytes_received_per_step = mine.rank0_bytes_received_per_step;
  all.steps.assign(std::size_t(c.steps), std::vector<RankStep>(std::size_t(w.size)));
  for (int r = 0; r < w.size; ++r) decode(texts[std::size_t(r)], r, all);
  return all;
}

bool processes_share_gpus() {
  const mpi::World* w = mpi::world();
  return w && mpi::max_over_ranks(cuda_status().device_count < w->local_size ? 1.0 : 0.0) > 0;
}

std::string process_placement_text(BackendKind backend) {
  const mpi::World* w = mpi::world();
  if (!w) return {};
  std::string label = process_placement(*w).label;
  if (backend == BackendKind::Cuda) {
    const int gpus = cuda_status().device_count;
    label +=
        fmt::format(", {} on {} GPU{} (device: local rank mod {})", w->local_size, gpus, gpus == 1 ? "" : "s", gpus);
  }
  return label;
}

std::string process_thread_level() {
  const mpi::World* w = mpi::world();
  return w ? w->thread_level : std::string();
}

}  // namespace dlsys::ddp
