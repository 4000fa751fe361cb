// The pipeline executor on GPUs (see executor_cuda.h): the CPU executor's schedule, MLP blocks, initial values and
// reference (executor_common.h), with one CUDA stream per pipeline device.
//   placement - with at least p GPUs, device d runs on GPU d and messages are cudaMemcpyPeerAsync between GPUs.
//               With fewer, EMULATED: every device is a stream on GPU 0 and a message is a device-to-device copy
//               within it. The streams share GPU 0's SMs and memory bandwidth, so ops that overlap stretch each
//               other, and a copy costs what a copy inside one GPU costs, not what NVLink or PCIe would.
//   ops       - F, B, W as in mlp_block.h: cuBLAS sgemm for the matmuls (fp32, cuBLAS's default math: no TF32), small
//               kernels for relu, its mask and the loss gradient, cudaMemcpyAsync for the residuals. A DualPipe F&B
//               pair runs its two halves one after the other on its device's stream (nothing overlaps them).
//   order     - one host thread enqueues every op, in an order where each op's inputs were enqueued before it
//               (legal_order). Each stream runs its device's ops in the schedule's order and waits on the ops on
//               other devices that it needs (cudaStreamWaitEvent).
//   launch    - on one GPU the step is a CUDA Graph: after a first step launched op by op (which grows the pool and
//               lets cuBLAS set itself up), the host enqueues the step once more under stream capture, and every
//               step after that is one launch of the graph. The GPU then holds the whole step at once. Launched op
//               by op, ops shorter than their launches (small hidden x microbatch) ran at the host's pace, one
//               after the other, and the emulated devices took turns whatever the schedule. Where capture fails,
//               the run goes on op by op and says why. With a GPU per device the ops are launched one by one.
//   timing    - a cudaEvent before and after every op (in the graph: record nodes, cudaEventRecordExternal, which
//               record the time at every launch), read against a start event on the same GPU. With several
//               GPUs, one start event per GPU, recorded one after the other right after a synchronize: their clocks
//               agree to the host's launch skew (microseconds).
//   memory    - every activation is one (rows, hidden) buffer from a per-GPU pool that grows in the first step and
//               is reused after. The pool's ledger counts the buffers the CPU executor counts, allocated and
//               released at the same points of each op, as the host enqueues the ops in legal_order: that is
//               peak_activation_bytes, equal to the CPU executor's in replayed mode (which runs in that order).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/pipeline/executor_common.h"
#include "kernels/pipeline/executor_cuda.h"

namespace dlsys::pipeline::cuda {

namespace {

constexpr int kThreads = 256;
unsigned blocks_for(std::size_t n) { return unsigned(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 4096)); }

__global__ void relu_kernel(float* a, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    a[i] = a[i] > 0.0f ? a[i] : 0.0f;
}

// relu'(z) = [z > 0] = [a > 0]
__global__ void relu_mask_kernel(float* dz, const float* a, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (!(a[i] > 0.0f)) dz[i] = 0.0f;
}

__global__ void scale_kernel(float* out, const float* in, float scale, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] * scale;
}

using dlsys::cuda::Resources;

// One (rows, hidden) activation buffer, and the ledger account it is counted in.
struct Activation {
  float* data = nullptr;
  int gpu = 0;
  int account = 0;  // a pipeline device (its activations), or p for "p2p gradients", as the CPU executor counts them
};

// Equal-sized buffers per GPU. A released buffer remembers the done event of the op that released it (its last
// user): a stream that takes it over waits for that event, so reuse never races an op still reading it.
// Ops are enqueued by one host thread, so an op may release a buffer before its done event is recorded: only its
// own stream can take the buffer before that record happens.
class ActivationPool {
 public:
  ActivationPool(Resources& resources, int gpus, std::size_t elements, std::vector<std::string> tags)
      : resources_(resources), free_(gpus), elements_(elements), tags_(std::move(tags)) {}

