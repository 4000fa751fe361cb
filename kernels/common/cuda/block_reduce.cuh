#pragma once
// Block-wide reductions for CUDA kernels: every thread passes its value and receives the combined result.
// `shared` must hold blockDim.x floats; blockDim.x must be a power of two.

namespace dlsys::cuda {

template <typename Combine>
__device__ float block_reduce(float value, float* shared, Combine combine) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] = combine(shared[threadIdx.x], shared[threadIdx.x + stride]);
    __syncthreads();
  }
  const float result = shared[0];
  __syncthreads();  // everyone has read shared[0] before the next reduction overwrites it
  return result;
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

}  // namespace dlsys::cuda
