#include "lessons/common/run_budget.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "engine/host_memory.h"
#include "engine/units.h"
#include "lessons/common/run_time_limit.h"

namespace dlsys {

DeviceMemory device_memory() { return {double(cuda_status().device.memory_free_bytes)}; }

void refuse_what_does_not_fit(const RunBudget& budget, BackendKind backend) {
  if (backend == BackendKind::Cuda) {
    const DeviceMemory device = device_memory();
    if (!device.fits(budget.device_bytes))
      throw BadInput(fmt::format("{}: the run needs {} of GPU memory but GPU 0 has {} free; lower them", budget.sizes,
                                 format_bytes_both(budget.device_bytes), format_bytes_both(device.free_bytes)));
  }
  const HostMemory host = host_memory();
  if (!host.fits(budget.host_bytes))
    throw BadInput(fmt::format("{}: the run needs {} at once but only {} of host memory is available; lower them",
                               budget.sizes, format_bytes_both(budget.host_bytes),
                               format_bytes_both(host.budget_bytes())));
  if (budget.max_minutes > 0)
    refuse_if_longer_than(budget.max_minutes, budget.cpu_seconds, budget.cpu_work, budget.smaller);
}

}  // namespace dlsys
