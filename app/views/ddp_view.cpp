// Views of the data-parallel lesson: the course's batch split on the real model, DataParallel against DDP against N,
// the chosen run's step split, buckets with a measured timeline and step time against bucket size, and every variant
// (accumulation, 16-bit gradients) against single-rank training. They draw step data and the typed run result only.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/gui/timeline.h"
#include "app/views/view.h"
#include "app/views/wide_tables.h"
#include "engine/units.h"
#include "lessons/ddp/ddp_steps.h"
#include "lessons/ddp/ddp_values.h"

namespace dlsys::gui {

namespace {

using ddp::DdpMeasured;
using ddp::DdpSteps;

const DdpSteps* steps_of(const ViewContext& ctx) { return step_data_as<DdpSteps>(ctx); }

const DdpMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result && !ctx.result_stale ? ctx.result->measured_as<DdpMeasured>() : nullptr;
}

// What a busy machine does to this lesson's numbers, in one sentence (the shell's band above already says how busy).
constexpr const char* kBusySentence =
    "Other processes took turns with the rank and communication threads during this run, which stretches the "
    "all-reduces and skews the ranks' starts, so the overlap numbers here are lower and more scattered than on an "
    "idle machine.";
void busy_machine_caveat(const RunResult& r) {
  if (r.backend.conditions.disturbed()) draw_warning_band(kBusySentence);
}

// The height a wrapped paragraph takes at the current width, with the item spacing after it.
float wrapped_height(const std::string& text) {
  return ImGui::CalcTextSize(text.c_str(), nullptr, false, ImGui::GetContentRegionAvail().x).y +
         ImGui::GetStyle().ItemSpacing.y;
}
float caveat_height(const RunResult& r) {
  return r.backend.conditions.disturbed() ? wrapped_height(kBusySentence) + 12 * ui_scale() : 0.0f;
}

std::string us_text(double v) { return fmt::format("{:.0f} us", v); }

void add_series(PlotSpec& spec, const RunResult& r, const char* id, ImU32 color) {
  if (const Series* s = r.find_series(id)) {
    PlotLine line = line_from_series(*s, color);
    line.dashed = s->role == "theory";
    spec.lines.push_back(line);
  }
}

float rest_height(float reserve_lines, float minimum_lines = 12) {
  return std::max(ImGui::GetContentRegionAvail().y - reserve_lines * ImGui::GetFrameHeightWithSpacing(),
                  ImGui::GetTextLineHeight() * minimum_lines);
}

// ---- step 1: the batch split ----
void draw_split_step(const ViewContext& ctx) {
  const DdpSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const ddp::BatchSplit& s = steps->split;
  draw_heading(fmt::format("A batch of {} rows over {} workers, {} rows each: gradients of the first weights", s.batch,
                           s.workers, s.batch / s.workers));
  std::vector<std::string> headers{"weight"};
  for (int w = 0; w < s.workers; ++w) headers.push_back(fmt::format("worker {}", w + 1));
  headers.insert(headers.end(), {"mean of workers", "whole batch", "difference"});
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < 8 && i < s.full.size(); ++i) {
    std::vector<std::string> row{fmt::format("W1[{}]", i)};
    for (const auto& g : s.worker_grads) row.push_back(fmt::format("{:+.5f}", g[i]));
    row.push_back(fmt::format("{:+.6f}", s.averaged[i]));
    row.push_back(fmt::format("{:+.6f}", s.full[i]));
    row.push_back(fmt::format("{:+.1e}", s.difference[i]));
    rows.push_back(std::move(row));
  }
  draw_wide_columns_table("split", headers, rows);
  ImGui::Spacing();
  draw_wide_value_table(
      "split_summary", {{"weights in the model (2 blocks of width 8)", format_count(double(s.full.size()))},
                        {"largest |gradient| of the whole batch", fmt::format("{:.6f}", s.max_abs_grad)},
                        {"largest |mean of workers - whole batch|, all weights", fmt::format("{:.2e}", s.max_abs_diff)},
                        {"relative to the largest gradient", fmt::format("{:.2e}", s.max_rel_diff)}});
  draw_note(
      "Each worker's gradient differs (it saw other rows), yet their mean is the whole batch's gradient: the loss is "
      "a mean over rows and the gradient is linear. What is left is float rounding, of the order of fp32's 1e-7. "
      "DDP's all-reduce computes exactly this sum (the lab divides every loss by the global batch, so the sum needs "
      "no division).");
}