  Activation acquire(int gpu, int account, int stream_id, cudaStream_t stream) {
    std::vector<Slot>& free = free_[gpu];
    Slot slot;
    if (free.empty()) {
      slot.data = resources_.floats(gpu, std::int64_t(elements_));
    } else {
      // A buffer this stream used last costs no wait; otherwise the one released longest ago is the least likely
      // to make the stream wait for an op that has not finished.
      auto it = std::find_if(free.begin(), free.end(),
                             [&](const Slot& s) { return s.fence == nullptr || s.fence_stream == stream_id; });
      if (it == free.end()) it = free.begin();
      slot = *it;
      free.erase(it);
      if (slot.fence != nullptr && slot.fence_stream != stream_id)
        DLSYS_CUDA_CHECK(cudaStreamWaitEvent(stream, slot.fence, 0));
    }
    ledger_.allocate(tags_[account], bytes());
    return {slot.data, gpu, account};
  }
  void release(Activation& a, cudaEvent_t fence, int fence_stream) {
    if (a.data == nullptr) return;
    ledger_.release(tags_[a.account], bytes());
    free_[a.gpu].push_back({a.data, fence, fence_stream});
    a.data = nullptr;
  }
  // After a synchronize every earlier use is over.
  void forget_fences() {
    for (auto& free : free_)
      for (Slot& s : free) s.fence = nullptr;
  }
  std::int64_t peak_bytes(int account) const { return ledger_.peak_bytes(tags_[account]); }

 private:
  struct Slot {
    float* data = nullptr;
    cudaEvent_t fence = nullptr;
    int fence_stream = -1;
  };
  std::int64_t bytes() const { return std::int64_t(elements_ * sizeof(float)); }

  Resources& resources_;
  std::vector<std::vector<Slot>> free_;  // per GPU
  std::size_t elements_;
  std::vector<std::string> tags_;
  MemoryLedger ledger_;
};

// Row-major products on column-major cuBLAS: a row-major matrix read as column-major is its transpose, so
// C (m x n) = op(A) (m x k) op(B) (k x n) is computed as C^T = op(B)^T op(A)^T with the same transpose flags.
void gemm(cublasHandle_t handle, bool trans_a, bool trans_b, int m, int n, int k, const float* A, const float* B,
          float beta, float* C) {
  const float one = 1.0f;
  DLSYS_CUDA_CHECK(cublasSgemm(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                               k, &one, B, trans_b ? k : n, A, trans_a ? m : k, &beta, C, n));
}

// How the host hands a step's ops to the GPU.
enum class Launch { EachOp, Graph };

// The step could not be captured as a CUDA Graph (why); the run can go on with its ops launched one by one.
struct GraphCaptureFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One pipeline device: its stream (on its own GPU, or on GPU 0 when emulated) and the events around its ops.
struct Device {
  int gpu = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  // Per op in list order: timing events before it, after it and before its outgoing message; and `done`, what other
  // streams and the next user of a released buffer wait for. Launched op by op, `done` is the end event itself. In
  // a graph the timing events are captured as record nodes, and `done` is an event of its own, recorded after the
  // end and captured as a plain dependency, so that the graph's order never rests on a timing node.
  std::vector<cudaEvent_t> begin, end, copy, done;
};

// What a micro-batch leaves on a stage between its F and its last backward op (as in the CPU executor).
struct Stash {
  std::vector<Activation> x, a;    // per block: input and relu output, (rows, hidden)
  Activation y;                    // last model stage only: the output, for the loss gradient
  std::vector<Activation> dy, dz;  // per block, kept from a split B until its W
};

// One model stage as one device holds it (DualPipe keeps a replica of every stage on two devices).
struct StageInstance {
  int stage = -1;
  int blocks = 1;
  std::vector<float*> w1, w2, dw1, dw2;  // per block: (hidden, hidden) on the device's GPU
  std::vector<Stash> stash;              // by micro-batch
};

class GpuPipeline {
 public:
  GpuPipeline(const Schedule& s, const ExecutorConfig& c, const Placement& placement, Launch launch)
      : s_(s),
        rows_(c.microbatch_rows),
        h_(c.hidden),
        launch_(launch),
        pool_(resources_, placement.gpus_used, std::size_t(c.microbatch_rows) * c.hidden, ledger_tags(s)),
        order_(legal_order(s)) {
    const int p = s.devices();
    for (int d = 0; d < p; ++d) {
      Device dev;
      dev.gpu = placement.emulated ? 0 : d;
      dev.stream = resources_.stream(dev.gpu);
      dev.blas = resources_.blas(dev.gpu, dev.stream);
      for (std::size_t i = 0; i < s.device_ops[d].size(); ++i) {
        dev.begin.push_back(resources_.event(dev.gpu, true));
        dev.end.push_back(resources_.event(dev.gpu, true));
        dev.copy.push_back(resources_.event(dev.gpu, true));
        dev.done.push_back(launch == Launch::Graph ? resources_.event(dev.gpu, false) : dev.end.back());
        position_[key(s.device_ops[d][i])] = i;
      }
      devices_.push_back(dev);
      if (launch == Launch::Graph) joins_.push_back(resources_.event(dev.gpu, false));
    }
    for (int g = 0; g < placement.gpus_used; ++g) start_.push_back(resources_.event(g, true));
    enable_peer_access(placement);
    upload_weights(c);
    upload_inputs();
  }

