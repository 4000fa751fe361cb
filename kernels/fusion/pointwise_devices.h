#pragma once
// The two places a fusion run's passes can run, behind one interface the run is written against (fusion_run.cpp is
// a template over it): the arrays, the passes, a timer for one call, and a host view of an output to check.
//   CpuPointwise   the host arrays themselves; passes on the worker pool; a steady_clock stopwatch around a call.
//   CudaPointwise  device copies of the same seeded inputs; passes as CUDA kernels; a CUDA event pair around a call
//                  (kernel time, without the host's launch and wait).
#include <functional>
#include <string>
#include <vector>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/common/stores.h"
#include "kernels/fusion/fusion.h"
#include "kernels/fusion/fusion_cuda.h"
#include "kernels/roofline/roofline.h"

namespace dlsys::fusion {

// What every device starts from, filled on the host from fixed seeds: x (rows x cols), a full bias of the same
// shape and a broadcast bias of cols, and the two arrays the passes write, t and y.
struct HostArrays {
  std::int64_t rows = 0, cols = 0;
  HostBuffer<float> x, bias_full, bias_broadcast, t, y;
  HostArrays(MemoryLedger& ledger, const std::string& tag, std::int64_t rows_, std::int64_t cols_)
      : rows(rows_),
        cols(cols_),
        x(ledger, tag, std::size_t(rows_ * cols_)),
        bias_full(ledger, tag, std::size_t(rows_ * cols_)),
        bias_broadcast(ledger, tag, std::size_t(cols_)),
        t(ledger, tag, std::size_t(rows_ * cols_)),
        y(ledger, tag, std::size_t(rows_ * cols_)) {
    fill_seeded_uniform(x.span(), 1);
    fill_seeded_uniform(bias_full.span(), 2);
    fill_seeded_uniform(bias_broadcast.span(), 3);
    std::fill(t.data(), t.data() + rows * cols, 0.0f);  // every page touched before anything is timed
    std::fill(y.data(), y.data() + rows * cols, 0.0f);
  }
  std::int64_t n() const { return rows * cols; }
  double x_at(std::int64_t i) const { return x[std::size_t(i)]; }
  double bias_at(Bias bias, std::int64_t i) const {
    return bias == Bias::Full ? bias_full[std::size_t(i)] : bias_broadcast[std::size_t(i % cols)];
  }
};

class CpuPointwise {
 public:
  static constexpr const char* kTimer = "steady_clock";
  CpuPointwise(HostArrays& host, int threads, Stores stores) : host_(host), threads_(threads), stores_(stores) {}

  const float* x() const { return host_.x.data(); }
  float* t() { return host_.t.data(); }
  float* y() { return host_.y.data(); }
  const float* bias(Bias b) const { return b == Bias::Full ? host_.bias_full.data() : host_.bias_broadcast.data(); }

  void add_bias(float* t, const float* x, const float* b, Bias bias) {
    fusion::add_bias(t, x, b, host_.rows, host_.cols, bias, threads_, stores_);
  }
  void relu(float* y, const float* t) { relu_pass(y, t, host_.n(), threads_, stores_); }
  void add_bias_relu(float* y, const float* x, const float* b, Bias bias) {
    fusion::add_bias_relu(y, x, b, host_.rows, host_.cols, bias, threads_, stores_);
  }
  void cos(float* y, const float* x) { cos_pass(y, x, host_.n(), threads_, stores_); }
  void cos_cos(float* y, const float* x) { fusion::cos_cos(y, x, host_.n(), threads_, stores_); }
  void gelu(float* y, const float* x) { gelu_pass(y, x, host_.n(), threads_, stores_); }
  void chain_op(float* y, const float* x, int l) { fusion::chain_op(y, x, host_.n(), l, threads_, stores_); }
  void chain(float* y, const float* x, int length) { chain_fused(y, x, host_.n(), length, threads_, stores_); }
  void copy(float* y, const float* x) { roofline::stream_copy(y, x, host_.n(), threads_, stores_); }
  // The least a call can cost: one element handed to the worker pool and back.
  static constexpr const char* kDispatchWhat = "one element handed to the pool";
  void dispatch() { roofline::scale_on_pool(host_.y.data(), host_.x.data(), 1, threads_); }

  double call_us(const std::function<void()>& call) const {
    Stopwatch watch;
    call();
    return watch.elapsed_us();
  }
  const float* on_host(const float* values, std::int64_t) { return values; }

 private:
  HostArrays& host_;
  int threads_;
  Stores stores_;
};

class CudaPointwise {
 public:
  static constexpr const char* kTimer = "cuda_event";
  explicit CudaPointwise(const HostArrays& host)
      : host_(host), x_(host.n()), bias_full_(host.n()), bias_broadcast_(host.cols), t_(host.n()), y_(host.n()) {
    x_.upload(host.x.data());
    bias_full_.upload(host.bias_full.data());
    bias_broadcast_.upload(host.bias_broadcast.data());
  }

  const float* x() const { return x_.get(); }
  float* t() { return t_.get(); }
  float* y() { return y_.get(); }
  const float* bias(Bias b) const { return b == Bias::Full ? bias_full_.get() : bias_broadcast_.get(); }

  void add_bias(float* t, const float* x, const float* b, Bias bias) {
    cuda::add_bias(t, x, b, host_.rows, host_.cols, bias);
  }
  void relu(float* y, const float* t) { cuda::relu_pass(y, t, host_.n()); }
  void add_bias_relu(float* y, const float* x, const float* b, Bias bias) {
    cuda::add_bias_relu(y, x, b, host_.rows, host_.cols, bias);
  }
  void cos(float* y, const float* x) { cuda::cos_pass(y, x, host_.n()); }
  void cos_cos(float* y, const float* x) { cuda::cos_cos(y, x, host_.n()); }
  void gelu(float* y, const float* x) { cuda::gelu_pass(y, x, host_.n()); }
  void chain_op(float* y, const float* x, int l) { cuda::chain_op(y, x, host_.n(), l); }
  void chain(float* y, const float* x, int length) { cuda::chain_fused(y, x, host_.n(), length); }
  void copy(float* y, const float* x) { cuda::copy(y, x, host_.n()); }
  // The least a call can cost: launching a kernel that does nothing.
  static constexpr const char* kDispatchWhat = "an empty kernel launch";
  void dispatch() { cuda::empty_kernel(); }

  double call_us(const std::function<void()>& call) const { return dlsys::cuda::event_elapsed_us(call); }
  const float* on_host(const float* values, std::int64_t count) {
    staging_.resize(std::size_t(count));
    dlsys::cuda::copy_to_host(staging_.data(), values, count);
    return staging_.data();
  }

 private:
  const HostArrays& host_;
  dlsys::cuda::DeviceFloats x_, bias_full_, bias_broadcast_, t_, y_;
  std::vector<float> staging_;
};

}  // namespace dlsys::fusion