// ---- step 2: DataParallel against N ----
void draw_ranks_theory(const DdpSteps& steps) {
  PlotSpec spec{"Rank 0's bytes per step against N (closed forms, sent + received)",
                {"ranks N", "", true},
                {"bytes", "bytes", true},
                {},
                {}};
  PlotLine ring{"DDP: 2 x 2 (N-1)/N x gradient", series_color(0), SeriesStyle::LineAndMarkers, false, false, {}};
  PlotLine master{"DataParallel's master: (N-1) (model + rows + gradient)",
                  series_color(1),
                  SeriesStyle::LineAndMarkers,
                  false,
                  false,
                  {}};
  for (const ddp::RanksRow& row : steps.ranks) {
    if (row.n == 1) continue;  // nothing moves: no point on a log axis
    const double a = row.ring_traffic, b = row.dataparallel_traffic;
    ring.points.push_back({double(row.n), a, a, a});
    master.points.push_back({double(row.n), b, b, b});
  }
  spec.lines = {ring, master};
  spec.size = {0, rest_height(3)};
  draw_plot("ranks_theory", spec);
}

void draw_dataparallel_step(const ViewContext& ctx) {
  const DdpSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const DdpMeasured* m = measured_of(ctx);
  if (m == nullptr || !ctx.result->find_series("step_vs_n_dp")) {
    draw_ranks_theory(*steps);
    if (m != nullptr && m->on_gpu)
      return draw_note(
          "This run was on the GPU, which trains DDP only: DataParallel's master is measured on the CPU "
          "backend.");
    if (m != nullptr && m->launcher == "mpi")
      return draw_note(
          "This run's ranks were processes under mpirun, which train the chosen DDP configuration only: "
          "DataParallel and the sweep against N are measured with launcher = threads.");
    return draw_needs_run(ctx, "rank 0's bytes and waiting against N");
  }
  const RunResult& r = *ctx.result;
  const float width = ImGui::GetContentRegionAvail().x, gap = 16 * ui_scale();
  const bool side_by_side = width >= 2.6f * ImGui::CalcTextSize("DataParallel: (N-1)(2 model + rows/N)").x;
  const float plot_width = side_by_side ? (width - gap) / 2 : width;
  const std::string text =
      "The master copies the model and the rows out and gathers every gradient in, one worker after another, while "
      "the workers wait: its bytes and its copying time grow as N - 1. A DDP rank sends 2 (N-1)/N of the gradient, "
      "which levels off at twice the gradient; its wait is the all-reduce left after backward.";
  // Side by side, the text under the plots stays on screen where it can; one under the other, the second plot and
  // the text scroll into view.
  const float text_rows = (wrapped_height(text) + caveat_height(r)) / ImGui::GetFrameHeightWithSpacing();
  const float height = plot_height_leaving(side_by_side ? text_rows : 0);
  PlotSpec bytes{"Rank 0's bytes per step", {"ranks N", "", true}, {"sent + received", "bytes", false}, {}, {}};
  add_series(bytes, r, "rank0_bytes_vs_n_dp", series_color(1));
  add_series(bytes, r, "rank0_bytes_vs_n_dp_theory", series_color(1));
  add_series(bytes, r, "rank0_bytes_vs_n_ddp", series_color(0));
  add_series(bytes, r, "rank0_bytes_vs_n_ddp_theory", series_color(0));
  bytes.size = {plot_width, height};
  draw_plot("bytes_vs_n", bytes);
  if (side_by_side) ImGui::SameLine(0, gap);
  PlotSpec wait{"Rank 0 per step", {"ranks N", "", true}, {"time", "us", false}, {}, {}};
  add_series(wait, r, "rank0_wait_vs_n_dp", series_color(1));
  add_series(wait, r, "rank0_wait_vs_n_ddp", series_color(0));
  add_series(wait, r, "step_vs_n_dp", series_color(3));
  add_series(wait, r, "step_vs_n_ddp", series_color(2));
  wait.size = {plot_width, height};
  draw_plot("wait_vs_n", wait);
  draw_note(text);
  busy_machine_caveat(r);
}