  // One training step: gradients zeroed, then every op enqueued, or the step's graph launched (captured at the first
  // step, after that step has run op by op); `one_at_a_time` waits for each op before the next.
  void step(bool one_at_a_time) {
    if (launch_ == Launch::Graph && graph_ == nullptr) {
      zero_gradients();
      record_starts();
      enqueue_ops(false);
      synchronize();
      pool_.forget_fences();
      capture();
    }
    zero_gradients();
    if (graph_ != nullptr) {
      DLSYS_CUDA_CHECK(cudaSetDevice(devices_[0].gpu));
      DLSYS_CUDA_CHECK(cudaGraphLaunch(graph_, devices_[0].stream));
    } else {
      record_starts();
      enqueue_ops(one_at_a_time);
    }
    synchronize();
  }

  // The accumulated weight gradients set to zero on every device, and nothing of an earlier step still running.
  void zero_gradients() {
    for (int d = 0; d < s_.devices(); ++d) {
      const Device& dev = devices_[d];
      DLSYS_CUDA_CHECK(cudaSetDevice(dev.gpu));
      for (int chunk = 0; chunk < s_.chunks_per_device; ++chunk) {
        StageInstance& inst = instance(d, chunk);
        for (std::size_t k = 0; k < inst.dw1.size(); ++k) {
          DLSYS_CUDA_CHECK(cudaMemsetAsync(inst.dw1[k], 0, matrix_bytes(), dev.stream));
          DLSYS_CUDA_CHECK(cudaMemsetAsync(inst.dw2[k], 0, matrix_bytes(), dev.stream));
        }
      }
    }
    synchronize();
    pool_.forget_fences();
  }

  // The start events, at one host moment: the first device on a GPU records its GPU's, the others wait for it.
  void record_starts() {
    std::vector<bool> started(start_.size(), false);
    for (Device& dev : devices_) {
      DLSYS_CUDA_CHECK(cudaSetDevice(dev.gpu));
      if (!started[dev.gpu])
        DLSYS_CUDA_CHECK(cudaEventRecord(start_[dev.gpu], dev.stream));
      else
        DLSYS_CUDA_CHECK(cudaStreamWaitEvent(dev.stream, start_[dev.gpu], 0));
      started[dev.gpu] = true;
    }
  }

  void enqueue_ops(bool one_at_a_time) {
    for (const auto& [d, i] : order_) {
      run(d, i);
      if (one_at_a_time) DLSYS_CUDA_CHECK(cudaStreamSynchronize(devices_[d].stream));
    }
  }

  // The step's ops enqueued once more under stream capture (one GPU): the first device's stream records the start
  // and forks to the others, which join it again at the end; the graph is instantiated once. Relaxed capture, so
  // that nothing this thread does outside the streams is refused. A call that cannot be captured ends the capture
  // and throws GraphCaptureFailed.
  void capture() {
    Device& origin = devices_[0];
    DLSYS_CUDA_CHECK(cudaSetDevice(origin.gpu));
    cudaGraph_t graph = nullptr;
    try {
      DLSYS_CUDA_CHECK(cudaStreamBeginCapture(origin.stream, cudaStreamCaptureModeRelaxed));
      capturing_ = true;
      mark(start_[origin.gpu], origin.stream);
      DLSYS_CUDA_CHECK(cudaEventRecord(joins_[0], origin.stream));
      for (std::size_t d = 1; d < devices_.size(); ++d)
        DLSYS_CUDA_CHECK(cudaStreamWaitEvent(devices_[d].stream, joins_[0], 0));
      enqueue_ops(false);
      for (std::size_t d = 1; d < devices_.size(); ++d) {
        DLSYS_CUDA_CHECK(cudaEventRecord(joins_[d], devices_[d].stream));
        DLSYS_CUDA_CHECK(cudaStreamWaitEvent(origin.stream, joins_[d], 0));
      }
      capturing_ = false;
      DLSYS_CUDA_CHECK(cudaStreamEndCapture(origin.stream, &graph));
      graph_ = resources_.graph_exec(origin.gpu, graph);
    } catch (const std::exception& e) {
      if (capturing_) {
        cudaGraph_t partial = nullptr;
        cudaStreamEndCapture(origin.stream, &partial);
        if (partial != nullptr) cudaGraphDestroy(partial);
        capturing_ = false;
      }
      if (graph != nullptr) cudaGraphDestroy(graph);
      cudaGetLastError();
      throw GraphCaptureFailed(e.what());
    }
    cudaGraphDestroy(graph);
  }

