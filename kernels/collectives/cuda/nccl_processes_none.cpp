// Built when the CUDA backend is not: the lesson refuses --backend cuda before it could get here.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/collectives/nccl_processes.h"

namespace dlsys::collectives::cuda {

struct NcclProcessRank::Impl {};

NcclProcessRank::NcclProcessRank(int, int, std::int64_t) { throw RunFailure(cuda_status().reason); }
void NcclProcessRank::join(int, const std::function<void(void*, std::size_t)>&) {
  throw RunFailure(cuda_status().reason);
}
NcclProcessRank::~NcclProcessRank() = default;
double NcclProcessRank::time_all_reduce_us(std::int64_t, int) { throw RunFailure(cuda_status().reason); }
void NcclProcessRank::checked_all_reduce(std::int64_t, float*) { throw RunFailure(cuda_status().reason); }
std::string NcclProcessRank::device_description() const { return {}; }

}  // namespace dlsys::collectives::cuda