// ---- step 3: DDP's step ----
void draw_ddp_step(const ViewContext& ctx) {
  const DdpSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const ddp::DdpTheory& t = steps->theory;
  const DdpMeasured* m = measured_of(ctx);
  draw_heading(fmt::format("{} weights, {} of fp32 gradient; N = {}", format_count(double(t.parameters)),
                           format_bytes_binary(double(t.gradient_bytes)), steps->chosen.ranks));
  std::vector<std::pair<std::string, std::string>> rows{
      {"ring: bytes each rank sends per step, 2 (N-1)/N x wire gradient", format_bytes_both(t.ring_closed_form_bytes)},
      {"the same, bucket by bucket (theory bytes_per_rank_per_step)",
       format_bytes_both(double(t.bytes_per_rank_per_step))},
  };
  if (m) {
    rows.push_back(
        {"counted by rank 0's links (comm_bytes)", fmt::format("{} {}", format_bytes_both(double(m->comm_bytes)),
                                                               m->comm_bytes_match_theory ? "= theory" : "!= theory")});
    rows.push_back({"step (slowest rank, median)", us_text(m->step_us)});
    rows.push_back({"  compute: forward, backward, optimizer", us_text(m->compute_us)});
    rows.push_back({"  exposed communication: after backward, waiting", us_text(m->exposed_comm_us)});
    rows.push_back({"  idle: waiting for other ranks or a core", us_text(m->idle_us)});
    rows.push_back({"time inside all-reduces / of it during backward",
                    fmt::format("{} / {}", us_text(m->comm_us), us_text(m->hidden_comm_us))});
    rows.push_back({"overlap_fraction (hidden / all communication)", fmt::format("{:.2f}", m->overlap_fraction)});
    rows.push_back(
        {"weights vs one rank on the full batch (max rel err)",
         fmt::format("{:.2e}{}", m->max_rel_err_vs_single, m->bit_identical_vs_single ? ", bit-identical" : "")});
    rows.push_back({"every rank's replica bit-identical to rank 0's", m->replicas_identical ? "yes" : "NO"});
    if (steps->chosen.mode == ddp::SyncMode::DataParallel)  // the run's mode: `m` is only a run of these parameters
      rows.front().first = "(the run was mode = dataparallel: its bytes are the master's copies) ring, 2 (N-1)/N";
  }
  draw_wide_value_table("ddp_values", rows);
  if (m == nullptr) draw_needs_run(ctx, "the step's compute, exposed communication and idle");
  draw_note(
      "Each rank keeps its replica for the whole run: only gradients move. After the all-reduce every rank holds the "
      "same sum and takes the same SGD step, so the replicas stay identical bit for bit. With N > 1 the weights do "
      "not equal one rank's bit for bit: one rank sums each gradient over all rows inside one matrix product, in "
      "another order.");
  draw_note(
      "Correction to the slide that calls DDP \"maximum training speed (no communication overhead)\": the all-reduce "
      "moves about twice the gradient per rank per step, as ZeRO stages 1 and 2 do; overlap can hide it, not remove "
      "it.");
  if (ctx.result) busy_machine_caveat(*ctx.result);
}

