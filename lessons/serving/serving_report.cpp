// What `dlsys-lab run serving` prints after the generic table: the policies side by side, the benchmark line the
// lesson expects, the roofline points, the KV budget's count and speculative decoding.
#include <fmt/format.h>

#include "engine/units.h"
#include "lessons/run_file.h"
#include "lessons/serving/serving_lesson.h"

namespace dlsys {

std::string ServingLesson::text_report(const RunResult& r) const {
  const auto* m = r.measured_as<serving::ServingMeasured>();
  const auto* t = r.theory_as<serving::ServingTheory>();
  if (m == nullptr || t == nullptr) return {};
  std::string out = "\nThe same request stream under each policy (same run, same max_batch)\n";
  out += fmt::format("  {:<11} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>10}\n", "policy", "rate/s", "tokens/s",
                     "TTFT p50", "TPOT p50", "lat p50", "lat p99", "padding", "rows/step");
  for (const serving::PolicyMeasured& p : m->policies)
    out += fmt::format("  {:<11} {:>8.4g} {:>10.0f} {:>8.1f}ms {:>8.2f}ms {:>8.1f}ms {:>8.1f}ms {:>8.1f}% {:>10.2f}\n",
                       p.policy, p.rate, p.tokens_per_s, p.ttft_ms_p50, p.tpot_ms_p50, p.latency_ms_p50,
                       p.latency_ms_p99, 100 * p.padding_fraction, p.mean_rows_per_step);
  if (!m->policies.empty())
    out += fmt::format("  static padding from the stream's lengths alone (closed form): {:.1f}%\n",
                       100 * m->policies.front().padding_fraction_closed_form);
  out +=
      fmt::format("  tokens identical across every policy, batch and rate: {}\n", m->tokens_identical ? "yes" : "NO");
  if (m->cpu_match_fraction)
    out += fmt::format(
        "  on the GPU: {:.0f}% of the requests' tokens equal the CPU model's exactly (fp32 sums in another order may "
        "flip a near tie)\n",
        100.0 * *m->cpu_match_fraction);
  const int max_batch = read_params(recorded_params(*this, r)).max_batch;
  if (m->default_stream)
    out += fmt::format(
        "benchmark: continuous / static throughput = {:.2f}x at max_batch {} on the default stream (expected >= "
        "{:.1f}x, tokens identical): {}\n",
        m->continuous_over_static, max_batch, m->throughput_ratio_bar, m->meets_throughput_bar ? "met" : "NOT met");
  else
    out += fmt::format(
        "continuous / static throughput = {:.2f}x at max_batch {} (not the default stream: the lesson states its "
        "expectation of >= {:.1f}x for the defaults)\n",
        m->continuous_over_static, max_batch, m->throughput_ratio_bar);
  if (m->device == "cuda")
    out += fmt::format("\nRoofline (GPU 0: {:.1f} GFLOP/s fp32 peak, {:.1f} GB/s, datasheet)\n", m->peak_gflops,
                       m->bandwidth_gbps);
  else if (m->weights_flushed.value_or(false))
    out += fmt::format(
        "\nRoofline (this machine: {:.1f} GFLOP/s sgemm peak, {:.1f} GB/s read stream; the weights flushed from the "
        "caches before each pass)\n",
        m->peak_gflops, m->bandwidth_gbps);
  else
    out += fmt::format(
        "\nRoofline (this machine: {:.1f} GFLOP/s sgemm peak, {:.1f} GB/s memcpy; the weights stayed in cache between "
        "passes)\n",
        m->peak_gflops, m->bandwidth_gbps);
  for (const serving::RooflinePoint& p : m->roofline)
    out += fmt::format("  {:<22} {:>6.3g} FLOP/B (fp32 weights)  {:>8.3f} ms  {:>7.1f} GFLOP/s  roof {:>7.1f}\n",
                       p.name, p.intensity_fp32, p.ms, p.gflops, p.roof_gflops);
  out += fmt::format("  16-bit weights: prefill intensity {:g} FLOP/B, decode {:g} at batch {} ({:g} at batch 1)\n",
                     t->prefill_intensity, t->decode_intensity, max_batch, t->decode_intensity_batch1);
  out += fmt::format(
      "\nKV budget {}: {} sequences reserving the whole context, {} of this stream's requests in {}-token blocks "
      "({} per token)\n",
      format_bytes_both(double(m->kv_budget_bytes)), m->contiguous_fit, m->paged_fit, m->block_tokens,
      format_bytes_both(double(m->kv_bytes_per_token)));
  if (m->speculative) {
    const serving::SpeculativeMeasured& s = *m->speculative;
    out += fmt::format(
        "\nSpeculative decoding: draft = first {} of {} layers, k = {}: {} acceptance {:.1f}%, {:.2f} tokens per "
        "target pass (formula at that rate: {:.2f}), {:.1f} ms -> {:.1f} ms, speed-up {:.2f}x, output identical to "
        "the target's greedy: {}\n",
        s.draft_layers, s.target_layers, s.k,
        s.accepted && s.rejections && s.target_passes
            ? fmt::format("{} passes kept {} proposals and rejected one in {}:", *s.target_passes, *s.accepted,
                          *s.rejections)
            : std::string("(recorded as kept / proposed)"),
        100 * s.acceptance_rate, s.tokens_per_target_pass, s.expected_tokens_per_pass, s.greedy_ms, s.speculative_ms,
        s.speculative_speedup, s.identical ? "yes" : "NO");
  }
  if (r.backend.conditions.disturbed())
    out +=
        "Other programs kept a core busy: throughput ratios measured in the same run still compare, but the "
        "latency percentiles include time spent waiting for a core.\n";
  return out;
}

}  // namespace dlsys