  // The step's timestamps, in us from its GPU's start event.
  MeasuredStep read_step() {
    MeasuredStep step;
    const int p = s_.devices();
    step.timing.device_ops.resize(p);
    step.timing.busy.assign(p, 0.0);
    step.durations_us.resize(p);
    auto us = [](cudaEvent_t from, cudaEvent_t to) {
      float ms = 0;
      DLSYS_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
      return double(ms) * 1e3;
    };
    for (int d = 0; d < p; ++d) {
      const Device& dev = devices_[d];
      for (std::size_t i = 0; i < s_.device_ops[d].size(); ++i) {
        const Op& op = s_.device_ops[d][i];
        TimedOp t;
        t.op = op;
        t.device = d;
        t.start = us(start_[dev.gpu], dev.begin[i]);
        t.end = us(start_[dev.gpu], dev.end[i]);
        step.timing.device_ops[d].push_back(t);
        step.timing.busy[d] += t.end - t.start;
        step.timing.makespan = std::max(step.timing.makespan, t.end);
        step.durations_us[d].push_back(t.end - t.start);
        if (sends(op)) step.copies_us.push_back(us(dev.copy[i], dev.end[i]));
      }
    }
    return step;
  }

  // The accumulated weight gradients summed over the replicas of `stage` into `sum`.
  void add_gradient(int stage, int block, int which, std::vector<double>& sum) const {
    std::vector<float> host(sum.size());
    for (std::size_t i = 0; i < instances_.size(); ++i) {
      const StageInstance& inst = instances_[i];
      if (inst.stage != stage) continue;
      DLSYS_CUDA_CHECK(cudaSetDevice(devices_[i / s_.chunks_per_device].gpu));
      DLSYS_CUDA_CHECK(
          cudaMemcpy(host.data(), (which == 0 ? inst.dw1 : inst.dw2)[block], matrix_bytes(), cudaMemcpyDeviceToHost));
      for (std::size_t j = 0; j < sum.size(); ++j) sum[j] += host[j];
    }
  }

  std::int64_t peak_activation_bytes(int device) const { return pool_.peak_bytes(device); }

 private:
  static std::vector<std::string> ledger_tags(const Schedule& s) {
    std::vector<std::string> tags;
    for (int d = 0; d < s.devices(); ++d) tags.push_back(activation_tag(d));
    tags.push_back("p2p gradients");
    return tags;
  }
  std::size_t elements() const { return std::size_t(rows_) * h_; }
  std::size_t activation_bytes() const { return elements() * sizeof(float); }
  std::size_t matrix_bytes() const { return std::size_t(h_) * h_ * sizeof(float); }
  std::uint64_t key(const Op& op) const {
    return (std::uint64_t(op.kind) * s_.micro_batches() + op.micro_batch) * s_.stages + op.stage;
  }
  bool sends(const Op& op) const {
    return (op.kind == OpKind::F && op.stage < s_.stages - 1) || (op.kind == OpKind::B && op.stage > 0);
  }
  StageInstance& instance(int device, int chunk) {
    return instances_[std::size_t(device) * s_.chunks_per_device + chunk];
  }
  void synchronize() {
    for (const Device& dev : devices_) {
      DLSYS_CUDA_CHECK(cudaSetDevice(dev.gpu));
      DLSYS_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
    }
  }

  void enable_peer_access(const Placement& placement) {
    if (placement.emulated) return;
    for (int a = 0; a < placement.gpus_used; ++a)
      for (int b = 0; b < placement.gpus_used; ++b) {
        int can = 0;
        if (a == b || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) continue;
        DLSYS_CUDA_CHECK(cudaSetDevice(a));
        const cudaError_t enabled = cudaDeviceEnablePeerAccess(b, 0);
        cudaGetLastError();  // "already enabled" is not an error here
        if (enabled != cudaErrorPeerAccessAlreadyEnabled) DLSYS_CUDA_CHECK(enabled);
      }
    cudaGetLastError();  // a failed capability query leaves copies staged through the host, which still work
  }

