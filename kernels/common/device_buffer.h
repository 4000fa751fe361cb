#pragma once
// Arrays on GPU 0 and a CUDA-event timer, for host code that launches kernels through plain C++ functions and never
// includes a CUDA header. Without CUDA in the build, every call throws RunFailure saying why.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/measure.h"

namespace dlsys::cuda {

void* device_allocate(std::int64_t bytes);
void device_free(void* device);
void copy_to_device(void* device, const void* host, std::int64_t bytes);
// Waits for the copy (and for every kernel enqueued before it).
void copy_to_host_bytes(void* host, const void* device, std::int64_t bytes);

// `count` values of T on GPU 0, freed when the object goes.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::int64_t count)
      : data_(static_cast<T*>(device_allocate(std::int64_t(sizeof(T)) * (count > 0 ? count : 1)))), count_(count) {}
  ~DeviceBuffer() { device_free(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), count_(other.count_) { other.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  T* get() { return data_; }
  const T* get() const { return data_; }
  std::int64_t count() const { return count_; }
  void upload(const T* host) { copy_to_device(data_, host, std::int64_t(sizeof(T)) * count_); }

 private:
  T* data_ = nullptr;
  std::int64_t count_ = 0;
};
using DeviceFloats = DeviceBuffer<float>;

// Copies `values` floats from device memory (any DeviceFloats' range) to the host.
inline void copy_to_host(float* host, const float* device, std::int64_t values) {
  copy_to_host_bytes(host, device, std::int64_t(sizeof(float)) * values);
}

// Microseconds the GPU spent on what `launch` enqueued on the default stream, by a CUDA event pair around it.
double event_elapsed_us(const std::function<void()>& launch);
// Waits for everything enqueued so far; a kernel's failure surfaces here as RunFailure.
void synchronize();

// engine/measure.h's measure() with CUDA events in place of the stopwatch: `options.warmup` untimed calls, then up
// to `options.repeats` timed ones (stopping once they took options.max_total_us), `between` before each.
inline TimingStats measure_with_events(const std::function<void()>& work, const MeasureOptions& options,
                                       const std::function<void()>& between = {}) {
  for (int i = 0; i < options.warmup; ++i) work();
  std::vector<double> samples_us;
  double total_us = 0;
  for (int i = 0; i < std::max(1, options.repeats); ++i) {
    if (i > 0 && options.max_total_us > 0 && total_us >= options.max_total_us) break;
    if (between) between();
    samples_us.push_back(event_elapsed_us(work));
    total_us += samples_us.back();
  }
  return summarize_us(std::move(samples_us), "cuda_event");
}

}  // namespace dlsys::cuda