// ---- step 4: buckets ----
// The flat gradient as a strip: layer boundaries as ticks, buckets as alternating blocks numbered in reduction order.
void draw_bucket_strip(const DdpSteps& steps) {
  const float s = ui_scale(), width = ImGui::GetContentRegionAvail().x, h = ImGui::GetTextLineHeight() * 1.6f;
  const double total = double(steps.theory.parameters);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(o, {o.x + width, o.y + h}, with_alpha(muted_text_color(), 0.15f));
  auto x_of = [&](double element) { return o.x + float(element / total) * width; };
  for (std::size_t b = 0; b < steps.buckets.size(); ++b) {
    const ddp::Bucket& k = steps.buckets[b];
    const float x0 = x_of(double(k.begin)), x1 = x_of(double(k.end));
    const ImU32 color = b % 2 == 0 ? series_color(4) : series_color(5);
    draw->AddRectFilled({x0, o.y}, {x1, o.y + h}, with_alpha(color, 0.55f));
    const std::string label = fmt::format("{}", b);
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    if (x1 - x0 > size.x + 4 * s)
      draw->AddText({(x0 + x1 - size.x) / 2, o.y + (h - size.y) / 2}, text_color(), label.c_str());
  }
  const int layers = steps.chosen.shape.layers;
  for (int l = 1; l < layers && layers <= 256; ++l) {
    const float x = x_of(double(l) / layers * total);
    // Short marks at the edges, clear of the bucket numbers in the middle.
    draw->AddLine({x, o.y - 3 * s}, {x, o.y + 0.22f * h}, text_color(), 1.5f * s);
    draw->AddLine({x, o.y + 0.78f * h}, {x, o.y + h + 3 * s}, text_color(), 1.5f * s);
  }
  ImGui::Dummy({width, h + 4 * s});
  draw_note(
      steps.buckets.empty()
          ? fmt::format("{} buckets: too many to draw.", steps.theory.buckets)
          : fmt::format("The flat gradient, layer 0 on the left: {} layers (ticks), {} buckets of {}, numbered in "
                        "reduction order.",
                        layers, steps.buckets.size(), format_bytes_binary(double(steps.theory.bucket_bytes))));
}

// Before a run: the step simulated from assumed rates.
void draw_simulated_buckets(const ViewContext& ctx, const DdpSteps& steps) {
  static TimelineViewState simulated_view;
  std::vector<const Timeline*> simulated;
  for (const Timeline& t : steps.simulated) simulated.push_back(&t);
  const float h = std::max(ImGui::GetContentRegionAvail().y - 5 * ImGui::GetFrameHeightWithSpacing(),
                           ImGui::GetTextLineHeight() * 8);
  draw_timelines("ddp_simulated", simulated, false, simulated_view, {0, h});
  draw_note(
      "Simulated from assumed rates, one rank (all are alike here). PyTorch's DistributedDataParallel caps buckets "
      "at 25 MiB (bucket_cap_mb) and makes the first one 1 MiB (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES), so "
      "the first all-reduce starts early.");
  draw_needs_run(ctx, "the timeline and step time against bucket size");
}

// Where and how the ranks ran, in a sentence or two.
std::string where_ranks_ran(const DdpMeasured& m) {
  if (m.launcher == "mpi")
    return fmt::format(
        "{}{}. Each process has {}; each rank's times start at its own step start, after a barrier. Only the chosen "
        "bucket was trained (the sweeps need launcher=threads).",
        m.placement.empty() ? "" : std::string(1, char(std::toupper(m.placement[0]))),
        m.placement.empty() ? "" : m.placement.substr(1),
        m.on_gpu ? "a compute stream and a communication stream running the lab's ring over CUDA IPC"
                 : "a compute thread and a communication thread running the lab's ring over MPI");
  // Where the ranks are placed on GPUs is the run's first note, just below: not repeated here.
  if (m.on_gpu)
    return "On the GPU each rank has a compute stream and a communication stream; each rank's times start at its "
           "own step start.";
  if (m.communication_core_set_aside.value_or(false))
    return fmt::format(
        "Ranks as threads on this CPU: with no core to spare, one of its {} is kept for the communication threads, "
        "as a GPU's all-reduce has a stream of its own, and the ranks' compute threads share the rest. So an "
        "all-reduce runs during backward for real, and each rank computes more slowly than alone.",
        m.hardware_threads);
  return fmt::format(
      "Ranks as threads on this CPU: {} threads share {} hardware threads, so an all-reduce that overlaps backward "
      "also takes turns with it for a core, and hiding it saves less than on GPUs, where NCCL has a stream of its "
      "own.",
      m.threads_used, m.hardware_threads);
}

