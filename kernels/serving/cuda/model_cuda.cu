// The serving model on GPU 0: cuBLAS sgemm for a prefill's projections, the lab's fixed-order row kernel for every
// other pass, and small kernels for the rest. Kept simple on purpose: one thread per output element or per row and
// head, every launch on the default stream, every call checked, device memory owned by DeviceArray.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/launch.h"
#include "kernels/serving/model_cuda.h"

namespace dlsys::serving::cuda {

using dlsys::cuda::DeviceArray;
using dlsys::cuda::grid_stride_blocks;
using dlsys::cuda::kGridStrideThreads;

namespace {

constexpr float kNormEpsilon = 1e-5f;  // as the CPU model's rms_norm
constexpr int kRowThreads = 128;

// x (n, d) = embedding[token] + position[pos], row by row.
__global__ void embed_kernel(std::int64_t n, int d, const int* tokens, const int* positions, const float* embedding,
                             const float* position, float* x) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < n * d;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = e / d, j = e % d;
    x[e] = embedding[std::int64_t(tokens[row]) * d + j] + position[std::int64_t(positions[row]) * d + j];
  }
}

// h = x / rms(x), one thread per row summing in double in index order, as the CPU model does.
__global__ void rms_norm_kernel(std::int64_t n, int d, const float* x, float* h) {
  const std::int64_t row = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (row >= n) return;
  const float* xr = x + row * d;
  double sum_squares = 0;
  for (int i = 0; i < d; ++i) sum_squares += double(xr[i]) * xr[i];
  const float inv = 1.0f / sqrtf(float(sum_squares / d) + kNormEpsilon);
  for (int i = 0; i < d; ++i) h[row * d + i] = xr[i] * inv;
}

// y (n, cols) = beta y + x (n, rows) W (rows, cols): one thread per output element, its terms summed i = 0, 1, ...
// whatever n is, so a row's result never depends on the other rows. Neighbouring threads read neighbouring columns
// of W (coalesced); every row of the pass reuses W from the cache.
__global__ void project_rows_kernel(const float* x, std::int64_t n, const float* w, int rows, int cols, float* y,
                                    float beta) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const std::int64_t r = blockIdx.y;
  if (j >= cols || r >= n) return;
  float t = beta == 0.0f ? 0.0f : beta * y[r * cols + j];
  const float* xr = x + r * rows;
  for (int i = 0; i < rows; ++i) t += xr[i] * w[std::int64_t(i) * cols + j];
  y[r * cols + j] = t;
}

// Each row's K and V into its slot's cache at its position. Caches: (slots, layers, context, d).
__global__ void write_kv_kernel(std::int64_t n, int d, int layer, int layers, int context, const int* slots,
                                const int* positions, const float* k, const float* v, float* k_cache, float* v_cache) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < n * d;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = e / d, j = e % d;
    const std::int64_t at = ((std::int64_t(slots[row]) * layers + layer) * context + positions[row]) * d + j;
    k_cache[at] = k[e];
    v_cache[at] = v[e];
  }
}

// Softmax attention of each row's query over its own slot's cache, positions 0..position: one thread per (row, head),
// the CPU's loops in the CPU's order (scores, max, exponentials and their sum, the weighted values).
__global__ void attention_kernel(std::int64_t n, int d, int heads, int layer, int layers, int context, const int* slots,
                                 const int* positions, const float* q, const float* k_cache, const float* v_cache,
                                 float* scores, float* out) {
  const std::int64_t task = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (task >= n * heads) return;
  const std::int64_t row = task / heads;
  const int head = int(task % heads), hd = d / heads;
  const std::int64_t count = std::int64_t(positions[row]) + 1;
  const float* k = k_cache + (std::int64_t(slots[row]) * layers + layer) * context * d + head * hd;
  const float* v = v_cache + (std::int64_t(slots[row]) * layers + layer) * context * d + head * hd;
  const float* qh = q + row * d + head * hd;
  float* s = scores + task * context;
  const float scale = 1.0f / sqrtf(float(hd));
  float max_score = -INFINITY;
  for (std::int64_t j = 0; j < count; ++j) {
    float dot = 0;
    for (int i = 0; i < hd; ++i) dot += qh[i] * k[j * d + i];
    s[j] = dot * scale;
    max_score = fmaxf(max_score, s[j]);
  }
  float total = 0;
  for (std::int64_t j = 0; j < count; ++j) total += (s[j] = expf(s[j] - max_score));
  float* oh = out + row * d + head * hd;
  for (int i = 0; i < hd; ++i) oh[i] = 0.0f;
  for (std::int64_t j = 0; j < count; ++j) {
    const float p = s[j] / total;
    for (int i = 0; i < hd; ++i) oh[i] += p * v[j * d + i];
  }
}

