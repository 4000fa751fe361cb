// What `dlsys-lab run zero` prints after the generic table: the calculator at the chosen model, N and stage, and for
// a run each stage's ledger against the formula, its bytes on the links against the ring's, and its weights against
// stage 0's. The line "benchmark:" is the lesson's promise: ledger == formula at every stage.
#include <fmt/format.h>

#include "engine/units.h"
#include "lessons/zero/zero_lesson.h"

namespace dlsys {

namespace {

std::string commas(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return (value < 0 ? "-" : "") + digits;
}

std::string gb(double bytes) {
  return bytes >= 1e12 ? fmt::format("{} TB", format_number(bytes / 1e12, 4))
                       : fmt::format("{} GB", format_number(bytes / 1e9, 4));
}

std::string calculator(const zero_lesson::ZeroTheory& t) {
  std::string out =
      fmt::format("\nModel states per rank [EXT] (Rajbhandari et al., SC 2020; K = 12), Psi = {:g} ({}), N = {}\n",
                  t.parameters, t.psi_source, t.ranks);
  const char* names[] = {"stage 0 (DDP)    (2 + 2 + K) Psi      ", "stage 1          (2 + 2) Psi + K Psi/N",
                         "stage 2          2 Psi + (2 + K) Psi/N", "stage 3          (2 + 2 + K) Psi/N    "};
  for (int s = 0; s < 4; ++s)
    out += fmt::format("  {} {:>14}{}\n", names[s], gb(t.model_state_bytes_by_stage.at(std::size_t(s))),
                       s == t.stage ? "   <- chosen" : "");
  out += fmt::format("  chosen stage {}: weights {}, gradients {}, optimizer {}; {:.2f}x less than DDP (limit {:g}x)\n",
                     t.stage, gb(t.weight_bytes_per_rank), gb(t.gradient_bytes_per_rank),
                     gb(t.optimizer_bytes_per_rank), t.reduction_factor, t.reduction_limit);
  out += fmt::format("  communication per step: {:g} Psi elements (the paper's); the ring sends {:.6g} per rank\n",
                     t.comm_elements_per_step / t.parameters, t.ring_comm_elements_per_step);
  out += fmt::format("  fp32 weights alone (what \"700 GB for GPT-3\" counts): {}\n", gb(t.fp32_weight_bytes));
  out += fmt::format("  activations per rank: {} ({})\n", gb(t.activation_bytes_per_rank), t.activation_assumption);
  out += fmt::format("  on {}: {} per rank: {}\n", t.gpu, gb(t.total_bytes_per_rank), t.fits ? "fits" : "does NOT fit");
  out += t.min_ranks_to_fit > 0
             ? fmt::format("  smallest N at stage {} that fits: {}\n", t.stage, t.min_ranks_to_fit)
             : fmt::format("  no N fits at stage {} (what is replicated alone exceeds the GPU)\n", t.stage);
  out += t.min_stage_to_fit >= 0
             ? fmt::format("  smallest stage at N = {} that fits: {}\n", t.ranks, t.min_stage_to_fit)
             : fmt::format("  no stage fits at N = {}\n", t.ranks);
  return out;
}

std::string run_tables(const zero_lesson::ZeroMeasured& m) {
  std::string out = fmt::format("\nThe lab's stack: Psi = {} parameters on N = {} {}, {} working copy and gradients\n",
                                commas(m.parameters), m.ranks, m.on_gpu ? "GPU ranks" : "rank threads", m.dtype);
  out += fmt::format("  {:>5} {:>13} {:>13} {:>6} {:>11} {:>11} {:>11} {:>11} {:>13} {:>13} {:>17} {:>10}\n", "stage",
                     "model states", "formula", "equal", "weights", "gradients", "optimizer", "activations",
                     "comm peak", "sent elems", "ring k(N-1)/N Psi", "vs stage 0");
  for (const zero_lesson::StageMeasured& s : m.stages)
    out += fmt::format("  {:>5} {:>13} {:>13} {:>6} {:>11} {:>11} {:>11} {:>11} {:>13} {:>13} {:>17} {:>10}\n", s.stage,
                       commas(s.peak_bytes_per_rank.model_states), commas(s.model_state_bytes_formula),
                       s.model_states_match_formula ? "yes" : "NO", commas(s.peak_bytes_per_rank.weights),
                       commas(s.peak_bytes_per_rank.gradients), commas(s.peak_bytes_per_rank.optimizer),
                       commas(s.peak_bytes_per_rank.activations), commas(s.peak_bytes_per_rank.comm),
                       commas(s.comm_elements), commas(s.ring_comm_elements_formula),
                       s.bit_identical_to_stage0 ? "identical" : fmt::format("{:.1e}", s.max_rel_err_vs_stage0));
  out +=
      "  (bytes per rank, the largest over the ranks; comm peak: buckets in flight and, at stage 3, the layer just "
      "all-gathered)\n";
  out += "\nStep time, the slowest rank, median of the steps after the first; loss of the global batch per step\n";
  for (const zero_lesson::StageMeasured& s : m.stages) {
    std::string losses;
    for (double l : s.losses) losses += fmt::format(" {:.6g}", l);
    out += fmt::format("  stage {}: {:>10}  {} collectives per step  loss{}\n", s.stage, format_duration_us(s.step_us),
                       s.collectives_per_step, losses);
  }
  out += fmt::format(
      "\nbenchmark: ledger-measured model-state bytes per rank equal (2+2+K)Psi, (2+2)Psi + K Psi/N, 2Psi + "
      "(2+K)Psi/N, (2+2+K)Psi/N exactly at every stage and rank: {}\n",
      m.all_stages_match_formula ? "yes" : "NO");
  std::string swept;
  for (int n : m.swept_ranks) swept += (swept.empty() ? "" : ", ") + std::to_string(n);
  out += fmt::format("the same at N = {} (one step per stage, every rank's ledger): {}\n", swept,
                     m.sweep_matches_formula ? "yes" : "NO");
  out += fmt::format("final fp32 master weights bit-identical to stage 0's at every stage: {}\n",
                     m.all_stages_bit_identical ? "yes" : "no");
  return out;
}

}  // namespace

std::string ZeroLesson::text_report(const RunResult& r) const {
  const auto* t = r.theory_as<zero_lesson::ZeroTheory>();
  if (t == nullptr) return {};
  std::string out = calculator(*t);
  if (const auto* m = r.measured_as<zero_lesson::ZeroMeasured>()) out += run_tables(*m);
  return out;
}

}  // namespace dlsys