std::string buckets_note(const DdpMeasured& m) {
  if (m.launcher == "mpi")
    return fmt::format("overlap_fraction {:.2f} at the chosen bucket, step {}. {}", m.overlap_fraction,
                       us_text(m.step_us), where_ranks_ran(m));
  return fmt::format(
      "overlap_fraction {:.2f} at the chosen bucket; the fastest step came with buckets of {} ({}), one bucket took "
      "{}. {}",
      m.overlap_fraction, format_bytes_binary(double(m.best_bucket_bytes)), us_text(m.best_bucket_step_us),
      us_text(m.one_bucket_step_us), where_ranks_ran(m));
}

void span_tooltip(const Timeline& timeline, const TimelineHover& hover) {
  if (hover.timeline < 0 || hover.span < 0) return;
  const TimelineSpan& span = timeline.spans[std::size_t(hover.span)];
  ImGui::BeginTooltip();
  ImGui::Text("%s: %.0f us to %.0f us (%.0f us)", span.label.c_str(), span.start, span.end, span.end - span.start);
  ImGui::EndTooltip();
}

// `steps` are those of the run's own parameters: the caller draws only a run that is not stale.
void draw_step_vs_bucket(const RunResult& r, const DdpSteps& steps) {
  PlotSpec spec{fmt::format("Step time against bucket size (DDP, fp32, N = {})", steps.chosen.ranks),
                {"bucket size", "bytes", true},
                {"time", "us", false},
                {},
                {}};
  add_series(spec, r, "step_vs_bucket", series_color(0));
  add_series(spec, r, "exposed_vs_bucket", series_color(1));
  add_series(spec, r, "comm_vs_bucket", series_color(2));
  // Tiny buckets cost many times the rest (a fixed cost per all-reduce): over a decade apart, a log axis keeps the
  // large buckets' differences readable.
  double y_lo = 0, y_hi = 0;
  for (const PlotLine& line : spec.lines)
    for (const SeriesPoint& p : line.points)
      if (p.y > 0) {
        y_lo = y_lo > 0 ? std::min(y_lo, p.y) : p.y;
        y_hi = std::max(y_hi, p.y);
      }
  spec.y.log = y_lo > 0 && y_hi > 10 * y_lo;
  spec.guides.push_back({true, double(steps.theory.bucket_bytes), "chosen", highlight_color()});
  spec.size = {0, main_figure_height()};
  draw_plot("step_vs_bucket", spec);
}

void draw_buckets_step(const ViewContext& ctx) {
  const DdpSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  draw_bucket_strip(*steps);
  const DdpMeasured* m = measured_of(ctx);
  if (m == nullptr || ctx.result->timelines.empty()) return draw_simulated_buckets(ctx, *steps);
  const RunResult& r = *ctx.result;
  std::vector<const Timeline*> timelines;  // the chosen bucket's run first, then one bucket's
  for (const Timeline& t : r.timelines)
    if (t.name.rfind("DataParallel", 0) != 0) timelines.push_back(&t);
  // The chosen bucket's step is the main figure, fitted to its own run; one bucket's step, fitted to its own, comes
  // after the plot, unless the runs share one time axis (then both are in one widget).
  const bool shared_axis = timelines.size() > 1 && shared_time_axis_toggle(ctx, "ddp_buckets");
  if (shared_axis) {
    static TimelineViewState view;
    const TimelineHover hover = draw_timelines("ddp_timeline", timelines, false, view, {0, main_figure_height()});
    if (hover.timeline >= 0) span_tooltip(*timelines[std::size_t(hover.timeline)], hover);
  } else if (!timelines.empty()) {
    span_tooltip(*timelines.front(), draw_timeline_alone("ddp_chosen", *timelines.front(), main_figure_height()));
  }
  draw_note(buckets_note(*m));
  busy_machine_caveat(r);
  draw_step_vs_bucket(r, *steps);
  if (!shared_axis)
    for (std::size_t i = 1; i < timelines.size(); ++i)
      span_tooltip(*timelines[i], draw_timeline_alone(fmt::format("ddp_other_{}", i), *timelines[i],
                                                      kSecondFigureShare * main_figure_height()));
}