__global__ void relu_kernel(std::int64_t count, float* x) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < count;
       e += std::int64_t(gridDim.x) * blockDim.x)
    x[e] = fmaxf(x[e], 0.0f);
}

// Greedy: the first index of the largest logit, one thread per row.
__global__ void argmax_kernel(std::int64_t n, int vocab, const float* logits, int* next) {
  const std::int64_t row = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (row >= n) return;
  const float* l = logits + row * vocab;
  int best = 0;
  for (int i = 1; i < vocab; ++i)
    if (l[i] > l[best]) best = i;
  next[row] = best;
}

unsigned row_blocks(std::int64_t n) { return unsigned((n + kRowThreads - 1) / kRowThreads); }

void check_launch() { DLSYS_CUDA_CHECK(cudaGetLastError()); }

class Blas {
 public:
  Blas() {
    DLSYS_CUDA_CHECK(cublasCreate(&handle_));
    DLSYS_CUDA_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));  // plain fp32, no TF32
  }
  ~Blas() { cublasDestroy(handle_); }
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

template <typename T>
std::unique_ptr<DeviceArray<T>> device_array(std::int64_t count) {
  return std::make_unique<DeviceArray<T>>(std::size_t(std::max<std::int64_t>(count, 1)));
}

template <typename T>
std::unique_ptr<DeviceArray<T>> upload(const T* host, std::int64_t count) {
  auto out = device_array<T>(count);
  DLSYS_CUDA_CHECK(cudaMemcpy(out->get(), host, std::size_t(count) * sizeof(T), cudaMemcpyHostToDevice));
  return out;
}

class CudaModel final : public ModelBackend {
 public:
  CudaModel(const ModelShape& s, const WeightPointers& w, int layers, int slots, int max_rows)
      : shape_(s), layers_(layers), slots_(slots), max_rows_(std::max(max_rows, s.context)), lengths_(slots, 0) {
    check_shape(s);
    if (layers < 1 || layers > s.layers) throw std::logic_error("cuda::make_model: layers out of range");
    if (slots < 1) throw std::logic_error("cuda::make_model: at least one slot");
    DLSYS_CUDA_CHECK(cudaSetDevice(0));
    const std::int64_t d = s.d_model, m = s.mlp_dim, L = layers, rows = max_rows_;
    embedding_ = upload(w.embedding, s.vocab * d);
    position_ = upload(w.position, s.context * d);
    wq_ = upload(w.wq, L * d * d);
    wk_ = upload(w.wk, L * d * d);
    wv_ = upload(w.wv, L * d * d);
    wo_ = upload(w.wo, L * d * d);
    w_up_ = upload(w.w_up, L * d * m);
    w_down_ = upload(w.w_down, L * m * d);
    unembedding_ = upload(w.unembedding, d * s.vocab);
    k_cache_ = device_array<float>(std::int64_t(slots) * L * s.context * d);
    v_cache_ = device_array<float>(std::int64_t(slots) * L * s.context * d);
    x_ = device_array<float>(rows * d);
    h_ = device_array<float>(rows * d);
    q_ = device_array<float>(rows * d);
    k_ = device_array<float>(rows * d);
    v_ = device_array<float>(rows * d);
    attended_ = device_array<float>(rows * d);
    up_ = device_array<float>(rows * m);
    logits_ = device_array<float>(rows * s.vocab);
    scores_ = device_array<float>(rows * s.heads * s.context);
    row_ints_ = device_array<int>(3 * rows);  // tokens, positions, slots
    next_ = device_array<int>(rows);
  }