  // The same weights as the CPU executor, on the GPU of every device that holds the stage.
  void upload_weights(const ExecutorConfig& c) {
    instances_.resize(std::size_t(s_.devices()) * s_.chunks_per_device);
    std::vector<float> host(std::size_t(h_) * h_);
    auto upload = [&](int gpu, std::uint32_t seed) {
      float* w = resources_.floats(gpu, std::int64_t(host.size()));
      fill_uniform(host.data(), host.size(), seed, weight_scale(h_));
      DLSYS_CUDA_CHECK(cudaMemcpy(w, host.data(), matrix_bytes(), cudaMemcpyHostToDevice));
      return w;
    };
    for (int mb = 0; mb < s_.micro_batches(); ++mb)
      for (int stage = 0; stage < s_.stages; ++stage) {
        const int d = s_.device_of(mb, stage);
        StageInstance& inst = instance(d, s_.chunk_of(mb, stage));
        if (inst.stage >= 0) continue;
        const int gpu = devices_[d].gpu;
        inst.stage = stage;
        inst.blocks = blocks_of(stage, s_.stages, c);
        inst.stash.resize(s_.micro_batches());
        for (int k = 0; k < inst.blocks; ++k) {
          inst.w1.push_back(upload(gpu, weight_seed(stage, k, 1)));
          inst.w2.push_back(upload(gpu, weight_seed(stage, k, 2)));
          inst.dw1.push_back(resources_.floats(gpu, std::int64_t(host.size())));
          inst.dw2.push_back(resources_.floats(gpu, std::int64_t(host.size())));
        }
      }
  }

  // The batch, as the data loader would hand it over: each micro-batch on the GPU where its stage 0 runs.
  void upload_inputs() {
    std::vector<float> host(elements());
    for (int mb = 0; mb < s_.micro_batches(); ++mb) {
      float* x = resources_.floats(devices_[s_.device_of(mb, 0)].gpu, std::int64_t(elements()));
      fill_uniform(host.data(), host.size(), input_seed(mb), 1.0f);
      DLSYS_CUDA_CHECK(cudaMemcpy(x, host.data(), activation_bytes(), cudaMemcpyHostToDevice));
      inputs_.push_back(x);
    }
  }

  // Enqueues op i of device d: waits for its inputs from other devices, then its work between two events.
  void run(int d, std::size_t i) {
    Device& dev = devices_[d];
    const Op& op = s_.device_ops[d][i];
    DLSYS_CUDA_CHECK(cudaSetDevice(dev.gpu));
    for (const Op& dep : dependencies(s_, op)) {
      const int from = s_.device_of(dep.micro_batch, dep.stage);
      if (from != d) DLSYS_CUDA_CHECK(cudaStreamWaitEvent(dev.stream, devices_[from].done[position_.at(key(dep))], 0));
    }
    mark(dev.begin[i], dev.stream);
    StageInstance& inst = instance(d, s_.chunk_of(op.micro_batch, op.stage));
    Stash& st = inst.stash[op.micro_batch];
    current_ = Current{d, dev.done[i]};
    if (op.kind == OpKind::F)
      forward(d, i, inst, st, op);
    else if (op.kind == OpKind::B)
      backward(d, i, inst, st, op);
    else
      weight(dev, inst, st);
    mark(dev.end[i], dev.stream);
    if (dev.done[i] != dev.end[i]) DLSYS_CUDA_CHECK(cudaEventRecord(dev.done[i], dev.stream));
  }

  // A timing event; under capture a record node, which records the time at every launch of the graph.
  void mark(cudaEvent_t event, cudaStream_t stream) {
    DLSYS_CUDA_CHECK(capturing_ ? cudaEventRecordWithFlags(event, stream, cudaEventRecordExternal)
                                : cudaEventRecord(event, stream));
  }

  Activation acquire(int holder, int account) {
    const Device& dev = devices_[current_.device];
    return pool_.acquire(devices_[holder].gpu, account, current_.device, dev.stream);
  }
  // Released as the op is enqueued; the op's done event (recorded when its enqueue finishes) fences its reuse.
  void release(Activation& a) { pool_.release(a, current_.done, current_.device); }
  void release_all(std::vector<Activation>& list) {
    for (Activation& a : list) release(a);
    list.clear();
  }

