#include "engine/address_space.h"

#include <cblas.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <vector>

#include "engine/errors.h"
#include "engine/units.h"

namespace dlsys {

AddressSpace address_space() {
  AddressSpace out;
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) out.limit_bytes = double(limit.rlim_cur);
  std::ifstream statm("/proc/self/statm");  // first field: the virtual size in pages
  double pages = 0;
  if (statm >> pages) out.mapped_bytes = pages * double(sysconf(_SC_PAGESIZE));
  return out;
}

void require_address_space(double run_bytes, int blas_threads, const std::string& what) {
  const AddressSpace space = address_space();
  if (!space.limited()) return;
  const double buffers = kOpenBlasBufferBytes * std::max(0, blas_threads);
  if (space.mapped_bytes + run_bytes + buffers <= space.limit_bytes) return;
  std::string needs = run_bytes > 0 ? fmt::format("{} for its data", format_bytes_both(run_bytes)) : "";
  if (blas_threads > 0)
    needs += fmt::format("{}{} for OpenBLAS's buffers ({} thread{} x {})", needs.empty() ? "" : " and ",
                         format_bytes_both(buffers), blas_threads, blas_threads == 1 ? "" : "s",
                         format_bytes_binary(kOpenBlasBufferBytes));
  throw RunFailure(
      fmt::format("{} needs {}, but the process's address-space limit (ulimit -v) is {} and {} of it is mapped "
                  "already; raise the limit (ulimit -v) or use fewer threads or smaller sizes",
                  what, needs, format_bytes_both(space.limit_bytes), format_bytes_both(space.mapped_bytes)));
}

namespace {

// OpenBLAS's pool threads whose buffers are mapped already (OpenBLAS keeps them for the life of the process), so that
// they are not counted twice.
std::mutex reserved_mutex;
int reserved_threads = 0;

// Checks the room for the buffers of pool threads beyond those reserved, then counts them as reserved.
void require_pool_buffers(int threads, const std::string& what) {
  const std::lock_guard lock(reserved_mutex);
  if (threads <= reserved_threads) return;
  require_address_space(0, threads - reserved_threads, what);
  reserved_threads = threads;
}

}  // namespace

void set_openblas_threads(int threads) {
  if (address_space().limited()) require_pool_buffers(threads, fmt::format("OpenBLAS on {} threads", threads));
  openblas_set_num_threads(threads);
}

void reserve_openblas_buffers(const std::string& what) {
  if (!address_space().limited()) return;
  const int threads = openblas_get_num_threads();
  {
    const std::lock_guard lock(reserved_mutex);
    if (threads <= reserved_threads) return;
  }
  require_pool_buffers(threads, what);
  // A product large enough that OpenBLAS splits it over all of its threads: each maps its buffer now.
  const int n = 256;
  std::vector<float> a(std::size_t(n) * n, 1.0f), c(a.size(), 0.0f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, a.data(), n, 0.0f, c.data(), n);
}

}  // namespace dlsys