  const ModelShape& shape() const override { return shape_; }
  int layers() const override { return layers_; }
  int slots() const override { return slots_; }
  int max_rows() const override { return max_rows_; }
  std::int64_t length(int slot) const override { return lengths_.at(std::size_t(slot)); }
  void set_length(int slot, std::int64_t length) override { lengths_.at(std::size_t(slot)) = length; }
  const char* device() const override { return "cuda"; }
  std::vector<float> logits(int row) override {
    if (row < 0 || row >= max_rows_) throw std::logic_error("cuda::Model::logits: row out of range");
    std::vector<float> out(std::size_t(shape_.vocab));
    DLSYS_CUDA_CHECK(cudaMemcpy(out.data(), logits_->get() + std::int64_t(row) * shape_.vocab,
                                out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
  }

  int prefill(int slot, const std::vector<int>& prompt) override {
    const std::int64_t n = std::int64_t(prompt.size());
    if (n < 1 || n > shape_.context) throw std::logic_error("cuda::Model::prefill: prompt does not fit the context");
    check_slot(slot);
    for (int token : prompt)
      if (token < 0 || token >= shape_.vocab) throw std::logic_error("cuda::Model::prefill: token outside vocab");
    std::vector<int> positions(prompt.size());
    for (std::int64_t i = 0; i < n; ++i) positions[std::size_t(i)] = int(i);
    upload_rows(prompt, positions, std::vector<int>(prompt.size(), slot));
    embed(n);
    for (int l = 0; l < layers_; ++l) layer_pass(l, n, true);
    lengths_[std::size_t(slot)] = n;
    // Only the last row's logits matter: the first generated token.
    const int d = shape_.d_model;
    rms_norm_kernel<<<1, 1>>>(1, d, x_->get() + (n - 1) * d, h_->get());
    check_launch();
    std::vector<int> next;
    head(1, next);
    return next.front();
  }

  void forward(const std::vector<SlotRow>& rows, std::vector<int>& next) override {
    const std::int64_t n = std::int64_t(rows.size());
    if (n < 1) {
      next.clear();
      return;
    }
    if (n > max_rows_) throw std::logic_error("cuda::Model::forward: more rows than the scratch holds");
    std::vector<int> tokens, positions, slots;
    for (const SlotRow& r : rows) {
      check_slot(r.slot);
      if (r.position < 0 || r.position >= shape_.context)
        throw std::logic_error("cuda::Model::forward: position outside the context");
      if (r.token < 0 || r.token >= shape_.vocab) throw std::logic_error("cuda::Model::forward: token outside vocab");
      tokens.push_back(r.token);
      positions.push_back(int(r.position));
      slots.push_back(r.slot);
    }
    upload_rows(tokens, positions, slots);
    embed(n);
    for (int l = 0; l < layers_; ++l) layer_pass(l, n, false);
    rms_norm_kernel<<<row_blocks(n), kRowThreads>>>(n, shape_.d_model, x_->get(), h_->get());
    check_launch();
    head(n, next);
    for (const SlotRow& r : rows) {
      std::int64_t& length = lengths_[std::size_t(r.slot)];
      length = std::max(length, r.position + 1);
    }
  }

 private:
  void check_slot(int slot) const {
    if (slot < 0 || slot >= slots_) throw std::logic_error("cuda::Model: slot out of range");
  }
  int* tokens() { return row_ints_->get(); }
  int* positions() { return row_ints_->get() + max_rows_; }
  int* row_slots() { return row_ints_->get() + 2 * max_rows_; }

  void upload_rows(const std::vector<int>& tokens_host, const std::vector<int>& positions_host,
                   const std::vector<int>& slots_host) {
    const std::size_t bytes = tokens_host.size() * sizeof(int);
    DLSYS_CUDA_CHECK(cudaMemcpy(tokens(), tokens_host.data(), bytes, cudaMemcpyHostToDevice));
    DLSYS_CUDA_CHECK(cudaMemcpy(positions(), positions_host.data(), bytes, cudaMemcpyHostToDevice));
    DLSYS_CUDA_CHECK(cudaMemcpy(row_slots(), slots_host.data(), bytes, cudaMemcpyHostToDevice));
  }

  void embed(std::int64_t n) {
    const int d = shape_.d_model;
    embed_kernel<<<grid_stride_blocks(n * d), kGridStrideThreads>>>(n, d, tokens(), positions(), embedding_->get(),
                                                                    position_->get(), x_->get());
    check_launch();
  }

  // y (n, cols) = beta y + x W: a prefill's rows through one sgemm (row-major through the column-major trick: y^T =
  // W^T x^T, W row-major being W^T column-major with leading dimension cols), any other pass through the row kernel.
  void project(bool gemm, const float* x, std::int64_t n, const float* w, int rows, int cols, float* y, float beta) {
    if (gemm) {
      const float alpha = 1.0f;
      DLSYS_CUDA_CHECK(cublasSgemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, cols, int(n), rows, &alpha, w, cols, x, rows,
                                   &beta, y, cols));
    } else {
      const dim3 grid(unsigned((cols + kRowThreads - 1) / kRowThreads), unsigned(n));
      project_rows_kernel<<<grid, kRowThreads>>>(x, n, w, rows, cols, y, beta);
      check_launch();
    }
  }

  void layer_pass(int l, std::int64_t n, bool gemm) {
    const int d = shape_.d_model, m = shape_.mlp_dim;
    const std::int64_t dd = std::int64_t(d) * d, dm = std::int64_t(d) * m;
    rms_norm_kernel<<<row_blocks(n), kRowThreads>>>(n, d, x_->get(), h_->get());
    check_launch();
    project(gemm, h_->get(), n, wq_->get() + l * dd, d, d, q_->get(), 0.0f);
    project(gemm, h_->get(), n, wk_->get() + l * dd, d, d, k_->get(), 0.0f);
    project(gemm, h_->get(), n, wv_->get() + l * dd, d, d, v_->get(), 0.0f);
    // Every row's K and V go into its cache first, so a later row of the same sequence sees them.
    write_kv_kernel<<<grid_stride_blocks(n * d), kGridStrideThreads>>>(n, d, l, layers_, shape_.context, row_slots(),
                                                                       positions(), k_->get(), v_->get(),
                                                                       k_cache_->get(), v_cache_->get());
    check_launch();
    attention_kernel<<<row_blocks(n * shape_.heads), kRowThreads>>>(
        n, d, shape_.heads, l, layers_, shape_.context, row_slots(), positions(), q_->get(), k_cache_->get(),
        v_cache_->get(), scores_->get(), attended_->get());
    check_launch();
    project(gemm, attended_->get(), n, wo_->get() + l * dd, d, d, x_->get(), 1.0f);  // residual
    rms_norm_kernel<<<row_blocks(n), kRowThreads>>>(n, d, x_->get(), h_->get());
    check_launch();
    project(gemm, h_->get(), n, w_up_->get() + l * dm, d, m, up_->get(), 0.0f);
    relu_kernel<<<grid_stride_blocks(n * m), kGridStrideThreads>>>(n * m, up_->get());
    check_launch();
    project(gemm, up_->get(), n, w_down_->get() + l * dm, m, d, x_->get(), 1.0f);  // residual
  }

  // Logits of the n normalized rows in h_ (the row kernel, as the CPU model's head), their argmax, copied back: the
  // copy waits for every launch before it.
  void head(std::int64_t n, std::vector<int>& next) {
    project(false, h_->get(), n, unembedding_->get(), shape_.d_model, shape_.vocab, logits_->get(), 0.0f);
    argmax_kernel<<<row_blocks(n), kRowThreads>>>(n, shape_.vocab, logits_->get(), next_->get());
    check_launch();
    next.resize(std::size_t(n));
    DLSYS_CUDA_CHECK(cudaMemcpy(next.data(), next_->get(), std::size_t(n) * sizeof(int), cudaMemcpyDeviceToHost));
  }

  ModelShape shape_;
  int layers_, slots_, max_rows_;
  std::vector<std::int64_t> lengths_;
  Blas blas_;
  std::unique_ptr<DeviceArray<float>> embedding_, position_, wq_, wk_, wv_, wo_, w_up_, w_down_, unembedding_;
  std::unique_ptr<DeviceArray<float>> k_cache_, v_cache_;
  std::unique_ptr<DeviceArray<float>> x_, h_, q_, k_, v_, attended_, up_, logits_, scores_;
  std::unique_ptr<DeviceArray<int>> row_ints_, next_;
};

}  // namespace

std::unique_ptr<ModelBackend> make_model(const ModelShape& shape, const WeightPointers& weights, int layers, int slots,
                                         int max_rows) {
  return std::make_unique<CudaModel>(shape, weights, layers, slots, max_rows);
}

}  // namespace dlsys::serving::cuda