// ---- step 5: accumulation and 16-bit gradients ----
void draw_accumulate_step(const ViewContext& ctx) {
  const DdpSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  std::vector<std::vector<std::string>> theory_rows;
  for (const ddp::WireRow& w : steps->wire)
    theory_rows.push_back({w.grad_dtype, fmt::format("{}", w.accumulate), format_bytes_binary(w.per_optimizer_step),
                           format_bytes_binary(w.per_micro_step)});
  const std::vector<std::string> theory_headers{"gradients on the wire", "accumulate k", "per optimizer step",
                                                "per micro-step"};
  const DdpMeasured* m = measured_of(ctx);
  if (m == nullptr) {
    draw_heading(fmt::format("Bytes each rank sends, closed forms, N = {}", steps->chosen.ranks));
    draw_wide_columns_table("accumulate_theory", theory_headers, theory_rows);
    return draw_needs_run(ctx, "every variant's bytes and weights");
  }
  draw_heading(fmt::format("Every variant trained, against one rank on the full batch (batch {}, {} timed steps)",
                           steps->chosen.global_batch, m->timed_steps));
  std::vector<std::vector<std::string>> rows;
  for (const ddp::Variant& v : m->variants)
    rows.push_back(
        {v.mode + (v.chosen ? " (chosen)" : ""), v.grad_dtype, fmt::format("{}", v.accumulate),
         fmt::format("{}", v.ranks), v.bucket_bytes ? format_bytes_binary(double(v.bucket_bytes)) : "-",
         us_text(v.step_us), format_bytes_binary(double(v.comm_bytes)),
         format_bytes_binary(double(v.comm_bytes) / v.accumulate),
         fmt::format("{:.2e}{}", v.max_rel_err_vs_single, v.bit_identical_vs_single ? " (bit-identical)" : "")});
  draw_wide_columns_table("variants",
                          {"mode", "gradients", "k", "N", "bucket", "step", "rank 0 sent per step", "per micro-step",
                           "weights' max rel err"},
                          rows);
  draw_note(
      "Every variant trains the same batches for the same steps as one rank on the full batch. With accumulation "
      "each optimizer step is k micro-steps of B / (N k) rows per rank, and only the last one all-reduces: the bytes "
      "per optimizer step stay, the bytes per micro-step fall k-fold (for a fixed micro-batch, k times fewer bytes "
      "per sample, at the cost of a k times larger batch). 16-bit gradients halve every all-reduce; each hop of the "
      "ring rounds its sum to 16 bits, which is where their error comes from (bf16 keeps 8 significant bits, fp16 "
      "11).");
  ImGui::Spacing();
  draw_heading(fmt::format("The closed forms, N = {}", steps->chosen.ranks));
  draw_wide_columns_table("accumulate_theory", theory_headers, theory_rows);
  busy_machine_caveat(*ctx.result);
}

}  // namespace

const StepViews& ddp_step_views() {
  static const StepViews views{{"split", draw_split_step, StepShows::TheoryOnly},
                               {"dataparallel", draw_dataparallel_step},
                               {"ddp", draw_ddp_step},
                               {"buckets", draw_buckets_step},
                               {"accumulate", draw_accumulate_step}};
  return views;
}

}  // namespace dlsys::gui
