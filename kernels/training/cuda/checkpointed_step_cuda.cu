// checkpointed_step.h's step on GPU 0 (see checkpointed_step_cuda.h), buffer for buffer as
// kernels/training/cpu/checkpointed_step.cpp: the plain step keeps every layer; the checkpointed one keeps each
// segment's input and the output, then rebuilds each segment from its input, last first, and backpropagates through it.
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/training/checkpointed_step.h"
#include "kernels/training/checkpointed_step_cuda.h"
#include "kernels/training/cuda/mlp_stack_cuda.h"

namespace dlsys::training::cuda {

namespace {

constexpr int kGpu = 0;
// The legacy default stream: cuda_event_timer() records its events there, so they bracket exactly the step's work.
const cudaStream_t kStream = nullptr;

// A device buffer of the step's, from its pool, counted in the ledger under `tag` while it lives: HostBuffer's twin.
// Freed in stream order, so the ledger's count at each moment of the enqueueing is what the stream holds then.
class PoolFloats {
 public:
  PoolFloats() = default;
  PoolFloats(cudaMemPool_t pool, MemoryLedger& ledger, const char* tag, std::int64_t count)
      : ledger_(&ledger), tag_(tag), bytes_(std::int64_t(sizeof(float)) * count) {
    void* data = nullptr;
    DLSYS_CUDA_CHECK(cudaMallocFromPoolAsync(&data, std::size_t(bytes_), pool, kStream));
    data_ = static_cast<float*>(data);
    ledger_->allocate(tag_, bytes_);
  }
  ~PoolFloats() { reset(); }
  PoolFloats(const PoolFloats&) = delete;
  PoolFloats& operator=(const PoolFloats&) = delete;
  PoolFloats(PoolFloats&& other) noexcept { *this = std::move(other); }
  PoolFloats& operator=(PoolFloats&& other) noexcept {
    if (this != &other) {
      reset();
      std::swap(data_, other.data_);
      ledger_ = other.ledger_;
      tag_ = other.tag_;
      bytes_ = other.bytes_;
    }
    return *this;
  }
  float* get() const { return data_; }

 private:
  void reset() {
    if (data_ == nullptr) return;
    cudaFreeAsync(data_, kStream);  // a failure here surfaces at the next checked call
    ledger_->release(tag_, bytes_);
    data_ = nullptr;
  }

  float* data_ = nullptr;
  MemoryLedger* ledger_ = nullptr;
  const char* tag_ = nullptr;
  std::int64_t bytes_ = 0;
};

class StackOnGpu final : public GpuStack {
 public:
  StackOnGpu(const StackShape& shape, const float* weights, const float* inputs, const float* targets, int rows,
             MemoryLedger& ledger)
      : shape_(shape), rows_(rows), ledger_(ledger), keep_all_{shape, rows, false} {
    if (shape.layers < 1 || shape.width < 1 || shape.expansion < 1 || rows < 1)
      throw std::invalid_argument("make_gpu_stack: layers, width, expansion and rows must be at least 1");
    blas_ = resources_.blas(kGpu, kStream);
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = kGpu;
    DLSYS_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    resources_.later([pool = pool_] {
      cudaStreamSynchronize(kStream);  // every cudaFreeAsync done before the pool goes
      cudaMemPoolDestroy(pool);
    });
    // Keep what the pool reserved between steps: a step after the first allocates without asking the driver.
    std::uint64_t keep = UINT64_MAX;
    DLSYS_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
    const std::int64_t parameters = parameter_count(shape), elements = keep_all_.boundary_floats();
    weights_ = upload(weights, parameters);
    inputs_ = upload(inputs, elements);
    targets_ = upload(targets, elements);
    grads_ = resources_.floats(kGpu, parameters);
    scratch_ = resources_.floats(kGpu, keep_all_.scratch_floats());
    loss_ = static_cast<double*>(resources_.bytes(kGpu, sizeof(double)));
  }

  void step(int segment_layers) override {
    const int k = segment_layers;
    if (k < 0 || k > shape_.layers || (k > 0 && shape_.layers % k != 0))
      throw std::invalid_argument("GpuStack::step: segment_layers must be 0 or divide the layers");
    DLSYS_CUDA_CHECK(cudaMemsetAsync(grads_, 0, sizeof(float) * std::size_t(parameter_count(shape_)), kStream));
    if (k == kKeepEverything)
      keep_everything();
    else
      checkpointed(k);
  }

  void forward() override {
    if (forward_acts_ == nullptr) forward_acts_ = resources_.floats(kGpu, keep_all_.floats());
    DeviceActivations acts{rows_, forward_acts_, scratch_, nullptr};
    cuda::forward(blas_, kStream, shape_, flat_weights(shape_, weights_), inputs_, acts);
    squared_error_loss(kStream, forward_acts_ + keep_all_.input_offset(shape_.layers), targets_,
                       keep_all_.boundary_floats(), rows_, loss_);
  }

