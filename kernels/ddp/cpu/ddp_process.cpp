// DDP with this process as one rank of the MPI world: the rank computes on the calling thread while its
// communication thread all-reduces each bucket with the lab's ring over MPI as soon as backward has freed it.
#include <exception>

#include "engine/mpi_world.h"
#include "kernels/collectives/mpi_collectives.h"
#include "kernels/ddp/cpu/replica.h"
#include "kernels/ddp/trainer.h"
#include "kernels/tensor/tp_layer.h"

namespace dlsys::ddp {

namespace {

// This rank's spans of the last step, from its own step start.
void keep_own_last_step(TrainResult& out, const Replica& rep) {
  for (const auto* spans : {&rep.compute_spans, &rep.comm_spans})
    for (OpSpan span : *spans) {
      span.start_us -= rep.step_start_us;
      span.end_us -= rep.step_start_us;
      out.last_step_spans.push_back(std::move(span));
    }
}

}  // namespace

TrainResult train_ddp_process(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger, int rank) {
  check_data(c, data);
  if (c.mode != SyncMode::Ddp || c.wire != WireFormat::Fp32)
    throw RunFailure("ranks as processes train DDP with fp32 gradients only");
  const tensor::SingleThreadedBlas blas;
  const std::int64_t params = training::parameter_count(c.shape);
  TrainResult out;
  out.buckets = assign_buckets(c.shape, c.bucket_elements);
  out.steps.assign(std::size_t(c.steps), std::vector<RankStep>(1));
  Replica rep(c, rank, ledger);
  // The ring reads the gradient and writes the sum elsewhere (its working space may not alias its input).
  std::vector<float> reduced(static_cast<std::size_t>(params));
  ledger.allocate("comm", params * 4);
  const std::int64_t sent_before = collectives::mpi::ring_bytes_sent();
  const std::int64_t received_before = collectives::mpi::ring_bytes_received();
  const Clock::time_point origin = Clock::now();
  std::atomic<bool> comm_failed{false}, compute_failed{false};
  std::exception_ptr comm_error;

  std::thread communicator([&] {
    const auto all_reduce = [&](const Bucket& bucket) {
      collectives::mpi::ring(collectives::Op::AllReduce, rep.grads.data() + bucket.begin, reduced.data() + bucket.begin,
                             bucket.elements());
    };
    // On the compute side's failure the caller ends every rank (a failure cannot be agreed on mid-step).
    const auto stopped = [&] { return compute_failed.load(); };
    try {
      for (int s = 0; s < c.steps; ++s)
        if (!all_reduce_buckets_of_step(out.buckets, s, rep, origin, all_reduce, stopped)) return;
    } catch (...) {
      comm_error = std::current_exception();
      comm_failed = true;
      rep.comm_done.store(c.steps, std::memory_order_release);  // wakes the compute side, which then stops
      rep.comm_done.notify_all();
    }
  });

  std::exception_ptr compute_error;
  try {
    for (int s = 0; s < c.steps && !comm_failed; ++s) {
      // The communication thread is between steps (it finished step s - 1): this thread alone calls MPI here.
      mpi::barrier();
      rep.step_start_us = us_since(origin);
      rep.compute_spans.clear();
      compute_step(c, data, rep, rank, s, origin);
      if (comm_failed) break;
      const double t = us_since(origin);
      sgd(rep.weights, reduced, c.learning_rate);
      rep.compute_spans.push_back({rank, false, "optimizer", "SGD", t, us_since(origin)});
      out.steps[std::size_t(s)][0] = summarize(rep, us_since(origin), true);
    }
  } catch (...) {
    compute_error = std::current_exception();
    // The communication thread may wait for gradients that will never be ready: release it, and it stops.
    compute_failed = true;
    rep.ready.store(std::int64_t(c.steps) * params, std::memory_order_release);
    rep.ready.notify_all();
  }
  communicator.join();
  ledger.release("comm", params * 4);
  if (compute_error) std::rethrow_exception(compute_error);
  if (comm_error) std::rethrow_exception(comm_error);

  keep_own_last_step(out, rep);
  out.weights = rep.weights;
  out.rank0_bytes_sent_per_step = (collectives::mpi::ring_bytes_sent() - sent_before) / c.steps;
  out.rank0_bytes_received_per_step = (collectives::mpi::ring_bytes_received() - received_before) / c.steps;
  return out;
}

}  // namespace dlsys::ddp
