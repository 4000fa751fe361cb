// Small traced runs of the tiled kernel. The trace hook copies each tile's state out as the kernel produces it, so a
// view shows the kernel's own numbers, not a re-enactment.
#include "kernels/attention/trace.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "kernels/attention/online_softmax.h"

namespace dlsys::attention {

namespace {

template <typename T>
void run_traced(FlashTrace& trace, const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v) {
  const Problem& p = trace.problem;
  std::vector<T> o(static_cast<std::size_t>(p.n * p.d));
  std::vector<T> scratch(static_cast<std::size_t>(flash_scratch_elements(p.n, p.d, trace.tiling, trace.order, 1)));
  const TileTrace hook = [&](const TileRecord& record) { trace.tiles.push_back(record); };
  v2_flash<T>(p, trace.tiling, trace.order, q.data(), k.data(), v.data(), o.data(), scratch, 1, &hook, &trace.counted);
  trace.q.assign(q.begin(), q.end());
  trace.k.assign(k.begin(), k.end());
  trace.v.assign(v.begin(), v.end());
  trace.output.assign(o.begin(), o.end());
}

void check_range(const char* what, std::int64_t value, std::int64_t max) {
  if (value < 1 || value > max)
    throw BadInput(fmt::format("trace: {} = {} is not allowed; allowed: an integer from 1 to {}", what, value, max));
}

}  // namespace

FlashTrace trace_flash(const TraceRequest& request) {
  check_range("n", request.n, kMaxTraceN);
  check_range("d", request.d, kMaxTraceD);
  check_range("br", request.tiling.br, request.n);
  check_range("bc", request.tiling.bc, request.n);
  FlashTrace trace;
  trace.problem = {request.n, request.d, request.causal, default_scale(request.d)};
  trace.tiling = request.tiling;
  trace.order = request.order;
  const std::size_t count = static_cast<std::size_t>(request.n * request.d);
  std::vector<float> q(count), k(count), v(count);
  fill_uniform(q, request.seed);
  fill_uniform(k, request.seed + 1);
  fill_uniform(v, request.seed + 2);
  run_traced(trace, q, k, v);
  trace.reference.resize(count);
  reference(trace.problem, q.data(), k.data(), v.data(), trace.reference.data(), 1);
  return trace;
}

FlashTrace trace_worked_example(LoopOrder order) {
  const WorkedExample example;
  FlashTrace trace;
  trace.problem = {4, example.dv, false, 1.0};
  trace.tiling = {4, example.tile};
  trace.order = order;
  const std::vector<double> q{1, 0, 0.5, 0, 0, 0, -1, 0};  // (4, 2)
  std::vector<double> k;                                   // (4, 2): k_j = [s_j, 0]
  for (double s : example.scores) k.insert(k.end(), {s, 0.0});
  run_traced(trace, q, k, example.values);
  return trace;
}

}  // namespace dlsys::attention