  double loss() override {
    double host = 0;
    DLSYS_CUDA_CHECK(cudaMemcpy(&host, loss_, sizeof(double), cudaMemcpyDeviceToHost));
    return host;
  }
  void gradients(float* host) override {
    DLSYS_CUDA_CHECK(
        cudaMemcpy(host, grads_, sizeof(float) * std::size_t(parameter_count(shape_)), cudaMemcpyDeviceToHost));
  }

 private:
  float* upload(const float* host, std::int64_t count) {
    float* device = resources_.floats(kGpu, count);
    DLSYS_CUDA_CHECK(cudaMemcpy(device, host, sizeof(float) * std::size_t(count), cudaMemcpyHostToDevice));
    return device;
  }
  float* grad_of(int layer) const { return grads_ + layer_offset(shape_, layer); }
  const float* weights_of(int layer) const { return weights_ + layer_offset(shape_, layer); }

  void keep_everything() {
    const PoolFloats kept(pool_, ledger_, kActivationTag, keep_all_.floats());
    DeviceActivations acts{rows_, kept.get(), scratch_, nullptr};
    const LayerWeights weights = flat_weights(shape_, weights_);
    cuda::forward(blas_, kStream, shape_, weights, inputs_, acts);
    squared_error_loss(kStream, kept.get() + keep_all_.input_offset(shape_.layers), targets_,
                       keep_all_.boundary_floats(), rows_, loss_);
    cuda::backward(
        blas_, kStream, shape_, weights, targets_, rows_, acts, [&](int layer) { return grad_of(layer); }, [](int) {});
  }

  void checkpointed(int k) {
    const int segments = shape_.layers / k;
    const std::int64_t elements = keep_all_.boundary_floats();
    // Forward: one layer at a time through two working buffers, keeping each segment's input and the output.
    std::vector<PoolFloats> boundaries;
    boundaries.reserve(std::size_t(segments));
    boundaries.emplace_back(pool_, ledger_, kActivationTag, elements);
    DLSYS_CUDA_CHECK(cudaMemcpyAsync(boundaries[0].get(), inputs_, sizeof(float) * std::size_t(elements),
                                     cudaMemcpyDeviceToDevice, kStream));
    PoolFloats output(pool_, ledger_, kActivationTag, elements);
    {
      const PoolFloats hidden(pool_, ledger_, kWorkspaceTag, keep_all_.hidden_floats());
      const PoolFloats ping(pool_, ledger_, kWorkspaceTag, elements), pong(pool_, ledger_, kWorkspaceTag, elements);
      const float* x = boundaries[0].get();
      for (int layer = 0; layer < shape_.layers; ++layer) {
        float* y = nullptr;
        if (layer + 1 == shape_.layers) {
          y = output.get();
        } else if ((layer + 1) % k == 0) {
          boundaries.emplace_back(pool_, ledger_, kActivationTag, elements);
          y = boundaries.back().get();
        } else {
          y = x == ping.get() ? pong.get() : ping.get();
        }
        forward_block(blas_, kStream, shape_, rows_, weights_of(layer), x, hidden.get(), y);
        x = y;
      }
    }
    squared_error_loss(kStream, output.get(), targets_, elements, rows_, loss_);
    squared_error_gradient(kStream, output.get(), targets_, elements, rows_, scratch_);
    output = PoolFloats();  // released: the loss's gradient replaces it
    // Backward: rebuild each segment from its input, then backpropagate through it; then drop both.
    const StackShape segment{k, shape_.width, shape_.expansion};
    const StackLayout rebuilt{segment, rows_, true};
    for (int s = segments - 1; s >= 0; --s) {
      const int first_layer = s * k;
      {
        const PoolFloats kept(pool_, ledger_, kActivationTag, rebuilt.floats());
        DeviceActivations acts{rows_, kept.get(), scratch_, boundaries[std::size_t(s)].get()};
        for (int layer = 0; layer < k; ++layer)
          forward_layer(blas_, kStream, segment, layer, weights_of(first_layer + layer), acts);
        for (int layer = k - 1; layer >= 0; --layer)
          backward_layer(blas_, kStream, segment, layer, weights_of(first_layer + layer), acts,
                         grad_of(first_layer + layer));
      }
      boundaries[std::size_t(s)] = PoolFloats();
    }
  }

  StackShape shape_;
  int rows_;
  MemoryLedger& ledger_;
  StackLayout keep_all_;
  dlsys::cuda::Resources resources_;  // before the buffers: everything below is released with it
  cudaMemPool_t pool_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  float *weights_ = nullptr, *inputs_ = nullptr, *targets_ = nullptr, *grads_ = nullptr, *scratch_ = nullptr;
  float* forward_acts_ = nullptr;
  double* loss_ = nullptr;
};

}  // namespace

std::unique_ptr<GpuStack> make_gpu_stack(const StackShape& shape, const float* weights, const float* inputs,
                                         const float* targets, int rows, MemoryLedger& ledger) {
  return std::make_unique<StackOnGpu>(shape, weights, inputs, targets, rows, ledger);
}

}  // namespace dlsys::training::cuda
