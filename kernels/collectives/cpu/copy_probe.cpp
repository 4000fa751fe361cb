#include "kernels/collectives/copy_probe.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/collectives/cpu/streaming_stores.h"

namespace dlsys::collectives {

void copy_on_ranks(Communicator& comm, const RankBuffers& buffers, std::int64_t bytes_per_rank, CopyKind kind,
                   int copying_ranks) {
  if (static_cast<int>(buffers.send.size()) != comm.size() || static_cast<int>(buffers.recv.size()) != comm.size())
    throw std::invalid_argument("copy_on_ranks: one send and one recv buffer per rank");
  const std::int64_t total = bytes_per_rank / static_cast<std::int64_t>(sizeof(float));
  comm.run_on_ranks([&](int rank) {
    if (rank >= copying_ranks || buffers.count <= 0) return;
    for (std::int64_t done = 0; done < total;) {
      const std::int64_t m = std::min(buffers.count, total - done);
      if (kind == CopyKind::Memcpy)
        std::memcpy(buffers.recv[rank], buffers.send[rank], static_cast<std::size_t>(m) * sizeof(float));
      else
        detail::copy_results(buffers.recv[rank], nullptr, buffers.send[rank], m);
      done += m;
    }
  });
}

}  // namespace dlsys::collectives
