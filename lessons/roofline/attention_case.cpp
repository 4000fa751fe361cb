// The roofline run's attention problem (see attention_case.h).
#include "lessons/roofline/attention_case.h"

#include <fmt/format.h>

#include "kernels/attention/attention.h"

namespace dlsys::roofline {

namespace {

constexpr std::int64_t kAttentionHeadDim = 64;
constexpr std::int64_t kFlashSramBytes = 49152;

}  // namespace

AttentionCase::AttentionCase(RooflineRun& run)
    : n(static_cast<std::int64_t>(run.ctx.params.integer("attention_n"))),
      d(kAttentionHeadDim),
      problem{n, d, false, attention::default_scale(d)},
      tiling(attention::algorithm1_tiling(attention::sram_elements(kFlashSramBytes, sizeof(float)), d)),
      q(run.ctx.ledger, "attention", std::size_t(n * d)),
      k(run.ctx.ledger, "attention", std::size_t(n * d)),
      v(run.ctx.ledger, "attention", std::size_t(n * d)),
      o(run.ctx.ledger, "attention", std::size_t(n * d)),
      reference(run.ctx.ledger, "attention", std::size_t(n * d)),
      flop(attention::matmul_flops(n, d)) {
  attention::fill_uniform(q.span(), 1);
  attention::fill_uniform(k.span(), 2);
  attention::fill_uniform(v.span(), 3);
  run.progress(fmt::format("attention double reference, n = {}", n));
  attention::reference(problem, q.data(), k.data(), v.data(), reference.data(), run.threads);
}

RoofPoint AttentionCase::point(bool flash, double bytes, const TimingStats& t) const {
  RoofPoint p =
      flash
          ? roof_point(
                "attention_flash", "flash attention", fmt::format("flash attention, n = {}, d = {}", n, d), flop, bytes,
                t, fmt::format("tiles {} x {}: Q and O once, K and V once per block of queries", tiling.br, tiling.bc))
          : roof_point("attention_naive", "standard attention", fmt::format("standard attention, n = {}, d = {}", n, d),
                       flop, bytes, t, "S = Q K^T written, softmax read and written, P read: 4 (4 n d + 4 n^2) B");
  p.max_rel_err = attention::max_abs_error(o.span(), reference.span());
  return p;
}

}  // namespace dlsys::roofline
