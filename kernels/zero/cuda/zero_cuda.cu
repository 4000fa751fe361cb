// ZeRO stages 0-3 on GPUs (see zero_cuda.h), step for step as kernels/zero/cpu/sharded_training.cpp: one host thread
// walks the model layer by layer and enqueues each layer for every rank, a collective for all ranks at once.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/ledger.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/cuda/stream_ring.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/common/cuda/launch.h"
#include "kernels/common/cuda/nccl_check.h"
#include "kernels/training/cuda/mlp_stack_cuda.h"
#include "kernels/zero/zero_cuda.h"

namespace dlsys::zero::cuda {

namespace {

using collectives::GpuCollectives;
using collectives::Op;
using dlsys::cuda::grid_stride_blocks;
using dlsys::cuda::kGridStrideThreads;
using dlsys::cuda::Resources;

// Adam's constants, as sharded_training.h's (Kingma & Ba, 2015).
constexpr float kAdamBeta1 = 0.9f, kAdamBeta2 = 0.999f, kAdamEpsilon = 1e-8f;

#define ZERO_GRID_LOOP(i, n)                                                          \
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::int64_t(gridDim.x) * blockDim.x)

// 16-bit storage: bf16 or fp16 bits, rounded to nearest even.
__device__ std::uint16_t to_bits(bool fp16, float x) {
  return fp16 ? __half_as_ushort(__float2half_rn(x)) : __bfloat16_as_ushort(__float2bfloat16_rn(x));
}
__device__ float from_bits(bool fp16, std::uint16_t b) {
  return fp16 ? __half2float(__ushort_as_half(b)) : __bfloat162float(__ushort_as_bfloat16(b));
}

__global__ void widen_kernel(float* out, const std::uint16_t* in, std::int64_t n, bool fp16) {
  ZERO_GRID_LOOP(i, n) out[i] = from_bits(fp16, in[i]);
}
__global__ void narrow_kernel(std::uint16_t* out, const float* in, std::int64_t n, bool fp16) {
  ZERO_GRID_LOOP(i, n) out[i] = to_bits(fp16, in[i]);
}
// Stages 0-1: the 16-bit gradient is stored, and the bucket is what it holds.
__global__ void store_and_widen_kernel(std::uint16_t* stored, float* bucket, const float* gradient, std::int64_t n,
                                       bool fp16) {
  ZERO_GRID_LOOP(i, n) {
    const std::uint16_t g = to_bits(fp16, gradient[i]);
    stored[i] = g;
    bucket[i] = from_bits(fp16, g);
  }
}
// Stages 2-3: only the shard is stored; the bucket holds the rounded gradient while it is reduced.
__global__ void round_kernel(float* bucket, const float* gradient, std::int64_t n, bool fp16) {
  ZERO_GRID_LOOP(i, n) bucket[i] = from_bits(fp16, to_bits(fp16, gradient[i]));
}

// Adam on every element this rank owns, bias-corrected, with rounded (unfused) operations so the arithmetic is the
// CPU's. i is the element's index in the rank's optimizer state; its index in the flat vector is i itself at stage 0,
// else layer * layer_elements + first + i % chunk.
struct AdamArgs {
  float learning_rate, correction1, correction2;
  int stage;
  std::int64_t owned, chunk, layer_elements, first;
  bool fp16;
};
__global__ void adam_kernel(float* master, float* m, float* v, const std::uint16_t* gradients, std::uint16_t* weights,
                            AdamArgs a) {
  ZERO_GRID_LOOP(i, a.owned) {
    const std::int64_t full = a.stage == 0 ? i : (i / a.chunk) * a.layer_elements + a.first + i % a.chunk;
    const float g = from_bits(a.fp16, gradients[a.stage >= 2 ? i : full]);
    const float mi = __fadd_rn(__fmul_rn(kAdamBeta1, m[i]), __fmul_rn(1 - kAdamBeta1, g));
    const float vi = __fadd_rn(__fmul_rn(kAdamBeta2, v[i]), __fmul_rn(__fmul_rn(1 - kAdamBeta2, g), g));
    m[i] = mi;
    v[i] = vi;
    const float m_hat = __fdiv_rn(mi, a.correction1), v_hat = __fdiv_rn(vi, a.correction2);
    const float update = __fdiv_rn(__fmul_rn(a.learning_rate, m_hat), __fadd_rn(__fsqrt_rn(v_hat), kAdamEpsilon));
    master[i] = __fsub_rn(master[i], update);
    weights[a.stage >= 3 ? i : full] = to_bits(a.fp16, master[i]);
  }
}

void check_launch() { DLSYS_CUDA_CHECK(cudaGetLastError()); }

// One rank: its GPU, stream, cuBLAS handle, ledger and buffers (sharded_training.cpp's, same tags).
struct GpuRank {
  int rank = 0, device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  MemoryLedger ledger;
  std::uint16_t *weights = nullptr, *gradients = nullptr;  // 16-bit
  float *master = nullptr, *m = nullptr, *v = nullptr;
  training::cuda::DeviceActivations acts;
  float* comm = nullptr;            // one layer: the gradient bucket, or at stage 3 the layer all-gathered
  float* layer_weights = nullptr;   // workspace, stages 0-2: one layer widened to fp32
  float* layer_gradient = nullptr;  // workspace: one layer's fp32 gradient
  float *inputs = nullptr, *targets = nullptr, *landing = nullptr;
  double* loss = nullptr;
  collectives::cuda::StreamRingEvents ring_events;
  cudaEvent_t start = nullptr, end = nullptr;  // the step's time
  std::int64_t comm_bytes = 0;                 // this step's, counted per call
  // The step's spans: timing events recorded on the stream (a pool reused every step), opened and closed in pairs.
  struct Marked {
    std::size_t begin, end;
    const char* kind;
    int layer;
  };
  std::vector<cudaEvent_t> marks;
  std::size_t marks_used = 0;
  std::vector<Marked> marked;
  std::vector<RankSpan> spans;  // the last step's, us since the rank's step start
};

struct Trainer {
  const ZeroConfig& c;
  collectives::GpuPlacement placement;
  std::int64_t layer_elements, chunk, psi, shard, owned;
  bool fp16;
#if DLSYS_HAVE_NCCL
  std::vector<ncclComm_t> comms;  // before resources: its release (registered there) reads it
#endif
  Resources resources;
  std::vector<GpuRank> ranks;
  std::vector<CollectiveRecord> records;  // rank 0's, this step

