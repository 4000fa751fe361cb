#include "kernels/collectives/cpu/exchange.h"

#include <algorithm>

#include "kernels/collectives/ring_schedule.h"

namespace dlsys::collectives::detail {

void exchange(Channel& out, const float* source, std::int64_t send_count, Channel& in, float* target, const float* mine,
              std::int64_t recv_count) {
  const std::int64_t segment = out.slot_elements();
  const std::int64_t sends = segment_count(send_count, segment),
                     receives = segment_count(recv_count, in.slot_elements());
  for (std::int64_t k = 0; k < std::max(sends, receives); ++k) {
    if (k < sends) {
      const std::int64_t offset = k * segment;
      out.send(source + offset, std::max<std::int64_t>(0, std::min(segment, send_count - offset)));
    }
    if (k < receives) {
      const std::int64_t offset = k * in.slot_elements();
      receive_segment(in, target + offset, mine == nullptr ? nullptr : mine + offset);
    }
  }
}

}  // namespace dlsys::collectives::detail