  // The output copied into a buffer the receiving device owns, counted as `account`, on the sender's stream.
  void send(int d, std::size_t i, const Op& to, const Activation& out, int account) {
    Device& dev = devices_[d];
    const int receiver = s_.device_of(to.micro_batch, to.stage);
    Activation message = acquire(receiver, account);
    mark(dev.copy[i], dev.stream);
    const int to_gpu = devices_[receiver].gpu;
    if (to_gpu != dev.gpu)
      DLSYS_CUDA_CHECK(cudaMemcpyPeerAsync(message.data, to_gpu, out.data, dev.gpu, activation_bytes(), dev.stream));
    else
      DLSYS_CUDA_CHECK(
          cudaMemcpyAsync(message.data, out.data, activation_bytes(), cudaMemcpyDeviceToDevice, dev.stream));
    inbox_[key(to)] = message;
  }
  Activation take(const Op& op) {
    const auto it = inbox_.find(key(op));
    if (it == inbox_.end())
      throw RunFailure(fmt::format("pipeline on GPU: {} enqueued before its input", op_label(op)));
    Activation message = it->second;
    inbox_.erase(it);
    return message;
  }

  void launch_check() { DLSYS_CUDA_CHECK(cudaGetLastError()); }

  void forward(int d, std::size_t i, StageInstance& inst, Stash& st, const Op& op) {
    Device& dev = devices_[d];
    const std::size_t n = elements();
    Activation x;
    if (op.stage == 0) {  // stage 0 copies its micro-batch out of the batch, as the others copy a message
      x = acquire(d, d);
      DLSYS_CUDA_CHECK(
          cudaMemcpyAsync(x.data, inputs_[op.micro_batch], activation_bytes(), cudaMemcpyDeviceToDevice, dev.stream));
    } else {
      x = take(op);
    }
    for (int k = 0; k < inst.blocks; ++k) {  // y = x + relu(x W1) W2
      Activation a = acquire(d, d), y = acquire(d, d);
      gemm(dev.blas, false, false, rows_, h_, h_, x.data, inst.w1[k], 0.0f, a.data);
      relu_kernel<<<blocks_for(n), kThreads, 0, dev.stream>>>(a.data, n);
      launch_check();
      DLSYS_CUDA_CHECK(cudaMemcpyAsync(y.data, x.data, activation_bytes(), cudaMemcpyDeviceToDevice, dev.stream));
      gemm(dev.blas, false, false, rows_, h_, h_, a.data, inst.w2[k], 1.0f, y.data);
      st.x.push_back(x);
      st.a.push_back(a);
      x = y;
    }
    if (op.stage == s_.stages - 1) {
      st.y = x;
      return;
    }
    const Op next{OpKind::F, op.micro_batch, op.stage + 1};
    send(d, i, next, x, s_.device_of(next.micro_batch, next.stage));
    release(x);
  }

  void backward(int d, std::size_t i, StageInstance& inst, Stash& st, const Op& op) {
    Device& dev = devices_[d];
    const std::size_t n = elements();
    Activation dy;
    if (op.stage == s_.stages - 1) {
      // Loss = sum of y^2 / 2 over the whole batch, divided by its rows: dL/dy = y / (m rows).
      dy = acquire(d, d);
      const float scale = 1.0f / float(std::int64_t(rows_) * s_.micro_batches());
      scale_kernel<<<blocks_for(n), kThreads, 0, dev.stream>>>(dy.data, st.y.data, scale, n);
      launch_check();
      release(st.y);
    } else {
      dy = take(op);
    }
    if (op.split) {
      st.dy.assign(inst.blocks, Activation{});
      st.dz.assign(inst.blocks, Activation{});
    }
    for (int k = inst.blocks - 1; k >= 0; --k) {  // dz = (dy W2^T) * [a > 0], dx = dy + dz W1^T
      Activation dz = acquire(d, d), dx = acquire(d, d);
      gemm(dev.blas, false, true, rows_, h_, h_, dy.data, inst.w2[k], 0.0f, dz.data);
      relu_mask_kernel<<<blocks_for(n), kThreads, 0, dev.stream>>>(dz.data, st.a[k].data, n);
      launch_check();
      DLSYS_CUDA_CHECK(cudaMemcpyAsync(dx.data, dy.data, activation_bytes(), cudaMemcpyDeviceToDevice, dev.stream));
      gemm(dev.blas, false, true, rows_, h_, h_, dz.data, inst.w1[k], 1.0f, dx.data);
      if (op.split) {
        st.dy[k] = dy;
        st.dz[k] = dz;
      } else {
        weight_gradient(dev, inst, k, st.x[k], st.a[k], dy, dz);
        release(dz);
        release(dy);
      }
      dy = dx;
    }
    if (!op.split) {
      release_all(st.x);
      release_all(st.a);
    }
    // Stage 0 computes its input gradient too (it would feed an embedding): every stage does the same work.
    if (op.stage > 0) send(d, i, {OpKind::B, op.micro_batch, op.stage - 1}, dy, s_.devices());
    release(dy);
  }

