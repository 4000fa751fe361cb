#include "kernels/collectives/collectives.h"

#include <stdexcept>

#include "kernels/collectives/collective_algorithms.h"

namespace dlsys::collectives {

std::string op_name(Op op) {
  switch (op) {
    case Op::AllReduce:
      return "allreduce";
    case Op::ReduceScatter:
      return "reduce_scatter";
    case Op::AllGather:
      return "all_gather";
  }
  return "";
}

std::string algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Ring:
      return "ring";
    case Algorithm::Naive:
      return "naive";
    case Algorithm::RecursiveDoubling:
      return "recursive_doubling";
    case Algorithm::Rabenseifner:
      return "rabenseifner";
    case Algorithm::Direct:
      return "direct";
  }
  return "";
}

std::optional<Algorithm> algorithm_from_name(const std::string& name) {
  for (Algorithm a :
       {Algorithm::Ring, Algorithm::Naive, Algorithm::RecursiveDoubling, Algorithm::Rabenseifner, Algorithm::Direct})
    if (algorithm_name(a) == name) return a;
  return std::nullopt;
}

void run_collective(Communicator& comm, Op op, Algorithm algorithm, const RankBuffers& buffers,
                    StepRecorder* recorder) {
  const auto n = static_cast<std::size_t>(comm.size());
  if (buffers.send.size() != n || buffers.recv.size() != n || buffers.count < 0)
    throw std::invalid_argument("run_collective: one send and one recv buffer per rank, count >= 0");
  if (recorder != nullptr && algorithm != Algorithm::Ring)
    throw std::invalid_argument("run_collective: only the ring keeps a step record");
  if (algorithm != Algorithm::Ring && algorithm != Algorithm::Naive)
    return run_logged(comm, algorithm, buffers, nullptr);
  comm.run_on_ranks([&](int rank) {
    if (algorithm == Algorithm::Ring)
      ring_rank(comm, rank, op, buffers, recorder);
    else
      naive_rank(comm, rank, op, buffers);
  });
}

}  // namespace dlsys::collectives
