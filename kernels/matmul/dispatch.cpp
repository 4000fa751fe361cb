#include "kernels/matmul/backends.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_cuda.h"

namespace dlsys::matmul {

namespace {

// The same idea under each backend's own name: the tiled CPU kernel blocks for caches, the CUDA one for shared memory.
constexpr VariantInfo kVariants[] = {
    {"naive", "v1_naive", "v1_naive"},
    {"tiled", "v2_tiled", "v3_smem_tiled"},
    {"blas", "v3_blas", "cublasSgemm"},
};

}  // namespace

std::span<const VariantInfo> variants() { return kVariants; }

std::string_view kernel_name(const VariantInfo& variant, BackendKind backend) {
  return backend == BackendKind::Cuda ? variant.cuda_name : variant.cpu_name;
}

TimingStats time_variant(const VariantInfo& variant, BackendKind backend, const Shape& shape, const float* a,
                         const float* b, float* c, int threads, const MeasureOptions& options,
                         const std::function<void()>& check_cancelled) {
  if (backend == BackendKind::Cuda) {
    using cuda::Variant;
    const Variant which = variant.key == "naive"   ? Variant::Naive
                          : variant.key == "tiled" ? Variant::SmemTiled
                                                   : Variant::Cublas;
    check_cancelled();
    return cuda::run(which, shape, a, b, c, options);
  }
  auto kernel = variant.key == "naive" ? v1_naive : variant.key == "tiled" ? v2_tiled : v3_blas;
  return measure([&] { kernel(shape, a, b, c, threads); }, options, check_cancelled);
}

}  // namespace dlsys::matmul