  // dW2 += a^T dy, dW1 += x^T dz
  void weight_gradient(Device& dev, StageInstance& inst, int k, const Activation& x, const Activation& a,
                       const Activation& dy, const Activation& dz) {
    gemm(dev.blas, true, false, h_, h_, rows_, a.data, dy.data, 1.0f, inst.dw2[k]);
    gemm(dev.blas, true, false, h_, h_, rows_, x.data, dz.data, 1.0f, inst.dw1[k]);
  }

  void weight(Device& dev, StageInstance& inst, Stash& st) {
    for (int k = 0; k < inst.blocks; ++k) weight_gradient(dev, inst, k, st.x[k], st.a[k], st.dy[k], st.dz[k]);
    for (auto* list : {&st.x, &st.a, &st.dy, &st.dz}) release_all(*list);
  }

  const Schedule& s_;
  int rows_, h_;
  Launch launch_;
  Resources resources_;  // declared before everything that holds its allocations
  ActivationPool pool_;
  std::vector<std::pair<int, std::size_t>> order_;
  std::vector<Device> devices_;
  std::vector<cudaEvent_t> start_;  // per GPU
  std::vector<cudaEvent_t> joins_;  // graph, per device: the first's forks the capture to the others, theirs join it
  cudaGraphExec_t graph_ = nullptr;
  bool capturing_ = false;
  std::vector<StageInstance> instances_;
  std::vector<float*> inputs_;                     // per micro-batch, (rows, hidden)
  std::map<std::uint64_t, std::size_t> position_;  // op -> its index in its device's list
  std::map<std::uint64_t, Activation> inbox_;      // messages by the op that will consume them
  struct Current {
    int device = 0;
    cudaEvent_t done = nullptr;
  };
  Current current_;  // the op being enqueued
};

// Device bytes at most per GPU: weights and gradients of the stages it holds with every micro-batch stashed at once
// (x, a, dy, dz per block), the micro-batches that enter there, and messages in flight.
std::vector<std::int64_t> bytes_per_gpu(const Schedule& s, const ExecutorConfig& c, const Placement& placement) {
  const std::int64_t act = std::int64_t(c.microbatch_rows) * c.hidden * 4,
                     matrix = std::int64_t(c.hidden) * c.hidden * 4;
  const std::int64_t m = s.micro_batches();
  std::vector<std::int64_t> bytes(placement.gpus_used, 2 * m * act);
  std::vector<bool> held(std::size_t(s.devices()) * s.chunks_per_device, false);
  auto gpu_of = [&](int device) { return placement.emulated ? 0 : device; };
  for (int mb = 0; mb < s.micro_batches(); ++mb) {
    bytes[gpu_of(s.device_of(mb, 0))] += act;
    for (int stage = 0; stage < s.stages; ++stage) {
      const int d = s.device_of(mb, stage);
      const std::size_t slot = std::size_t(d) * s.chunks_per_device + s.chunk_of(mb, stage);
      if (held[slot]) continue;
      held[slot] = true;
      bytes[gpu_of(d)] += blocks_of(stage, s.stages, c) * (4 * matrix + 4 * m * act);
    }
  }
  return bytes;
}

void check_fits(const Schedule& s, const ExecutorConfig& c, const Placement& placement) {
  const std::vector<std::int64_t> need_per_gpu = bytes_per_gpu(s, c, placement);
  for (int g = 0; g < placement.gpus_used; ++g) {
    const std::int64_t need = need_per_gpu[g];
    std::size_t free_bytes = 0, total_bytes = 0;
    DLSYS_CUDA_CHECK(cudaSetDevice(g));
    DLSYS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > std::int64_t(free_bytes) * 9 / 10)
      throw BadInput(fmt::format(
          "parameters 'hidden' x 'microbatch' x 'm': the pipeline would need up to {:.3f} GB on GPU {} but {:.3f} GB "
          "is free; lower hidden, microbatch or m",
          need / 1e9, g, free_bytes / 1e9));
  }
}

// A pipeline on the GPUs and the steps it ran, warm-up left out.
struct Ran {
  std::unique_ptr<GpuPipeline> pipe;
  std::vector<MeasuredStep> steps;
};

