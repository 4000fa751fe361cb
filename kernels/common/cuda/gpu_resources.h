#pragma once
// Streams, events, cuBLAS handles and device memory on any GPU, each released when the owner goes, in reverse order of
// creation and on every path (also when a later call throws). For .cu files of GPU paths with ranks on several GPUs.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::cuda {

// Everything created on the GPUs, released in reverse order on every path (also when a later call throws).
class Resources {
 public:
  Resources() = default;
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;
  ~Resources() {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
      if (*it) (*it)();
  }
  void* bytes(int gpu, std::int64_t count) {
    return created<void*>(
        gpu, [&](void*& p) { DLSYS_CUDA_CHECK(cudaMalloc(&p, std::size_t(std::max<std::int64_t>(count, 1)))); },
        [](void* p) { cudaFree(p); });
  }
  float* floats(int gpu, std::int64_t count) {
    return static_cast<float*>(bytes(gpu, std::int64_t(sizeof(float)) * count));
  }
  cudaStream_t stream(int gpu) {
    return created<cudaStream_t>(
        gpu, [](cudaStream_t& s) { DLSYS_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); },
        [](cudaStream_t s) { cudaStreamDestroy(s); });
  }
  // A stream that the legacy default stream waits for and that waits for it: an event pair recorded on the default
  // stream from the host (cuda_event_timer) brackets the work enqueued here in between.
  cudaStream_t stream_ordered_with_default(int gpu) {
    return created<cudaStream_t>(
        gpu, [](cudaStream_t& s) { DLSYS_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamDefault)); },
        [](cudaStream_t s) { cudaStreamDestroy(s); });
  }
  cudaEvent_t event(int gpu, bool timing) {
    const unsigned flags = timing ? cudaEventDefault : cudaEventDisableTiming;
    return created<cudaEvent_t>(
        gpu, [&](cudaEvent_t& e) { DLSYS_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags)); },
        [](cudaEvent_t e) { cudaEventDestroy(e); });
  }
  cublasHandle_t blas(int gpu, cudaStream_t stream) {
    const cublasHandle_t h = created<cublasHandle_t>(
        gpu, [](cublasHandle_t& made) { DLSYS_CUDA_CHECK(cublasCreate(&made)); },
        [](cublasHandle_t made) { cublasDestroy(made); });
    DLSYS_CUDA_CHECK(cublasSetStream(h, stream));
    DLSYS_CUDA_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // fp32 products, as on the CPU: no TF32
    return h;
  }
  // `graph` (work captured on `gpu`'s streams) instantiated, to be launched again and again.
  cudaGraphExec_t graph_exec(int gpu, cudaGraph_t graph) {
    return created<cudaGraphExec_t>(
        gpu, [&](cudaGraphExec_t& made) { DLSYS_CUDA_CHECK(cudaGraphInstantiate(&made, graph, 0)); },
        [](cudaGraphExec_t made) { cudaGraphExecDestroy(made); });
  }
  // A release of something created elsewhere (an NCCL communicator), run in the same reverse order.
  void later(std::function<void()> release) { undo_.push_back(std::move(release)); }

 private:
  // A handle made on `gpu` by `create` (a checked call that fills it in), released by `destroy` on the same GPU. The
  // room for the release comes first: recording it cannot fail once the handle exists.
  template <class Handle, class Create, class Destroy>
  Handle created(int gpu, const Create& create, Destroy destroy) {
    undo_.emplace_back();
    DLSYS_CUDA_CHECK(cudaSetDevice(gpu));
    Handle handle = nullptr;
    create(handle);
    undo_.back() = [gpu, handle, destroy] {
      cudaSetDevice(gpu);
      destroy(handle);
    };
    return handle;
  }

  std::vector<std::function<void()>> undo_;
};

// What a rank emulated on a GPU works with: its own stream, and a cuBLAS handle whose products go to that stream.
struct RankStream {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
};

// `count` floats of `device` copied to `host` on `stream`, returning once they are there (and all before them).
inline void download_and_wait(float* host, const float* device, std::int64_t count, cudaStream_t stream) {
  DLSYS_CUDA_CHECK(cudaMemcpyAsync(host, device, sizeof(float) * std::size_t(count), cudaMemcpyDeviceToHost, stream));
  DLSYS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// GPUs visible to this process (0 when the driver does not answer).
inline int count_visible_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

// Lets each GPU in `ring_devices` copy straight into the next one's memory where the hardware allows it (the lab's
// ring over peer copies); elsewhere cudaMemcpyPeerAsync goes through the host.
inline void enable_ring_peer_access(const std::vector<int>& ring_devices) {
  const std::size_t n = ring_devices.size();
  for (std::size_t r = 0; r < n && n > 1; ++r) {
    const int from = ring_devices[r], to = ring_devices[(r + 1) % n];
    if (from == to) continue;
    int can = 0;
    DLSYS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
    if (!can) continue;
    DLSYS_CUDA_CHECK(cudaSetDevice(from));
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(to, 0);
    cudaGetLastError();  // "already enabled" is not an error here
    if (enabled != cudaErrorPeerAccessAlreadyEnabled) DLSYS_CUDA_CHECK(enabled);
  }
}

}  // namespace dlsys::cuda
