// DDP on GPUs (see ddp_cuda.h): one host thread enqueues every rank's step, layer by layer and rank after rank. Per
// bucket, every rank's communication stream first waits for its own "gradient ready" event, then the bucket's
// all-reduce is enqueued for all ranks at once (the lab's ring or one NCCL group), so a collective always finds every
// rank's part of it enqueued. With ranks as processes each process enqueues its own rank the same way, and the
// bucket's all-reduce is the lab's ring over CUDA IPC between the processes.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/cuda/ipc_link.h"
#include "kernels/collectives/cuda/stream_ring.h"
#include "kernels/collectives/ring_schedule.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/device_status.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/common/cuda/nccl_check.h"
#include "kernels/ddp/buckets.h"
#include "kernels/ddp/ddp_cuda.h"
#include "kernels/training/cuda/mlp_stack_cuda.h"

namespace dlsys::ddp::cuda {

namespace {

using collectives::GpuCollectives;
using collectives::GpuPlacement;
using dlsys::cuda::Resources;

// One rank: its GPU, two streams, its cuBLAS handle (on the compute stream), its buffers and events.
struct GpuRank {
  int rank = 0;
  int device = 0;
  cudaStream_t compute = nullptr, comm = nullptr;
  cublasHandle_t blas = nullptr;
  float *weights = nullptr, *grads = nullptr, *rows_in = nullptr, *rows_target = nullptr, *landing = nullptr;
  training::cuda::DeviceActivations acts;
  collectives::cuda::StreamRingEvents ring_events;
  // Timing: the step's start, the last micro-step's forward start and end, each layer's gradient ready (also what
  // the communication stream waits on), each bucket's start and end, the optimizer's start and end.
  cudaEvent_t start = nullptr, forward_begin = nullptr, forward_end = nullptr, optimizer_begin = nullptr,
              optimizer_end = nullptr;
  std::vector<cudaEvent_t> layer_ready, bucket_begin, bucket_end;
};

double overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

}  // namespace

collectives::GpuPlacement place_ranks(int ranks) { return collectives::cuda::place_gpu_ranks(ranks); }

namespace {

// What `work` threw, as text; empty when it returned.
std::string attempt(const std::function<void()>& work) {
  try {
    work();
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

// The parts both trainers share: one process's ranks (all of them as threads of the host, or its own alone), their
// buffers and events, the step enqueued layer by layer across them, and each step's spans read back.
struct Trainer {
  const TrainConfig& c;
  const training::DataSet& data;
  MemoryLedger& ledger;
  TrainResult& res;
  const int n, rows, share, w;
  const std::int64_t params;
  std::vector<std::pair<std::string, std::int64_t>> tags;  // released from the ledger on every path
  Resources resources;
  std::vector<GpuRank> ranks;

  Trainer(const TrainConfig& config, const training::DataSet& d, MemoryLedger& l, TrainResult& result)
      : c(config),
        data(d),
        ledger(l),
        res(result),
        n(config.ranks),
        rows(config.rows_per_micro_step()),
        share(config.global_batch / config.ranks),
        w(config.shape.width),
        params(training::parameter_count(config.shape)) {
    if (c.mode != SyncMode::Ddp || c.wire != WireFormat::Fp32)
      throw RunFailure("the GPU trainer runs DDP with fp32 gradients only");
    if (data.samples < std::int64_t(c.steps) * c.global_batch || data.width != c.shape.width)
      throw RunFailure("the data set is too small for the steps asked");
    res.buckets = assign_buckets(c.shape, c.bucket_elements);
  }
  ~Trainer() {
    for (const auto& [tag, bytes] : tags) ledger.release(tag, bytes);
  }

  // Rank r on `device`: streams, events, replica, gradients, activations, its rows of every step, a landing buffer.
  void add_rank(int r, int device, std::int64_t landing) {
    GpuRank& k = ranks.emplace_back();
    k.rank = r;
    k.device = device;
    auto floats = [&](const std::string& tag, std::int64_t count) {
      tags.emplace_back(tag, count * std::int64_t(sizeof(float)));
      ledger.allocate(tag, count * std::int64_t(sizeof(float)));
      return resources.floats(k.device, count);
    };
    k.compute = resources.stream(k.device);
    k.comm = resources.stream(k.device);
    k.blas = resources.blas(k.device, k.compute);
    k.ring_events = collectives::cuda::make_stream_ring_events(resources, k.device);
    k.start = resources.event(k.device, true);
    k.forward_begin = resources.event(k.device, true);
    k.forward_end = resources.event(k.device, true);
    k.optimizer_begin = resources.event(k.device, true);
    k.optimizer_end = resources.event(k.device, true);
    for (int l = 0; l < c.shape.layers; ++l) k.layer_ready.push_back(resources.event(k.device, true));
    for (std::size_t b = 0; b < res.buckets.size(); ++b) {
      k.bucket_begin.push_back(resources.event(k.device, true));
      k.bucket_end.push_back(resources.event(k.device, true));
    }
    k.weights = floats(fmt::format("weights rank {}", r), params);
    k.grads = floats(fmt::format("grads rank {}", r), params);
    const std::string acts = fmt::format("activations rank {}", r);
    k.acts.rows = rows;
    k.acts.storage = floats(acts, training::cuda::activation_floats(c.shape, rows));
    k.acts.scratch = floats(acts, training::cuda::scratch_floats(c.shape, rows));
    const std::string data_tag = fmt::format("data rank {}", r);
    k.rows_in = floats(data_tag, std::int64_t(c.steps) * share * w);
    k.rows_target = floats(data_tag, std::int64_t(c.steps) * share * w);
    k.landing = floats("comm", landing);
    const std::vector<float> initial = training::initial_weights(c.shape, c.seed);
    DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
    DLSYS_CUDA_CHECK(cudaMemcpy(k.weights, initial.data(), initial.size() * sizeof(float), cudaMemcpyHostToDevice));
    for (int s = 0; s < c.steps; ++s) {  // this rank's rows of step s: [s B + r B/n, s B + (r + 1) B/n)
      const int first_row = s * c.global_batch + r * share;
      const std::size_t bytes = std::size_t(share) * w * sizeof(float);
      DLSYS_CUDA_CHECK(cudaMemcpy(k.rows_in + std::int64_t(s) * share * w, data.input_rows(first_row), bytes,
                                  cudaMemcpyHostToDevice));
      DLSYS_CUDA_CHECK(cudaMemcpy(k.rows_target + std::int64_t(s) * share * w, data.target_rows(first_row), bytes,
                                  cudaMemcpyHostToDevice));
    }
    DLSYS_CUDA_CHECK(cudaDeviceSynchronize());  // every upload done before the first step
  }

  // Step s enqueued on every rank here; `all_reduce_bucket` enqueues one bucket's all-reduce on every rank's
  // communication stream, each of which already waits for the bucket's last layer.
  void enqueue_step(int s, const std::function<void(const Bucket&)>& all_reduce_bucket) {
    const std::size_t buckets = res.buckets.size();
    auto on_device = [](const GpuRank& k) { DLSYS_CUDA_CHECK(cudaSetDevice(k.device)); };
    for (GpuRank& k : ranks) {
      on_device(k);
      DLSYS_CUDA_CHECK(cudaEventRecord(k.start, k.compute));
      // The communication stream starts the step after the last one's all-reduces (it is in order) and after the
      // step start, so its spans never begin before it.
      DLSYS_CUDA_CHECK(cudaStreamWaitEvent(k.comm, k.start, 0));
      DLSYS_CUDA_CHECK(cudaMemsetAsync(k.grads, 0, std::size_t(params) * sizeof(float), k.compute));
    }
    // Layer by layer, rank after rank: these layers are small enough that launching them takes about as long as
    // running them, so enqueueing one rank's whole step before the next rank's would run the ranks one after the
    // other. Real DDP has a host thread per GPU; interleaving the launches is this one thread's equivalent.
    for (int j = 0; j < c.accumulate; ++j) {
      const bool last = j == c.accumulate - 1;
      const std::int64_t offset = (std::int64_t(s) * share + std::int64_t(j) * rows) * w;
      for (GpuRank& k : ranks) {
        on_device(k);
        if (last) DLSYS_CUDA_CHECK(cudaEventRecord(k.forward_begin, k.compute));
        training::cuda::load_inputs(k.compute, c.shape, k.rows_in + offset, k.acts);
      }
      for (int layer = 0; layer < c.shape.layers; ++layer)
        for (GpuRank& k : ranks) {
          on_device(k);
          training::cuda::forward_layer(k.blas, k.compute, c.shape, layer,
                                        k.weights + training::layer_offset(c.shape, layer), k.acts);
        }
      for (GpuRank& k : ranks) {
        on_device(k);
        if (last) DLSYS_CUDA_CHECK(cudaEventRecord(k.forward_end, k.compute));
        training::cuda::loss_gradient(k.compute, c.shape, k.rows_target + offset, c.global_batch, k.acts);
      }
      std::size_t next_bucket = 0;
      for (int layer = c.shape.layers - 1; layer >= 0; --layer) {
        for (GpuRank& k : ranks) {
          on_device(k);
          const std::int64_t at = training::layer_offset(c.shape, layer);
          training::cuda::backward_layer(k.blas, k.compute, c.shape, layer, k.weights + at, k.acts, k.grads + at);
          if (last) DLSYS_CUDA_CHECK(cudaEventRecord(k.layer_ready[std::size_t(layer)], k.compute));
        }
        // Before the last micro-step nothing is announced (no_sync); on it, every bucket this layer completed is
        // all-reduced now, while the layers below are still computing.
        for (; last && next_bucket < buckets && res.buckets[next_bucket].lowest_layer >= layer; ++next_bucket) {
          const std::size_t b = next_bucket;
          const Bucket& bucket = res.buckets[b];
          for (GpuRank& k : ranks) {
            on_device(k);
            DLSYS_CUDA_CHECK(cudaStreamWaitEvent(k.comm, k.layer_ready[std::size_t(bucket.lowest_layer)], 0));
            DLSYS_CUDA_CHECK(cudaEventRecord(k.bucket_begin[b], k.comm));
          }
          all_reduce_bucket(bucket);
          for (GpuRank& k : ranks) {
            on_device(k);
            DLSYS_CUDA_CHECK(cudaEventRecord(k.bucket_end[b], k.comm));
          }
        }
      }
    }
    for (GpuRank& k : ranks) {  // the optimizer waits for the last bucket (the communication stream is in order)
      on_device(k);
      if (buckets > 0) DLSYS_CUDA_CHECK(cudaStreamWaitEvent(k.compute, k.bucket_end.back(), 0));
      DLSYS_CUDA_CHECK(cudaEventRecord(k.optimizer_begin, k.compute));
      training::cuda::sgd(k.compute, k.weights, k.grads, c.learning_rate, params);
      DLSYS_CUDA_CHECK(cudaEventRecord(k.optimizer_end, k.compute));
    }
  }

  // Waits for step s on every rank here and reads its times, each relative to the rank's own start, into
  // res.steps[s][slot] (slot: the rank's index here) and res.last_step_spans.
  void collect_step(int s) {
    res.last_step_spans.clear();
    for (std::size_t slot = 0; slot < ranks.size(); ++slot) {
      GpuRank& k = ranks[slot];
      DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
      DLSYS_CUDA_CHECK(cudaEventSynchronize(k.optimizer_end));  // a kernel's failure surfaces here
      auto at_us = [&](cudaEvent_t e) {
        float ms = 0;
        DLSYS_CUDA_CHECK(cudaEventElapsedTime(&ms, k.start, e));
        return double(ms) * 1e3;
      };
      std::vector<OpSpan> spans;
      const double forward_begin = at_us(k.forward_begin), backward_begin = at_us(k.forward_end);
      spans.push_back({k.rank, false, "F", "F", forward_begin, backward_begin});
      double prev = backward_begin;
      for (int layer = c.shape.layers - 1; layer >= 0; --layer) {
        const double t = at_us(k.layer_ready[std::size_t(layer)]);
        spans.push_back({k.rank, false, "B", fmt::format("B{}", layer), prev, t});
        prev = t;
      }
      const double backward_end = prev;
      const double opt_begin = at_us(k.optimizer_begin), opt_end = at_us(k.optimizer_end);
      spans.push_back({k.rank, false, "optimizer", "SGD", opt_begin, opt_end});
      RankStep step;
      step.step_us = opt_end;
      step.compute_us = backward_end + (opt_end - opt_begin);  // everything before backward's end is computing
      double last_comm_end = backward_end;
      for (std::size_t b = 0; b < res.buckets.size(); ++b) {
        const double b0 = at_us(k.bucket_begin[b]), b1 = at_us(k.bucket_end[b]);
        spans.push_back({k.rank, true, "all_reduce", fmt::format("bucket {}", b), b0, b1});
        step.comm_us += b1 - b0;
        step.hidden_comm_us += overlap(b0, b1, backward_begin, backward_end);
        last_comm_end = std::max(last_comm_end, b1);
      }
      step.exposed_comm_us = last_comm_end - backward_end;
      step.idle_us = std::max(0.0, step.step_us - step.compute_us - step.exposed_comm_us);
      res.steps[std::size_t(s)][slot] = step;
      for (OpSpan& span : spans) res.last_step_spans.push_back(std::move(span));
    }
  }

  std::vector<float> weights_of(const GpuRank& k) {
    std::vector<float> host(static_cast<std::size_t>(params));
    DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
    DLSYS_CUDA_CHECK(cudaMemcpy(host.data(), k.weights, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return host;
  }
};

}  // namespace

GpuTrainResult train_gpu(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger) {
  GpuTrainResult out;
  TrainResult& res = out.result;
#if DLSYS_HAVE_NCCL
  std::vector<ncclComm_t> comms;  // before the trainer's resources: their release (registered there) reads it
#endif
  Trainer t(c, data, ledger, res);
  const int n = t.n;
  out.placement = place_ranks(n);
  res.steps.assign(std::size_t(c.steps), std::vector<RankStep>(std::size_t(n)));
  const std::int64_t landing = collectives::gpu_ring_landing_elements(n, std::min(c.bucket_elements, t.params));
  for (int r = 0; r < n; ++r) t.add_rank(r, out.placement.emulated ? 0 : r, landing);
  std::vector<GpuRank>& ranks = t.ranks;
  if (!out.placement.emulated && n > 1) {
    if (out.placement.collectives == GpuCollectives::Ring) {  // direct peer copies where the hardware allows them
      std::vector<int> devices;
      for (const GpuRank& k : ranks) devices.push_back(k.device);
      dlsys::cuda::enable_ring_peer_access(devices);
    }
#if DLSYS_HAVE_NCCL
    if (out.placement.collectives == GpuCollectives::Nccl) {
      std::vector<int> devices;
      for (const GpuRank& k : ranks) devices.push_back(k.device);
      comms.assign(ranks.size(), nullptr);
      t.resources.later([&comms] {
        for (ncclComm_t comm : comms)
          if (comm) ncclCommDestroy(comm);
      });
      DLSYS_NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    }
#endif
  }

  auto all_reduce_bucket = [&](const Bucket& bucket) {
    if (n < 2) return;
#if DLSYS_HAVE_NCCL
    if (out.placement.collectives == GpuCollectives::Nccl) {
      DLSYS_NCCL_CHECK(ncclGroupStart());
      for (GpuRank& k : ranks) {
        float* data_ptr = k.grads + bucket.begin;
        DLSYS_NCCL_CHECK(ncclAllReduce(data_ptr, data_ptr, std::size_t(bucket.elements()), ncclFloat, ncclSum,
                                       comms[std::size_t(k.rank)], k.comm));
      }
      DLSYS_NCCL_CHECK(ncclGroupEnd());
      return;
    }
#endif
    std::vector<collectives::cuda::StreamRingMember> members;
    for (GpuRank& k : ranks)
      members.push_back({.device = k.device,
                         .stream = k.comm,
                         .buffer = k.grads + bucket.begin,
                         .landing = k.landing,
                         .events = k.ring_events});
    collectives::cuda::enqueue_stream_ring(collectives::Op::AllReduce, members, bucket.elements());
  };

  for (int s = 0; s < c.steps; ++s) {
    t.enqueue_step(s, all_reduce_bucket);
    t.collect_step(s);
  }
  for (const GpuRank& k : ranks) {
    std::vector<float> host = t.weights_of(k);
    if (k.rank == 0)
      res.weights = std::move(host);
    else
      res.replicas_identical &= host == res.weights;
  }
  const int counted = gpu_ring_position0_rank(n), left = (counted + n - 1) % n;
  for (const Bucket& b : res.buckets) {
    res.rank0_bytes_sent_per_step +=
        collectives::gpu_ring_bytes_sent(collectives::Op::AllReduce, n, counted, b.elements());
    res.rank0_bytes_received_per_step +=
        collectives::gpu_ring_bytes_sent(collectives::Op::AllReduce, n, left, b.elements());
  }
  return out;
}

TrainResult train_gpu_process(const TrainConfig& c, const training::DataSet& data, MemoryLedger& ledger,
                              const ProcessLinks& links) {
  TrainResult res;
  Trainer t(c, data, ledger, res);
  const int n = t.n, rank = links.rank;
  res.steps.assign(std::size_t(c.steps), std::vector<RankStep>(1));
  std::unique_ptr<collectives::cuda::IpcLink> link;
  std::vector<unsigned char> handles;
  links.agree(attempt([&] {
    const int devices = dlsys::cuda::count_visible_devices();
    if (devices < 1) throw RunFailure("no CUDA device answers: " + dlsys::cuda::device_status().reason);
    t.add_rank(rank, links.local_rank % devices, 1);
    link = std::make_unique<collectives::cuda::IpcLink>(rank, n, t.ranks.front().device,
                                                        std::vector<float*>{t.ranks.front().grads});
    handles = link->handles();
  }));
  const std::vector<unsigned char> previous = links.shift_from_previous(handles);
  links.agree(attempt([&] { link->open_previous(previous); }));
  GpuRank& k = t.ranks.front();
  const float* previous_grads = link->previous(0);
  auto all_reduce_bucket = [&](const Bucket& bucket) {
    link->enqueue_all_reduce(k.comm, k.grads + bucket.begin, k.grads + bucket.begin, previous_grads + bucket.begin,
                             previous_grads + bucket.begin, bucket.elements(), links.pass_token);
  };
  for (int s = 0; s < c.steps; ++s) {
    links.barrier();  // every rank starts together, and nobody zeroes gradients the next rank may still read
    t.enqueue_step(s, all_reduce_bucket);
    t.collect_step(s);
  }
  links.barrier();
  link->close_previous();
  links.barrier();  // nobody has another rank's gradients open any more: each may free its own
  res.weights = t.weights_of(k);
  // What this rank's ring moved per step: rank r+1 pulls what it sends; it pulls what rank r-1 sends.
  for (const Bucket& b : res.buckets) {
    res.rank0_bytes_sent_per_step += 4 * collectives::ring_all_reduce_elements_sent(rank, n, b.elements());
    res.rank0_bytes_received_per_step +=
        4 * collectives::ring_all_reduce_elements_sent(collectives::prev_rank(rank, n), n, b.elements());
  }
  return res;
}

}  // namespace dlsys::ddp::cuda