Ran run_steps(const Schedule& s, const ExecutorConfig& c, const Placement& placement, Launch launch,
              const RunControl& control) {
  const bool one_at_a_time = c.mode == ExecutionMode::Replayed;
  Ran ran{std::make_unique<GpuPipeline>(s, c, placement, launch), {}};
  for (int i = 0; i < c.warmup_steps + std::max(1, c.repeats); ++i) {
    control.check_cancelled();
    ran.pipe->step(one_at_a_time);
    MeasuredStep step = ran.pipe->read_step();
    if (one_at_a_time) step.timing = simulate(s, measured_model(step.durations_us), 0.0);
    if (i >= c.warmup_steps) ran.steps.push_back(std::move(step));
  }
  return ran;
}

}  // namespace

Placement place_devices(int devices) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw RunFailure(fmt::format("the CUDA pipeline needs a GPU: {}",
                                 err != cudaSuccess ? cudaGetErrorString(err) : "no device found"));
  }
  Placement placement;
  placement.gpus_visible = count;
  placement.emulated = count < devices;
  placement.gpus_used = placement.emulated ? 1 : devices;
  placement.description =
      placement.emulated
          ? fmt::format(
                "emulated: the {} pipeline devices are {} CUDA streams on GPU 0 ({} GPU{} visible, one per "
                "device needs {}); they share its SMs and memory bandwidth, and a message is a copy within "
                "GPU 0, not a transfer over NVLink or PCIe",
                devices, devices, count, count == 1 ? "" : "s", devices)
          : fmt::format(
                "one GPU per pipeline device ({} of {} visible), messages by cudaMemcpyPeerAsync; the GPUs' "
                "clocks are aligned by start events recorded at one host moment (microseconds apart)",
                devices, count);
  return placement;
}

ExecutionResult execute_schedule(const Schedule& s, const ExecutorConfig& c, MemoryLedger& ledger,
                                 const RunControl& control) {
  const Placement placement = place_devices(s.devices());
  if (c.mode == ExecutionMode::Concurrent && placement.emulated)
    throw BadInput(fmt::format(
        "parameter 'mode': value 'concurrent' is not allowed on the cuda backend with p = {} and {} GPU{}: it needs "
        "one GPU per pipeline device; allowed: auto (the devices as streams on one GPU, emulated) or replayed",
        s.devices(), placement.gpus_visible, placement.gpus_visible == 1 ? "" : "s"));
  check_fits(s, c, placement);
  const bool one_at_a_time = c.mode == ExecutionMode::Replayed;
  const Launch launch = !one_at_a_time && placement.gpus_used == 1 ? Launch::Graph : Launch::EachOp;

  ExecutionResult result;
  result.mode = one_at_a_time ? "replayed" : placement.emulated ? "emulated" : "concurrent";
  result.hardware_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  result.gpus = placement.gpus_used;
  result.emulated = placement.emulated;
  result.notes.push_back(placement.description);
  if (placement.emulated && s.devices() > 8)
    result.notes.push_back(
        "more than 8 streams share the GPU's hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default), so "
        "ops of different devices may queue behind each other");

  std::string capture_failure;
  Ran ran;
  try {
    ran = run_steps(s, c, placement, launch, control);
  } catch (const GraphCaptureFailed& e) {
    capture_failure = e.what();
    ran = run_steps(s, c, placement, Launch::EachOp, control);
  }
  if (one_at_a_time)
    result.notes.push_back(
        "replayed: every op ran alone on its stream (the host waited for it), and its measured duration was "
        "replayed on the schedule");
  else if (launch == Launch::Graph && capture_failure.empty())
    result.notes.push_back(
        "every timed step is one launch of a CUDA Graph, captured once from the step's ops: the GPU holds the whole "
        "step at once and runs each op when its inputs are ready, however short the ops are");
  else
    result.notes.push_back(fmt::format(
        "{}one host thread launches every op; where ops are shorter than their launches (small hidden x "
        "microbatch) the launch rate shows up as idle time",
        capture_failure.empty() ? ""
                                : "the step could not be captured as a CUDA Graph (" + capture_failure + "), so "));
  result.grad_max_rel_err =
      gradient_max_rel_err(s, c, ledger, [&](int stage, int block, int which, std::vector<double>& sum) {
        ran.pipe->add_gradient(stage, block, which, sum);
      });
  report_steps(s, ran.steps, result);
  for (int d = 0; d < s.devices(); ++d) result.peak_activation_bytes.push_back(ran.pipe->peak_activation_bytes(d));
  return result;
}

}  // namespace dlsys::pipeline::cuda
