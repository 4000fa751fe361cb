#include "lessons/moe/moe_values.h"

#include "engine/json_read.h"

namespace dlsys::moe_lesson {

namespace {
DLSYS_VALUES_PART(AllKeys, MoeMeasured, wanted, kept, wanted_untrained, dropped, dropped_share, balance_loss,
                  balance_loss_untrained, balance_training, max_abs_err, wrong, ranks, dispatch_bytes,
                  dispatch_bytes_sent_per_rank, dispatch_bytes_routed_per_rank, bytes_match_routing,
                  dispatch_wire_busiest_us, phases, moe_us, dispatch_alone, all_reduce, all_reduce_bytes_per_rank,
                  dense, moe_flop, dense_flop, moe_gflops, dense_gflops, sequential, overlapped, ideal_overlapped_us,
                  overlap_speedup, hardware_threads, emulated, overlap_emulated)
DLSYS_VALUES_PART(GpuKeys, MoeMeasured, experts_on_gpu, experts_gpu_max_abs_diff, experts_gpu_worst_share_of_bound,
                  experts_gpu_wrong, output_tolerance, gpu_bytes)
}  // namespace

void to_json(nlohmann::ordered_json& j, const MoeMeasured& m) { write_parts<AllKeys, GpuKeys>(j, m, m.experts_on_gpu); }

void from_json(const nlohmann::ordered_json& j, MoeMeasured& m) {
  read_parts<AllKeys, GpuKeys>(j, m);
  // The views draw a column per expert from wanted and kept (and the untrained load when there is one), and the
  // dispatch's bytes as a ranks x ranks grid.
  check_length("kept", m.kept.size(), m.wanted.size(), "one per expert, as wanted");
  if (!m.wanted_untrained.empty())
    check_length("wanted_untrained", m.wanted_untrained.size(), m.wanted.size(), "one per expert, as wanted");
  if (m.ranks < 1 || m.ranks > 64) throw JsonKeyError("ranks", std::to_string(m.ranks) + " ranks; allowed: 1 to 64");
  check_length("dispatch_bytes", m.dispatch_bytes.size(), std::size_t(m.ranks) * std::size_t(m.ranks), "ranks x ranks");
}

}  // namespace dlsys::moe_lesson
