#pragma once
// Pipeline schedules: which operation each device runs, in which order. The schedules teach one idea each:
//   gpipe        - fill-drain: every forward, then every backward. Simple; holds m micro-batches of activations.
//   1f1b         - after a warm-up of p - r - 1 forwards, rank r alternates one forward, one backward: same bubble as
//                  GPipe, but at most p - r micro-batches in flight (PipeDream-Flush, Megatron-LM).
//   interleaved  - each device holds v chunks (stage c*p + r on rank r): the bubble shrinks by v, at the cost of v
//                  times more point-to-point messages (Narayanan et al. 2021).
//   zb-h1        - the backward split into B (input gradient, on the critical path) and W (weight gradient,
//                  deferrable): W fills the cool-down bubble (Qi et al., "Zero Bubble Pipeline Parallelism", 2024).
//   dualpipe     - micro-batches enter from both ends; device i holds stage i of one model replica and stage p-1-i of
//                  a second one (2x parameters); a forward of one direction overlaps a backward of the other
//                  (DeepSeek-V3 technical report, 2024, and the DualPipe repository).
//   dualpipev    - the same schedule folded into a V: one replica, stages r and 2p-1-r on device r, p devices for
//                  2p stages (the "cut in half" DualPipe).
// Host code only (no GUI, no CUDA): shared by the simulator, the legality checker and the real executor.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dlsys::pipeline {

enum class ScheduleKind { GPipe, OneFOneB, Interleaved, ZbH1, DualPipe, DualPipeV };
inline constexpr std::array<ScheduleKind, 6> kAllSchedules = {ScheduleKind::GPipe,       ScheduleKind::OneFOneB,
                                                              ScheduleKind::Interleaved, ScheduleKind::ZbH1,
                                                              ScheduleKind::DualPipe,    ScheduleKind::DualPipeV};

std::string schedule_id(ScheduleKind kind);     // "gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe", "dualpipev"
std::string schedule_title(ScheduleKind kind);  // "GPipe (fill-drain)", ...
std::vector<std::string> schedule_ids();
ScheduleKind parse_schedule(const std::string& id);  // throws BadInput naming parameter 'schedule'

enum class OpKind : std::uint8_t { F, B, W };

struct Op {
  OpKind kind = OpKind::F;
  int micro_batch = 0;  // 0 .. m-1; in DualPipe the first m/2 enter at device 0, the rest at device p-1
  int stage = 0;        // position on the micro-batch's path through the model, 0 .. stages-1 (the model stage)
  bool split = false;   // B only: true = input gradient alone (a W op follows later); false = full backward
  bool paired = false;  // runs overlapped with the next op of the same device (DualPipe's F&B pair)
};
bool same_op(const Op& a, const Op& b);  // same kind, micro-batch and stage
std::string op_label(const Op& op);      // "F3", "B3", "W3"
char op_letter(OpKind kind);

struct ScheduleShape {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int devices = 2;        // p
  int micro_batches = 4;  // m
  int chunks = 1;         // v: model chunks per device (interleaved only; ignored otherwise)
};

// Throws BadInput (parameter, value, what is allowed) when `shape` cannot be scheduled: p < 1, m < 1, v < 1,
// interleaved with m not a multiple of p, DualPipe with odd p, odd m or m < 2p, DualPipeV with m < 2p.
void check_shape(const ScheduleShape& shape);

struct Schedule {
  ScheduleShape shape;
  int stages = 0;             // model stages on every micro-batch's path: p, v*p (interleaved) or 2p (DualPipeV)
  int chunks_per_device = 1;  // 1, v, or 2 (DualPipe, DualPipeV)
  int param_copies = 1;       // 2 for DualPipe: two model replicas, one per direction
  std::vector<std::vector<Op>> device_ops;  // per device, in execution order

  int devices() const { return shape.devices; }
  int micro_batches() const { return shape.micro_batches; }
  int direction(int micro_batch) const;  // 0, or 1 for DualPipe's reverse direction
  int device_of(int micro_batch, int stage) const;
  int chunk_of(int micro_batch, int stage) const;  // which of the device's chunks holds this stage
  std::size_t op_count() const;
};

// Builds the schedule after check_shape(shape).
Schedule make_schedule(const ScheduleShape& shape);

}  // namespace dlsys::pipeline
