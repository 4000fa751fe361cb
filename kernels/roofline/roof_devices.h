#pragma once
// The two places the roofline lesson measures a roof, behind one interface its stages are written against
// (roofline_measure.cpp's templates): three arrays, the STREAM kernels, the intensity family, a row softmax, and a
// host view of an array to check an output with.
//   CpuRoofDevice  host arrays; kernels on the worker pool, with streaming stores for arrays past the caches.
//   GpuRoofDevice  device arrays filled from the same seeds; CUDA kernels (roofline_cuda.h), timed with CUDA events
//                  by RooflineRun; views copy the array back.
#include <cstdint>
#include <vector>

#include "engine/host_buffer.h"
#include "kernels/common/cache_flush.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/common/stores.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_cuda.h"

namespace dlsys::roofline {

// An array's values on the host: the array itself on the CPU, a copy of it from a GPU.
struct HostView {
  const float* data = nullptr;
  std::vector<float> copy;
  float operator[](std::int64_t i) const { return data[i]; }
};

class CpuRoofDevice {
 public:
  CpuRoofDevice(MemoryLedger& ledger, std::int64_t n, int threads, Stores stores)
      : n_(n),
        threads_(threads),
        stores_(stores),
        a_(ledger, "arrays", std::size_t(n)),
        b_(ledger, "arrays", std::size_t(n)),
        c_(ledger, "arrays", std::size_t(n)) {
    std::fill(b_.data(), b_.data() + n, 0.0f);  // every page touched before anything is timed
    std::fill(c_.data(), c_.data() + n, 0.0f);
  }
  float* a() { return a_.data(); }
  float* b() { return b_.data(); }
  float* c() { return c_.data(); }
  void fill(float* array, std::uint32_t seed) { fill_seeded_uniform({array, std::size_t(n_)}, seed); }

  void copy(float* c, const float* a) { stream_copy(c, a, n_, threads_, stores_); }
  void scale(float* b, const float* c, float s) { stream_scale(b, c, s, n_, threads_, stores_); }
  void add(float* c, const float* a, const float* b) { stream_add(c, a, b, n_, threads_, stores_); }
  void triad(float* a, const float* b, const float* c, float s) { stream_triad(a, b, c, s, n_, threads_, stores_); }
  void family(float* y, const float* x, std::int64_t k) { fma_family(y, x, n_, k, threads_, stores_); }
  void softmax(float* y, const float* x, std::int64_t rows, std::int64_t cols) {
    softmax_rows(y, x, rows, cols, threads_, stores_);
  }
  HostView view(const float* array) const { return {array, {}}; }
  // Arrays past the private caches (written with streaming stores) are flushed from every cache before each timed
  // call, so their reads come from main memory even where the last-level cache could hold them; small arrays stay
  // in cache, as they are meant to.
  void before_timed_call() const {
    if (stores_ != Stores::Streaming) return;
    for (const HostBuffer<float>* array : {&a_, &b_, &c_})
      evict_from_caches(array->data(), std::size_t(array->size_bytes()));
  }

 private:
  std::int64_t n_;
  int threads_;
  Stores stores_;
  HostBuffer<float> a_, b_, c_;
};

class GpuRoofDevice {
 public:
  explicit GpuRoofDevice(std::int64_t n) : n_(n), a_(n), b_(n), c_(n) {
    std::vector<float> zeros(std::size_t(n), 0.0f);
    b_.upload(zeros.data());
    c_.upload(zeros.data());
  }
  float* a() { return a_.get(); }
  float* b() { return b_.get(); }
  float* c() { return c_.get(); }
  void fill(float* array, std::uint32_t seed) {
    std::vector<float> values(static_cast<std::size_t>(n_));
    fill_seeded_uniform(values, seed);
    cuda_copy_in(array, values.data());
  }

  void copy(float* c, const float* a) { cuda::stream_copy(c, a, n_); }
  void scale(float* b, const float* c, float s) { cuda::stream_scale(b, c, s, n_); }
  void add(float* c, const float* a, const float* b) { cuda::stream_add(c, a, b, n_); }
  void triad(float* a, const float* b, const float* c, float s) { cuda::stream_triad(a, b, c, s, n_); }
  void family(float* y, const float* x, std::int64_t k) { cuda::fma_family(y, x, n_, k); }
  void softmax(float* y, const float* x, std::int64_t rows, std::int64_t cols) { cuda::softmax_rows(y, x, rows, cols); }
  // Nothing: a GPU's L2 is a few tens of MB, and the arrays' bytes pass through it once per call.
  void before_timed_call() const {}
  HostView view(const float* array) const {
    HostView v;
    v.copy.resize(std::size_t(n_));
    dlsys::cuda::copy_to_host(v.copy.data(), array, n_);
    v.data = v.copy.data();
    return v;
  }

 private:
  void cuda_copy_in(float* array, const float* host) {
    dlsys::cuda::copy_to_device(array, host, std::int64_t(sizeof(float)) * n_);
  }
  std::int64_t n_;
  dlsys::cuda::DeviceFloats a_, b_, c_;
};

}  // namespace dlsys::roofline