  explicit Trainer(const ZeroConfig& config)
      : c(config),
        placement(place_ranks(config.ranks)),
        layer_elements(training::parameters_per_layer(config.shape)),
        chunk(layer_elements / config.ranks),
        psi(training::parameter_count(config.shape)),
        shard(psi / config.ranks),
        owned(config.stage >= 1 ? psi / config.ranks : psi),
        fp16(config.dtype == precision::Format::Fp16),
        ranks(static_cast<std::size_t>(config.ranks)) {}

  std::int64_t first(const GpuRank& k) const { return std::int64_t(k.rank) * chunk; }  // rank r owns chunk r
  std::int64_t full_index(const GpuRank& k, std::int64_t i) const {
    return c.stage == 0 ? i : (i / chunk) * layer_elements + first(k) + i % chunk;
  }

  void allocate(GpuRank& k, const std::vector<float>& initial, const training::DataSet& data) {
    const int stage = c.stage;
    auto bytes = [&](const char* tag, std::int64_t count) {
      k.ledger.allocate(tag, count);
      return resources.bytes(k.device, count);
    };
    auto floats = [&](const char* tag, std::int64_t count) { return static_cast<float*>(bytes(tag, 4 * count)); };
    auto halves = [&](const char* tag, std::int64_t count) {
      return static_cast<std::uint16_t*>(bytes(tag, 2 * count));
    };
    k.stream = resources.stream(k.device);
    k.blas = resources.blas(k.device, k.stream);
    k.ring_events = collectives::cuda::make_stream_ring_events(resources, k.device);
    k.start = resources.event(k.device, true);
    k.end = resources.event(k.device, true);
    k.weights = halves("weights", stage >= 3 ? shard : psi);
    k.gradients = halves("gradients", stage >= 2 ? shard : psi);
    k.master = floats("optimizer", owned);
    k.m = floats("optimizer", owned);
    k.v = floats("optimizer", owned);
    const int rows = c.rows_per_rank;
    k.acts.rows = rows;
    k.acts.storage = floats("activations", training::cuda::activation_floats(c.shape, rows));
    k.acts.scratch = floats("activations", training::cuda::scratch_floats(c.shape, rows));
    k.comm = floats("comm", layer_elements);
    if (stage < 3) k.layer_weights = floats("workspace", layer_elements);
    k.layer_gradient = floats("workspace", layer_elements);
    const std::int64_t row_floats = std::int64_t(rows) * c.shape.width;
    k.inputs = floats("data", row_floats);
    k.targets = floats("data", row_floats);
    k.loss = static_cast<double*>(bytes("data", sizeof(double)));
    k.landing = floats("links", collectives::gpu_ring_landing_elements(c.ranks, layer_elements));

    DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
    const std::int64_t first_row = std::int64_t(k.rank) * rows;  // the same global batch every step, as on the CPU
    DLSYS_CUDA_CHECK(
        cudaMemcpy(k.inputs, data.input_rows(int(first_row)), std::size_t(row_floats) * 4, cudaMemcpyHostToDevice));
    DLSYS_CUDA_CHECK(
        cudaMemcpy(k.targets, data.target_rows(int(first_row)), std::size_t(row_floats) * 4, cudaMemcpyHostToDevice));
    std::vector<float> mine(static_cast<std::size_t>(owned));
    for (std::int64_t i = 0; i < owned; ++i) mine[std::size_t(i)] = initial[std::size_t(full_index(k, i))];
    DLSYS_CUDA_CHECK(cudaMemcpy(k.master, mine.data(), mine.size() * 4, cudaMemcpyHostToDevice));
    DLSYS_CUDA_CHECK(cudaMemset(k.m, 0, std::size_t(owned) * 4));
    DLSYS_CUDA_CHECK(cudaMemset(k.v, 0, std::size_t(owned) * 4));
    // The 16-bit working copy: the shard narrowed from the master (stage 3), else the whole initial vector, through
    // a buffer freed right after. The copies and memsets above run on the legacy stream and may still be in flight
    // (a pageable upload returns once staged; a memset of device memory returns at once), and the rank's stream does
    // not wait for that stream: the device is synchronized before the kernel reads anything, and after it.
    dlsys::cuda::DeviceArray<float> full(static_cast<std::size_t>(stage >= 3 ? 1 : psi));
    if (stage < 3) DLSYS_CUDA_CHECK(cudaMemcpy(full.get(), initial.data(), initial.size() * 4, cudaMemcpyHostToDevice));
    DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
    if (stage >= 3)
      narrow_kernel<<<grid_stride_blocks(shard), kGridStrideThreads, 0, k.stream>>>(k.weights, k.master, shard, fp16);
    else
      narrow_kernel<<<grid_stride_blocks(psi), kGridStrideThreads, 0, k.stream>>>(k.weights, full.get(), psi, fp16);
    check_launch();
    DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void setup(const training::DataSet& data) {
    const std::vector<float> initial = training::initial_weights(c.shape, c.seed);
    std::vector<int> devices;
    for (int r = 0; r < c.ranks; ++r) {
      GpuRank& k = ranks[std::size_t(r)];
      k.rank = r;
      k.device = placement.emulated ? 0 : r;
      devices.push_back(k.device);
      allocate(k, initial, data);
    }
    if (!placement.emulated && c.ranks > 1 && placement.collectives == GpuCollectives::Ring)
      dlsys::cuda::enable_ring_peer_access(devices);
#if DLSYS_HAVE_NCCL
    if (!placement.emulated && c.ranks > 1 && placement.collectives == GpuCollectives::Nccl) {
      comms.assign(ranks.size(), nullptr);
      resources.later([this] {
        for (ncclComm_t comm : comms)
          if (comm) ncclCommDestroy(comm);
      });
      DLSYS_NCCL_CHECK(ncclCommInitAll(comms.data(), c.ranks, devices.data()));
    }
#endif
    synchronize_all();
  }

  void synchronize_all() {
    for (GpuRank& k : ranks) {
      DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
      DLSYS_CUDA_CHECK(cudaStreamSynchronize(k.stream));
    }
  }

  template <typename Work>
  void for_each_rank(Work work) {
    for (GpuRank& k : ranks) {
      DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
      work(k);
    }
  }

  // A timing event recorded now on the rank's stream (its index in the rank's pool).
  std::size_t mark(GpuRank& k) {
    if (k.marks_used == k.marks.size()) k.marks.push_back(resources.event(k.device, true));
    DLSYS_CUDA_CHECK(cudaEventRecord(k.marks[k.marks_used], k.stream));
    return k.marks_used++;
  }
  // A span on every rank: open_all() before the work is enqueued, close_all() after.
  std::vector<std::size_t> open_all() {
    std::vector<std::size_t> opened;
    for_each_rank([&](GpuRank& k) { opened.push_back(mark(k)); });
    return opened;
  }
  void close_all(const std::vector<std::size_t>& opened, const char* kind, int layer) {
    for_each_rank([&](GpuRank& k) { k.marked.push_back({opened[std::size_t(k.rank)], mark(k), kind, layer}); });
  }

  // In place on every rank's comm buffer (one layer): all-reduce, reduce-scatter (rank r keeps chunk r summed) or
  // all-gather (rank r brings chunk r).
  void collective(Op op, const char* when, int layer) {
    const int n = c.ranks;
    const char* name = op == Op::AllReduce ? "all_reduce" : op == Op::ReduceScatter ? "reduce_scatter" : "all_gather";
    records.push_back({name, when, layer, layer_elements});
    for (GpuRank& k : ranks) k.comm_bytes += collectives::gpu_ring_bytes_sent(op, n, k.rank, layer_elements);
    if (n < 2) return;
#if DLSYS_HAVE_NCCL
    if (placement.collectives == GpuCollectives::Nccl) {
      DLSYS_NCCL_CHECK(ncclGroupStart());
      for (GpuRank& k : ranks) {
        float* data = k.comm;
        const ncclComm_t comm = comms[std::size_t(k.rank)];
        if (op == Op::AllReduce)
          DLSYS_NCCL_CHECK(ncclAllReduce(data, data, std::size_t(layer_elements), ncclFloat, ncclSum, comm, k.stream));
        else if (op == Op::ReduceScatter)
          DLSYS_NCCL_CHECK(
              ncclReduceScatter(data, data + first(k), std::size_t(chunk), ncclFloat, ncclSum, comm, k.stream));
        else
          DLSYS_NCCL_CHECK(ncclAllGather(data + first(k), data, std::size_t(chunk), ncclFloat, comm, k.stream));
      }
      DLSYS_NCCL_CHECK(ncclGroupEnd());
      return;
    }
#endif
    std::vector<collectives::cuda::StreamRingMember> members;
    for (GpuRank& k : ranks)
      members.push_back(
          {.device = k.device, .stream = k.stream, .buffer = k.comm, .landing = k.landing, .events = k.ring_events});
    collectives::cuda::enqueue_stream_ring(op, members, layer_elements);
  }

  // Layer `layer`'s weights in fp32 on every rank: its 16-bit copy widened (stages 0-2), or every rank's chunk
  // widened into the comm buffer and all-gathered (stage 3). Returns where each rank finds them.
  void prepare_layer(int layer, const char* when) {
    if (c.stage >= 3) {
      const std::vector<std::size_t> opened = open_all();
      for_each_rank([&](GpuRank& k) {
        widen_kernel<<<grid_stride_blocks(chunk), kGridStrideThreads, 0, k.stream>>>(
            k.comm + first(k), k.weights + std::int64_t(layer) * chunk, chunk, fp16);
        check_launch();
      });
      collective(Op::AllGather, when, layer);
      close_all(opened, "all_gather", layer);
      return;
    }
    for_each_rank([&](GpuRank& k) {
      widen_kernel<<<grid_stride_blocks(layer_elements), kGridStrideThreads, 0, k.stream>>>(
          k.layer_weights, k.weights + std::int64_t(layer) * layer_elements, layer_elements, fp16);
      check_launch();
    });
  }
  const float* layer_weights(const GpuRank& k) const { return c.stage >= 3 ? k.comm : k.layer_weights; }

  void reduce_gradient(int layer) {
    const int stage = c.stage;
    const std::int64_t n = layer_elements, base = std::int64_t(layer) * n;
    const std::vector<std::size_t> opened = open_all();
    for_each_rank([&](GpuRank& k) {
      if (stage <= 1)
        store_and_widen_kernel<<<grid_stride_blocks(n), kGridStrideThreads, 0, k.stream>>>(k.gradients + base, k.comm,
                                                                                           k.layer_gradient, n, fp16);
      else
        round_kernel<<<grid_stride_blocks(n), kGridStrideThreads, 0, k.stream>>>(k.comm, k.layer_gradient, n, fp16);
      check_launch();
    });
    if (stage == 0) {
      collective(Op::AllReduce, "backward", layer);
      for_each_rank([&](GpuRank& k) {
        narrow_kernel<<<grid_stride_blocks(n), kGridStrideThreads, 0, k.stream>>>(k.gradients + base, k.comm, n, fp16);
        check_launch();
      });
      close_all(opened, "all_reduce", layer);
      return;
    }
    collective(Op::ReduceScatter, "backward", layer);
    for_each_rank([&](GpuRank& k) {
      std::uint16_t* to = stage == 1 ? k.gradients + base + first(k) : k.gradients + std::int64_t(layer) * chunk;
      narrow_kernel<<<grid_stride_blocks(chunk), kGridStrideThreads, 0, k.stream>>>(to, k.comm + first(k), chunk, fp16);
      check_launch();
    });
    close_all(opened, "reduce_scatter", layer);
  }

  void optimizer_step(int step) {
    const int stage = c.stage;
    const float correction1 = 1 - std::pow(kAdamBeta1, float(step + 1));
    const float correction2 = 1 - std::pow(kAdamBeta2, float(step + 1));
    const std::vector<std::size_t> adam_opened = open_all();
    for_each_rank([&](GpuRank& k) {
      const AdamArgs args{c.learning_rate, correction1,    correction2, stage, owned,
                          chunk,           layer_elements, first(k),    fp16};
      adam_kernel<<<grid_stride_blocks(owned), kGridStrideThreads, 0, k.stream>>>(k.master, k.m, k.v, k.gradients,
                                                                                  k.weights, args);
      check_launch();
    });
    close_all(adam_opened, "optimizer", -1);
    if (stage == 1 || stage == 2)  // every rank needs the whole updated 16-bit copy for the next forward
      for (int layer = 0; layer < c.shape.layers; ++layer) {
        const std::int64_t base = std::int64_t(layer) * layer_elements;
        const std::vector<std::size_t> opened = open_all();
        for_each_rank([&](GpuRank& k) {
          widen_kernel<<<grid_stride_blocks(chunk), kGridStrideThreads, 0, k.stream>>>(
              k.comm + first(k), k.weights + base + first(k), chunk, fp16);
          check_launch();
        });
        collective(Op::AllGather, "after step", layer);
        for_each_rank([&](GpuRank& k) {
          narrow_kernel<<<grid_stride_blocks(layer_elements), kGridStrideThreads, 0, k.stream>>>(
              k.weights + base, k.comm, layer_elements, fp16);
          check_launch();
        });
        close_all(opened, "all_gather", layer);
      }
  }

  // One step; returns the global batch's loss and each rank's time.
  double step(int step, std::vector<double>& rank_us) {
    const training::StackShape& shape_ref = c.shape;
    const double divisor = double(c.rows_per_rank) * c.ranks;
    records.clear();
    synchronize_all();  // every rank starts from an idle GPU
    for_each_rank([&](GpuRank& k) {
      k.comm_bytes = 0;
      k.marks_used = 0;
      k.marked.clear();
      DLSYS_CUDA_CHECK(cudaEventRecord(k.start, k.stream));
      DLSYS_CUDA_CHECK(cudaMemsetAsync(k.loss, 0, sizeof(double), k.stream));
      training::cuda::load_inputs(k.stream, shape_ref, k.inputs, k.acts);
    });
    for (int layer = 0; layer < c.shape.layers; ++layer) {
      prepare_layer(layer, "forward");
      for_each_rank([&](GpuRank& k) {
        const std::size_t begin = mark(k);
        training::cuda::forward_layer(k.blas, k.stream, shape_ref, layer, layer_weights(k), k.acts);
        k.marked.push_back({begin, mark(k), "F", layer});
      });
    }
    for_each_rank([&](GpuRank& k) {
      training::cuda::add_loss(k.stream, shape_ref, k.targets, divisor, k.acts, k.loss);
      training::cuda::loss_gradient(k.stream, shape_ref, k.targets, divisor, k.acts);
    });
    for (int layer = c.shape.layers - 1; layer >= 0; --layer) {
      prepare_layer(layer, "backward");
      for_each_rank([&](GpuRank& k) {
        const std::size_t begin = mark(k);
        DLSYS_CUDA_CHECK(cudaMemsetAsync(k.layer_gradient, 0, std::size_t(layer_elements) * 4, k.stream));
        training::cuda::backward_layer(k.blas, k.stream, shape_ref, layer, layer_weights(k), k.acts, k.layer_gradient);
        k.marked.push_back({begin, mark(k), "B", layer});
      });
      reduce_gradient(layer);
    }
    optimizer_step(step);
    double loss = 0;
    for_each_rank([&](GpuRank& k) {
      DLSYS_CUDA_CHECK(cudaEventRecord(k.end, k.stream));
      DLSYS_CUDA_CHECK(cudaEventSynchronize(k.end));  // a kernel's failure surfaces here
      auto since_start_us = [&](cudaEvent_t e) {
        float ms = 0;
        DLSYS_CUDA_CHECK(cudaEventElapsedTime(&ms, k.start, e));
        return double(ms) * 1e3;
      };
      rank_us.push_back(since_start_us(k.end));
      k.spans.clear();
      for (const GpuRank::Marked& m : k.marked)
        k.spans.push_back({k.rank, since_start_us(k.marks[m.begin]), since_start_us(k.marks[m.end]), m.kind, m.layer});
      double rank_loss = 0;
      DLSYS_CUDA_CHECK(cudaMemcpy(&rank_loss, k.loss, sizeof(double), cudaMemcpyDeviceToHost));
      loss += rank_loss;
    });
    return loss;
  }
};

}  // namespace

collectives::GpuPlacement place_ranks(int ranks) { return collectives::cuda::place_gpu_ranks(ranks); }

GpuZeroTraining train_sharded_gpu(const ZeroConfig& config) {
  if (config.stage < 0 || config.stage > 3) throw std::invalid_argument("ZeRO stage must be 0, 1, 2 or 3");
  if (config.ranks < 1 || training::parameters_per_layer(config.shape) % config.ranks != 0)
    throw std::invalid_argument("each layer's 2 w^2 weights must divide evenly over the ranks");
  const training::DataSet data =
      training::make_data_set(config.shape, config.rows_per_rank * config.ranks, config.seed);
  Trainer t(config);
  t.setup(data);
  GpuZeroTraining out;
  out.placement = t.placement;
  ZeroTraining& z = out.training;
  for (int s = 0; s < config.steps; ++s) {
    std::vector<double> rank_us;
    z.losses.push_back(t.step(s, rank_us));
    double slowest = 0;
    for (double us : rank_us) slowest = std::max(slowest, us);
    z.step_us.push_back(slowest);
  }
  z.master_weights.assign(std::size_t(t.psi), 0.0f);
  std::vector<float> mine(static_cast<std::size_t>(t.owned));
  for (GpuRank& k : t.ranks) {
    DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
    DLSYS_CUDA_CHECK(cudaMemcpy(mine.data(), k.master, mine.size() * 4, cudaMemcpyDeviceToHost));
    for (std::int64_t i = 0; i < t.owned; ++i) z.master_weights[std::size_t(t.full_index(k, i))] = mine[std::size_t(i)];
    RankPeakBytes p;
    p.weights = k.ledger.peak_bytes("weights");
    p.gradients = k.ledger.peak_bytes("gradients");
    p.optimizer = k.ledger.peak_bytes("optimizer");
    p.activations = k.ledger.peak_bytes("activations");
    p.comm = k.ledger.peak_bytes("comm");
    p.workspace = k.ledger.peak_bytes("workspace");
    p.model_states = p.weights + p.gradients + p.optimizer;
    p.total = k.ledger.total_peak_bytes();
    z.peaks.push_back(p);
    z.comm_bytes_last_step.push_back(k.comm_bytes);
  }
  z.collectives = t.records;
  for (const GpuRank& k : t.ranks) z.spans.insert(z.spans.end(), k.spans.begin(), k.spans.end());
  z.link_bytes =
      std::int64_t(config.ranks) * 4 * collectives::gpu_ring_landing_elements(config.ranks, t.layer_elements);
  return out;
}

}  // namespace dlsys::zero::cuda
