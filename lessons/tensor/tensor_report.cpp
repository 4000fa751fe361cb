// What `dlsys-lab run tensor` prints after the generic table: the activation calculator, the course's example, or the
// run's tables against t and h, its collectives, its errors and what the lesson expects of it.
#include <fmt/format.h>

#include "engine/units.h"
#include "lessons/tensor/tensor_lesson.h"

namespace dlsys {

namespace {

std::string param(const RunResult& r, const char* key) {
  const auto it = r.params.find(key);
  return it == r.params.end() ? "" : it->second;
}

// Every digit of a whole number, with thousands separators (format_count goes through a double, exact only to 2^53).
std::string commas(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return (value < 0 ? "-" : "") + digits;
}

std::string bytes_text(std::int64_t b) { return fmt::format("{} B = {}", commas(b), format_bytes_both(double(b))); }

std::string vector_text(const std::vector<float>& v) {
  std::string out;
  for (float x : v) out += (out.empty() ? "" : ", ") + fmt::format("{:g}", x);
  return "[" + out + "]";
}

std::string calculator(const tensor::TensorTheory& t) {
  std::string out = fmt::format(
      "\nActivation memory of one layer, per rank [EXT] (Korthikanti et al., MLSys 2023; 16-bit activations)\n"
      "  inputs  s = {}, b = {}, h = {}, a = {}, t = {}, sp = {}\n",
      t.activation_seq, t.activation_batch, t.activation_hidden, t.activation_heads, t.activation_t,
      t.activation_sp ? "on" : "off");
  out += fmt::format("  no parallelism           s b h (34 + 5 a s / h)             {}\n",
                     bytes_text(t.activation_bytes_no_parallel));
  out += fmt::format("  tensor parallel          s b h (10 + 24/t + 5 a s / (h t))  {}\n",
                     bytes_text(t.activation_bytes_tensor));
  out += fmt::format("  tensor + sequence        s b h (34/t + 5 a s / (h t))       {}\n",
                     bytes_text(t.activation_bytes_tensor_sequence));
  out += fmt::format("  chosen: {} = {}\n", t.activation_formula, bytes_text(t.activation_bytes_per_layer));
  out += fmt::format("  the lab's fp32 layer: {} = {}\n", t.lab_activation_formula,
                     bytes_text(t.lab_activation_bytes_per_rank));
  if (t.activation_sp)
    out += fmt::format(
        "Collectives per layer: forward {} reduce-scatters + {} all-gathers, backward {} + {} (two of them "
        "re-gather inputs kept split), each of b s h = {} elements\n",
        t.reduce_scatters_per_layer_fwd, t.all_gathers_per_layer_fwd, t.reduce_scatters_per_layer_bwd,
        t.all_gathers_per_layer_bwd, commas(t.comm_elements_per_allreduce));
  else
    out += fmt::format("Collectives per layer: {} all-reduces forward and {} backward, each of b s h = {} elements\n",
                       t.allreduces_per_layer_fwd, t.allreduces_per_layer_bwd, commas(t.comm_elements_per_allreduce));
  out += fmt::format("Parameters per rank: 12 h^2 / t + 4 h = {}\n", commas(t.params_per_rank));
  return out;
}

std::string course_example(const tensor::CourseExample& e) {
  std::string out = "\nThe course's example on two ranks: W is 4 x 4, x = [1, 2, 0, 1], y = x W\n";
  out += fmt::format("  column split: rank 0 computes {} from W's columns 0-1, rank 1 {} from columns 2-3\n",
                     vector_text(e.halves.at(0)), vector_text(e.halves.at(1)));
  out += fmt::format("                all-gather: y = {} on every rank\n", vector_text(e.y));
  out += fmt::format("  row split:    rank 0 (x[0:2] = [1, 2], W's rows 0-1) has partial {}\n",
                     vector_text(e.partials.at(0)));
  out += fmt::format("                rank 1 (x[2:4] = [0, 1], W's rows 2-3) has partial {}\n",
                     vector_text(e.partials.at(1)));
  out += fmt::format("                all-reduce: y = {} on every rank\n", vector_text(e.y_row_split));
  out += fmt::format("  every rank ends with the same y both ways: {}\n", e.ranks_agree ? "yes" : "NO");
  return out;
}

std::string run_tables(const RunResult& r, const tensor::TensorTheory& t, const tensor::TensorMeasured& m) {
  std::string out = fmt::format("\nRanks: {}\n", m.placement);
  out += "\nAgainst t at the chosen h (per rank, the slowest rank per step, median of the timed steps)\n";
  out += fmt::format("  {:>3} {:>12} {:>12} {:>12} {:>12} {:>16} {:>16}\n", "t", "compute", "(CPU time)", "comm",
                     "step", "bytes sent", "activations");
  const Series *compute = r.find_series("compute_vs_t"), *cpu = r.find_series("compute_cpu_vs_t"),
               *comm = r.find_series("comm_vs_t"), *step = r.find_series("step_vs_t"),
               *bytes = r.find_series("comm_bytes_vs_t"), *act = r.find_series("activation_vs_t");
  // No CPU time on GPU ranks: their work is not a thread's.
  const bool with_cpu = cpu && compute && cpu->points.size() == compute->points.size();
  if (compute && comm && step && bytes && act)
    for (std::size_t i = 0; i < compute->points.size(); ++i)
      out += fmt::format(
          "  {:>3g} {:>12} {:>12} {:>12} {:>12} {:>16} {:>16}\n", compute->points[i].x,
          format_duration_us(compute->points[i].y), with_cpu ? format_duration_us(cpu->points[i].y) : std::string("-"),
          format_duration_us(comm->points[i].y), format_duration_us(step->points[i].y),
          format_count(double(std::int64_t(bytes->points[i].y))), format_count(double(std::int64_t(act->points[i].y))));
  const Series *hc = r.find_series("compute_vs_hidden"), *hm = r.find_series("comm_vs_hidden"),
               *gain = r.find_series("gain_vs_hidden");
  if (hc && hm && gain && hc->points.size() == gain->points.size()) {
    out += fmt::format("\nAgainst h at t = {}: communication against the compute the split saved\n", param(r, "t"));
    out += fmt::format("  {:>7} {:>12} {:>12} {:>12}  {}\n", "h", "compute", "comm", "saved", "");
    for (std::size_t i = 0; i < hc->points.size(); ++i)
      out += fmt::format("  {:>7g} {:>12} {:>12} {:>12}  {}\n", hc->points[i].x, format_duration_us(hc->points[i].y),
                         format_duration_us(hm->points[i].y),
                         gain->points[i].y > 0 ? format_duration_us(gain->points[i].y) : std::string("none"),
                         hm->points[i].y > gain->points[i].y ? "communication outweighs the gain" : "");
  }
  out += fmt::format("\nCollectives of one step, rank 0 (bytes {}; formula: ring, fp32)\n",
                     m.on_gpu ? "counted from the GPU ring's copies, or its count with NCCL" : "counted by the links");
  for (const tensor::MeasuredCollective& c : m.collectives)
    out += fmt::format("  {:<8} {:<14} {:<34} {:>12} elements {:>12} B sent (formula {:.0f}) {:>10}\n", c.pass, c.op,
                       c.site, format_count(double(c.elements)), format_count(double(c.bytes_sent)), c.bytes_formula,
                       format_duration_us(c.time_us));
  out += fmt::format("  total {} B sent per step; formula {:.0f}: {}\n", format_count(double(m.comm_bytes)),
                     t.comm_bytes_per_step_per_rank, m.comm_bytes_match_formula ? "equal" : "DIFFERENT");
  out += fmt::format("\nActivations kept per rank (ledger): {}; the lab's formula {} = {}: {}\n",
                     format_count(double(m.activation_bytes_measured)), t.lab_activation_formula,
                     format_count(double(t.lab_activation_bytes_per_rank)),
                     m.activation_bytes_match_formula ? "equal" : "DIFFERENT");
  out += "\nError against the unsharded layer in double, max |sharded - unsharded| / max |unsharded|\n";
  for (const tensor::MeasuredError& e : m.errors) out += fmt::format("  {:<30} {:.2e}\n", e.tensor, e.max_rel_err);
  out += fmt::format(
      "\nWhat the lesson expects (stated for hidden {}, seq {}, t 2; this run: hidden {}, seq {}, t {}{})\n",
      kBarHidden, kBarSeq, param(r, "hidden"), param(r, "seq"), param(r, "t"),
      m.at_bar_sizes ? "" : ": other sizes, so read these as indications");
  if (m.compute_ratio_t2_over_t1 > 0)
    out +=
        fmt::format("  compute per rank at t = 2 at most {:g} of t = 1's (fastest timed steps, same run): {:.2f}: {}\n",
                    m.compute_ratio_bar, m.compute_ratio_t2_over_t1, m.meets_compute_bar ? "met" : "NOT met");
  if (m.compute_cpu_ratio_t2_over_t1 > 0)
    out += fmt::format("    in thread CPU time, the work alone (not waiting for a core): {:.2f}\n",
                       m.compute_cpu_ratio_t2_over_t1);
  if (m.gpu_scaling_caveat) out += "    " + *m.gpu_scaling_caveat + "\n";
  if (m.compute_ratio_t2_over_t1 <= 0)
    out += "  compute per rank at t = 2 against t = 1: not measured (2 does not divide the heads)\n";
  out += fmt::format("  max relative error at most {:g}: {:.2e}: {}\n", m.max_rel_err_bar, m.max_rel_err,
                     m.meets_error_bar ? "met" : "NOT met");
  if (m.on_gpu && r.backend.emulated && !m.meets_compute_bar)
    out +=
        "  (the ranks were streams on one GPU, sharing its SMs and memory: each rank's share of the work runs "
        "beside the others', not alone on a GPU of its own)\n";
  if (const std::string load = r.backend.conditions.sentence(); !load.empty() && !m.meets_compute_bar && !m.on_gpu)
    out += fmt::format("  (the machine was busy: {})\n", load);
  return out;
}

}  // namespace

std::string TensorLesson::text_report(const RunResult& r) const {
  const auto* t = r.theory_as<tensor::TensorTheory>();
  if (t == nullptr) return {};
  const auto* m = r.measured_as<tensor::TensorMeasured>();
  if (m && m->example) return course_example(*m->example);
  std::string out = calculator(*t);
  if (m) out += run_tables(r, *t, *m);
  return out;
}

}  // namespace dlsys
