// The schedule generators: for each device, its ordered list of F / B / W operations (see schedule.h).
#include "kernels/pipeline/schedule.h"

#include <fmt/format.h>

#include <deque>

#include "engine/errors.h"

namespace dlsys::pipeline {

namespace {

struct ScheduleName {
  ScheduleKind kind;
  const char* id;
  const char* title;
};
constexpr ScheduleName kNames[] = {
    {ScheduleKind::GPipe, "gpipe", "GPipe (fill-drain)"},
    {ScheduleKind::OneFOneB, "1f1b", "1F1B"},
    {ScheduleKind::Interleaved, "interleaved", "Interleaved 1F1B"},
    {ScheduleKind::ZbH1, "zb-h1", "Zero Bubble H1"},
    {ScheduleKind::DualPipe, "dualpipe", "DualPipe"},
    {ScheduleKind::DualPipeV, "dualpipev", "DualPipeV"},
};

Op forward(int micro_batch, int stage) { return {OpKind::F, micro_batch, stage, false, false}; }
Op backward(int micro_batch, int stage, bool split) { return {OpKind::B, micro_batch, stage, split, false}; }
Op weight(int micro_batch, int stage) { return {OpKind::W, micro_batch, stage, false, false}; }

std::vector<Op> gpipe_ops(int p, int m, int rank) {
  (void)p;
  std::vector<Op> ops;
  for (int mb = 0; mb < m; ++mb) ops.push_back(forward(mb, rank));
  // Backwards in reverse micro-batch order, as autograd unwinds the last micro-batch first (GPipe, torchgpipe).
  for (int mb = m - 1; mb >= 0; --mb) ops.push_back(backward(mb, rank, false));
  return ops;
}

// 1F1B, and ZB-H1 when `split` is set. Rank r runs min(p - r - 1, m) warm-up forwards, then alternates one forward
// and one backward, then drains the remaining backwards. With `split`, each backward computes the input gradient
// only and rank r keeps up to r weight-gradient passes (W) pending: they fill the waits of the cool-down, and the
// activations they hold bring every rank to the same peak as rank 0 (p micro-batches), as in ZB-H1.
std::vector<Op> one_f_one_b_ops(int p, int m, int rank, bool split) {
  std::vector<Op> ops;
  const int warmup = std::min(p - rank - 1, m);
  std::deque<int> pending_w;
  auto after_backward = [&](int mb) {
    if (!split) return;
    pending_w.push_back(mb);
    if (static_cast<int>(pending_w.size()) > rank) {
      ops.push_back(weight(pending_w.front(), rank));
      pending_w.pop_front();
    }
  };
  for (int mb = 0; mb < warmup; ++mb) ops.push_back(forward(mb, rank));
  for (int i = 0; i < m - warmup; ++i) {
    ops.push_back(forward(warmup + i, rank));
    ops.push_back(backward(i, rank, split));
    after_backward(i);
  }
  for (int mb = m - warmup; mb < m; ++mb) {
    ops.push_back(backward(mb, rank, split));
    after_backward(mb);
  }
  for (int mb : pending_w) ops.push_back(weight(mb, rank));
  return ops;
}

// Interleaved 1F1B as in Megatron-LM: micro-batches go in groups of p; for each group the device runs chunk 0 for
// all p of them, then chunk 1, ... (backwards visit the chunks in reverse). Warm-up: 2(p - r - 1) + (v - 1)p
// forwards, so that the first backward's input can arrive in time.
std::vector<Op> interleaved_ops(int p, int m, int v, int rank) {
  const int total = m * v;
  auto nth = [&](int k, bool is_forward) {
    const int group = k / (p * v), within = k % (p * v);
    const int chunk = is_forward ? within / p : v - 1 - within / p;
    return std::pair{group * p + within % p, chunk * p + rank};  // (micro-batch, stage)
  };
  const int warmup = std::min(2 * (p - rank - 1) + (v - 1) * p, total);
  std::vector<Op> ops;
  for (int k = 0; k < warmup; ++k) ops.push_back(forward(nth(k, true).first, nth(k, true).second));
  for (int k = 0; k < total - warmup; ++k) {
    const auto [fm, fs] = nth(warmup + k, true);
    const auto [bm, bs] = nth(k, false);
    ops.push_back(forward(fm, fs));
    ops.push_back(backward(bm, bs, false));
  }
  for (int k = total - warmup; k < total; ++k)
    ops.push_back(backward(nth(k, false).first, nth(k, false).second, false));
  return ops;
}

// DualPipe and DualPipeV share one shape, expressed per rank in two "phases": phase 0 is the chunk whose micro-batches
// enter at the end of the pipeline this rank is near to, phase 1 the other chunk. H is the number of ranks from an
// end to the middle (p/2 for DualPipe, p for DualPipeV), h this rank's distance from its end, n the micro-batches
// per phase. The eight steps follow the DualPipe repository's schedule (deepseek-ai/DualPipe, dualpipe.py),
// re-expressed here as op lists:
//   1. 2(H-h-1) x F0            warm-up of the near chunk
//   2. (h+1) x F0 F1            both chunks start
//   3. (H-h-1) x B1 W F1        first backwards of the far chunk, weight gradient right away (zero-bubble style)
//   4. (n-2H+h+1) x F0&B1 F1&B0 steady state: every forward overlapped with a backward of the other chunk
//   5. (H-h-1) x B1 F1&B0
//   6. (h+1) x B1 B0            the second half of these defer their W
//   7. (H-h-1) x W B0           deferred W fill the waits
//   8. (h+1) x W
// On the middle rank (h = H-1) the first pair of step 4 is not overlapped: the repository notes that running them
// one after the other shortens the bubble.
struct PhaseMap {
  int micro_batch_base[2];  // first micro-batch id of each phase
  int stage[2];             // the stage each phase's chunk holds on this rank
};

std::vector<Op> dual_ops(int H, int h, int n, const PhaseMap& map) {
  std::vector<Op> ops;
  int next_f[2] = {0, 0}, next_b[2] = {0, 0};
  std::deque<Op> deferred_w;  // weight-gradient passes owed, oldest first
  auto F = [&](int phase, bool paired = false) {
    Op op = forward(map.micro_batch_base[phase] + next_f[phase]++, map.stage[phase]);
    op.paired = paired;
    ops.push_back(op);
  };
  auto B = [&](int phase, bool split) {
    const Op op = backward(map.micro_batch_base[phase] + next_b[phase]++, map.stage[phase], split);
    ops.push_back(op);
    if (split) deferred_w.push_back(weight(op.micro_batch, op.stage));
  };
  auto W = [&] {
    ops.push_back(deferred_w.front());
    deferred_w.pop_front();
  };
  const bool middle = h == H - 1;
  for (int i = 0; i < 2 * (H - h - 1); ++i) F(0);
  for (int i = 0; i <= h; ++i) {
    F(0);
    F(1);
  }
  for (int i = 0; i < H - h - 1; ++i) {
    B(1, true);
    W();
    F(1);
  }
  for (int i = 0; i < n - 2 * H + h + 1; ++i) {
    F(0, !(i == 0 && middle));
    B(1, false);
    F(1, true);
    B(0, false);
  }
  for (int i = 0; i < H - h - 1; ++i) {
    B(1, false);
    F(1, true);
    B(0, false);
  }
  bool zero_bubble = false;
  for (int i = 0; i <= h; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
    B(1, zero_bubble);
    if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
    B(0, zero_bubble);
  }
  for (int i = 0; i < H - h - 1; ++i) {
    W();
    B(0, true);
  }
  while (!deferred_w.empty()) W();
  return ops;
}

}  // namespace

std::string schedule_id(ScheduleKind kind) {
  for (const auto& n : kNames)
    if (n.kind == kind) return n.id;
  return "?";
}

std::string schedule_title(ScheduleKind kind) {
  for (const auto& n : kNames)
    if (n.kind == kind) return n.title;
  return "?";
}

std::vector<std::string> schedule_ids() {
  std::vector<std::string> ids;
  for (const auto& n : kNames) ids.push_back(n.id);
  return ids;
}

ScheduleKind parse_schedule(const std::string& id) {
  std::string known;
  for (const auto& n : kNames) {
    if (id == n.id) return n.kind;
    known += (known.empty() ? "" : ", ") + std::string(n.id);
  }
  throw BadInput(fmt::format("parameter 'schedule': value '{}' is not allowed; allowed: one of: {}", id, known));
}

bool same_op(const Op& a, const Op& b) {
  return a.kind == b.kind && a.micro_batch == b.micro_batch && a.stage == b.stage;
}

char op_letter(OpKind kind) { return kind == OpKind::F ? 'F' : kind == OpKind::B ? 'B' : 'W'; }

std::string op_label(const Op& op) { return fmt::format("{}{}", op_letter(op.kind), op.micro_batch); }

void check_shape(const ScheduleShape& s) {
  const std::string id = schedule_id(s.kind);
  if (s.devices < 1)
    throw BadInput(fmt::format("parameter 'p': value '{}' is not allowed; allowed: at least 1 device", s.devices));
  if (s.micro_batches < 1)
    throw BadInput(
        fmt::format("parameter 'm': value '{}' is not allowed; allowed: at least 1 micro-batch", s.micro_batches));
  if (s.kind == ScheduleKind::Interleaved) {
    if (s.chunks < 1)
      throw BadInput(
          fmt::format("parameter 'v': value '{}' is not allowed; allowed: at least 1 chunk per device", s.chunks));
    if (s.micro_batches % s.devices != 0)
      throw BadInput(
          fmt::format("parameter 'm': value '{}' is not allowed for schedule 'interleaved' with p = {}: "
                      "the interleaved schedule sends micro-batches in groups of p, so m must be a "
                      "multiple of p (e.g. m = {})",
                      s.micro_batches, s.devices, (s.micro_batches / s.devices + 1) * s.devices));
  }
  if (s.kind == ScheduleKind::DualPipe) {
    if (s.devices % 2 != 0)
      throw BadInput(
          fmt::format("parameter 'p': value '{}' is not allowed for schedule 'dualpipe': DualPipe pairs "
                      "device i with device p-1-i, so p must be even (use dualpipev for odd p)",
                      s.devices));
    if (s.micro_batches % 2 != 0 || s.micro_batches < 2 * s.devices)
      throw BadInput(
          fmt::format("parameter 'm': value '{}' is not allowed for schedule 'dualpipe' with p = {}: half "
                      "the micro-batches enter at each end, so m must be even and at least 2p = {}",
                      s.micro_batches, s.devices, 2 * s.devices));
  }
  if (s.kind == ScheduleKind::DualPipeV && s.micro_batches < 2 * s.devices)
    throw BadInput(
        fmt::format("parameter 'm': value '{}' is not allowed for schedule 'dualpipev' with p = {}: the "
                    "schedule's steady state needs m at least 2p = {}",
                    s.micro_batches, s.devices, 2 * s.devices));
  (void)id;
}

int Schedule::direction(int micro_batch) const {
  return shape.kind == ScheduleKind::DualPipe && micro_batch >= shape.micro_batches / 2 ? 1 : 0;
}

int Schedule::device_of(int micro_batch, int stage) const {
  const int p = shape.devices;
  switch (shape.kind) {
    case ScheduleKind::Interleaved:
      return stage % p;
    case ScheduleKind::DualPipe:
      return direction(micro_batch) == 0 ? stage : p - 1 - stage;
    case ScheduleKind::DualPipeV:
      return stage < p ? stage : 2 * p - 1 - stage;
    default:
      return stage;
  }
}

int Schedule::chunk_of(int micro_batch, int stage) const {
  switch (shape.kind) {
    case ScheduleKind::Interleaved:
      return stage / shape.devices;
    case ScheduleKind::DualPipe:
      return direction(micro_batch);
    case ScheduleKind::DualPipeV:
      return stage < shape.devices ? 0 : 1;
    default:
      return 0;
  }
}

std::size_t Schedule::op_count() const {
  std::size_t n = 0;
  for (const auto& ops : device_ops) n += ops.size();
  return n;
}

Schedule make_schedule(const ScheduleShape& shape) {
  check_shape(shape);
  const int p = shape.devices, m = shape.micro_batches;
  Schedule s;
  s.shape = shape;
  s.stages = p;
  if (shape.kind != ScheduleKind::Interleaved) s.shape.chunks = 1;
  s.device_ops.resize(p);
  for (int r = 0; r < p; ++r) {
    switch (shape.kind) {
      case ScheduleKind::GPipe:
        s.device_ops[r] = gpipe_ops(p, m, r);
        break;
      case ScheduleKind::OneFOneB:
        s.device_ops[r] = one_f_one_b_ops(p, m, r, false);
        break;
      case ScheduleKind::ZbH1:
        s.device_ops[r] = one_f_one_b_ops(p, m, r, true);
        break;
      case ScheduleKind::Interleaved:
        s.stages = shape.chunks * p;
        s.chunks_per_device = shape.chunks;
        s.device_ops[r] = interleaved_ops(p, m, shape.chunks, r);
        break;
      case ScheduleKind::DualPipe: {
        const int h = std::min(r, p - 1 - r);
        const bool first_half = r < p / 2;
        // Phase 0 is the direction entering at this rank's end: direction 0 (ids 0..m/2-1) on the first half.
        const int near_base = first_half ? 0 : m / 2, far_base = first_half ? m / 2 : 0;
        s.chunks_per_device = 2;
        s.param_copies = 2;
        s.device_ops[r] = dual_ops(p / 2, h, m / 2, {{near_base, far_base}, {h, p - 1 - h}});
        break;
      }
      case ScheduleKind::DualPipeV:
        s.stages = 2 * p;
        s.chunks_per_device = 2;
        s.device_ops[r] = dual_ops(p, r, m, {{0, 0}, {r, 2 * p - 1 - r}});
        break;
    }
  }
  return s;
}

}  // namespace dlsys::pipeline
