#include "engine/process_timing.h"

#include "engine/mpi_world.h"

namespace dlsys {

double slowest_rank_us(const std::function<double()>& sample_us) {
  mpi::barrier();
  return mpi::max_over_ranks(sample_us());
}

CallTimer slowest_rank_timer(std::string name) {
  return {.name = std::move(name), .call_us = [](const std::function<void()>& call) {
            return slowest_rank_us([&] {
              Stopwatch watch;
              call();
              return watch.elapsed_us();
            });
          }};
}

}  // namespace dlsys
