// Views of the mixture-of-experts lesson: the load per expert against the capacity, the dispatch's bytes between
// ranks and each phase's time beside an all-reduce of the same tensor, the layer against the dense MLP of the same
// active parameters, and two micro-batches in sequence against overlapped. They draw the lesson's theory and its run.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/export/span_colors.h"
#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/common/process_placement.h"
#include "lessons/moe/moe_steps.h"
#include "lessons/moe/moe_values.h"

namespace dlsys::gui {

namespace {

using moe_lesson::MoeMeasured;
using moe_lesson::MoeSteps;
using moe_lesson::MoeTheory;

const MoeSteps* steps_of(const ViewContext& ctx) { return step_data_as<MoeSteps>(ctx); }

const MoeMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result && !ctx.result_stale ? ctx.result->measured_as<MoeMeasured>() : nullptr;
}

ImU32 span_imgui_color(const char* kind, int micro_batch) {
  const Rgb c = span_color(kind, micro_batch);
  return IM_COL32(c.r, c.g, c.b, 255);
}

// What sharing cores does to the timings, in one sentence, where it applies.
// `threads`: what ranks as threads of one process run; ranks as processes (launcher=mpi) are named as such.
void emulated_caveat(const ViewContext& ctx, bool shares_cores, int threads, int hardware_threads) {
  if (!shares_cores) return;
  const std::string who = ran_as_processes(*ctx.result) ? std::string("The rank processes on this host share its")
                                                        : fmt::format("{} rank threads share", threads);
  draw_warning_band(fmt::format(
      "{} {} hardware threads: ranks take turns on cores (emulated), so phases stretch and waiting ranks hold cores "
      "the others need.",
      who, hardware_threads));
}

// ---- step router ----

// A column per expert: the assignments routed to it (outline), those kept (filled), the capacity N C across all, and
// with the balance loss on, where the untrained router put them (a tick).
void draw_load_columns(const MoeTheory& t, const MoeMeasured& m, float height) {
  const float s = ui_scale();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x, line = ImGui::GetTextLineHeightWithSpacing();
  double top = double(t.capacity_total);
  for (std::int64_t w : m.wanted) top = std::max(top, double(w));
  for (std::int64_t w : m.wanted_untrained) top = std::max(top, double(w));
  top *= 1.1;
  const float axis_w = ImGui::CalcTextSize("000000").x + 6 * s;
  const float x_left = o.x + axis_w, plot_w = width - axis_w, y_top = o.y + line, y_bottom = o.y + height - line;
  const auto y_of = [&](double v) { return y_bottom - float(v / top) * (y_bottom - y_top); };
  const int experts = int(m.wanted.size());
  const float column = plot_w / float(std::max(1, experts)), gap = std::min(4 * s, column * 0.2f);
  draw->AddText({o.x, o.y}, text_color(), "assignments (all ranks)");
  draw->AddLine({x_left, y_bottom}, {x_left + plot_w, y_bottom}, grid_color());
  for (int e = 0; e < experts; ++e) {
    const float x0 = x_left + e * column + gap / 2, x1 = x0 + column - gap;
    const double wanted = double(m.wanted[std::size_t(e)]), kept = double(m.kept[std::size_t(e)]);
    draw->AddRectFilled({x0, y_of(kept)}, {x1, y_bottom}, series_color(0));
    if (wanted > kept) draw->AddRectFilled({x0, y_of(wanted)}, {x1, y_of(kept)}, with_alpha(warning_color(), 0.55f));
    draw->AddRect({x0, y_of(wanted)}, {x1, y_bottom}, text_color());
    if (!m.wanted_untrained.empty()) {
      const float y = y_of(double(m.wanted_untrained[std::size_t(e)]));
      draw->AddLine({x0, y}, {x1, y}, series_color(2), 3 * s);
    }
    const std::string label = std::to_string(e);
    if (column > ImGui::CalcTextSize(label.c_str()).x + 2 * s)
      draw->AddText({x0, y_bottom + 2 * s}, muted_text_color(), label.c_str());
  }
  const float y_cap = y_of(double(t.capacity_total));
  draw->AddLine({x_left, y_cap}, {x_left + plot_w, y_cap}, highlight_color(), 2 * s);
  const std::string cap = fmt::format("capacity N C = {}", t.capacity_total);
  draw->AddText({x_left + plot_w - ImGui::CalcTextSize(cap.c_str()).x, y_cap - line}, highlight_color(), cap.c_str());
  for (double v : {0.0, top / 2.2, top / 1.1}) {
    const std::string tick = short_number_text(std::round(v));
    draw->AddText({o.x, y_of(v) - line / 2}, muted_text_color(), tick.c_str());
  }
  ImGui::Dummy({width, height});
}

void draw_router(const ViewContext& ctx) {
  const MoeSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MoeTheory& t = steps->theory;
  draw_heading(
      fmt::format("E = {} experts, k = {}, {} tokens a rank on N = {}: capacity C = ceil({} x {} x {} / {}) = "
                  "{} a rank, N C = {} in all",
                  t.experts, t.top_k, t.tokens, t.ranks, short_number_text(t.capacity_factor), t.tokens, t.top_k,
                  t.experts, t.capacity, t.capacity_total));
  const MoeMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "route every rank's tokens and count the load per expert");
  std::vector<ColorKeyEntry> key{{series_color(0), "kept"},
                                 {with_alpha(warning_color(), 0.55f), "dropped (over capacity)"},
                                 {highlight_color(), "capacity N C"}};
  if (!m->wanted_untrained.empty()) key.push_back({series_color(2), "routed before the router's training"});
  draw_color_key(key);
  begin_figure();
  draw_load_columns(t, *m, plot_height_leaving(3));
  end_figure("load per expert");
  std::vector<std::pair<std::string, std::string>> rows{
      {"dropped assignments",
       fmt::format("{} of {} ({})", m->dropped, t.assignments_per_rank * t.ranks, percent_text(m->dropped_share))},
      {"balance loss E sum f_i P_i (1 even, E one expert)",
       m->balance_training.empty() ? format_number(m->balance_loss, 4)
                                   : fmt::format("{} -> {} after {} steps", format_number(m->balance_loss_untrained, 4),
                                                 format_number(m->balance_loss, 4), m->balance_training.size() - 1)}};
  draw_value_table("moe_router", rows);
  const Series* training = ctx.result->find_series("balance_training");
  if (training == nullptr) return;
  PlotSpec spec{"The balance loss while the router trains on it", {"training step", ""}, {"E sum f_i P_i", ""}, {}, {}};
  spec.lines.push_back(line_from_series(*training, series_color(2)));
  spec.guides.push_back({false, t.balance_loss_even, "even load", highlight_color()});
  spec.y.min = 0;
  spec.size = {0, kSecondFigureShare * main_figure_height()};
  draw_plot("moe_balance_training", spec);
}

// ---- step alltoall ----

// The dispatch's bytes as an N x N matrix: row = sender, column = receiver; the diagonal never leaves the rank.
void draw_byte_matrix(const MoeMeasured& m, int n, float height) {
  const float s = ui_scale();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float label_w = ImGui::CalcTextSize("from 0").x + 8 * s;
  const float side = std::min(ImGui::GetContentRegionAvail().x * 0.55f, height - line);
  const float cell = (side - label_w) / float(n);
  double largest = 1;
  for (std::int64_t b : m.dispatch_bytes) largest = std::max(largest, double(b));
  for (int j = 0; j < n; ++j) {
    const std::string to = fmt::format("to {}", j);
    draw->AddText({o.x + label_w + j * cell + 2 * s, o.y}, muted_text_color(), to.c_str());
  }
  for (int i = 0; i < n; ++i) {
    const float y = o.y + line + i * cell;
    const std::string from = fmt::format("from {}", i);
    draw->AddText({o.x, y + cell / 2 - line / 2}, muted_text_color(), from.c_str());
    for (int j = 0; j < n; ++j) {
      const double bytes = double(m.dispatch_bytes[std::size_t(i * n + j)]);
      const ImVec2 a{o.x + label_w + j * cell, y}, b{a.x + cell - 2 * s, y + cell - 2 * s};
      const ImU32 fill = i == j ? with_alpha(muted_text_color(), 0.25f)
                                : with_alpha(series_color(1), 0.15f + 0.85f * float(bytes / largest));
      draw->AddRectFilled(a, b, fill);
      const std::string text = i == j ? "local" : format_bytes_binary(bytes);
      if (ImGui::CalcTextSize(text.c_str()).x < cell - 4 * s)
        draw->AddText({a.x + 2 * s, a.y + cell / 2 - line / 2}, text_color(), text.c_str());
    }
  }
  ImGui::Dummy({side, line + n * cell});
}

void draw_alltoall(const ViewContext& ctx) {
  const MoeSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MoeTheory& t = steps->theory;
  const MoeMeasured* m = measured_of(ctx);
  draw_note(
      "All-to-all: each rank sends each other rank a block of its own and nothing is summed. All-reduce: every rank "
      "ends with the same sum. A ring all-reduce cannot do an all-to-all's job, whatever the course suggests.");
  if (m == nullptr) {
    draw_value_table(
        "moe_a2a_theory",
        {{"dispatch a rank: tokens x k x H x 4", format_bytes_both(t.dispatch_bytes_per_rank)},
         {"off-rank, even load: x (N-1)/N", format_bytes_both(t.dispatch_off_rank_bytes)},
         {"ring all-reduce of that tensor: x 2 (N-1)/N", format_bytes_both(t.all_reduce_bytes_per_rank)},
         {"DeepEP low-latency dispatch (FP8 + scales)", fmt::format("{:.0f} B", t.deepep_dispatch_bytes)}});
    return draw_needs_run(ctx, "run the dispatch and combine all-to-alls and count their bytes");
  }
  // The phases as bars (five rows still read at twice the text size); the counts' exchange, short, in the table.
  std::vector<Bar> bars;
  std::string counts_phase;
  for (const moe_lesson::PhaseMeasured& ph : m->phases) {
    const bool comm = ph.phase == "dispatch" || ph.phase == "combine";
    if (ph.phase == "counts") {
      counts_phase =
          fmt::format("{}, {} a rank", format_duration_us(ph.time.us), format_bytes_binary(ph.bytes_per_rank));
      continue;
    }
    bars.push_back({ph.phase, ph.time.us, comm ? span_imgui_color("all_to_all", 0) : span_imgui_color("compute", 0),
                    fmt::format("{}{}", format_duration_us(ph.time.us),
                                comm ? fmt::format(", {} a rank", format_bytes_binary(ph.bytes_per_rank)) : "")});
  }
  draw_bars(bars, {.title = "the phases of a forward (median, all ranks)", .height = main_figure_height()});
  // On emulated wires each bar also says what its bytes take on the wire by the closed form (even load).
  const auto on_wire = [&](double wire_us) {
    return t.link_gbps > 0 ? fmt::format("; wire {}", format_duration_us(wire_us)) : std::string();
  };
  const std::string dispatch_wire =
      m->dispatch_wire_busiest_us > 0
          ? fmt::format("; wire: busiest rank {}, even load {}", format_duration_us(m->dispatch_wire_busiest_us),
                        format_duration_us(t.dispatch_wire_us))
          : on_wire(t.dispatch_wire_us);
  draw_bars(
      {{"dispatch (all-to-all)", m->dispatch_alone.us, span_imgui_color("all_to_all", 0),
        fmt::format("{}, {} a rank{}", format_duration_us(m->dispatch_alone.us),
                    format_bytes_binary(m->dispatch_bytes_sent_per_rank), dispatch_wire)},
       {"all-reduce, same size", m->all_reduce.us, series_color(1),
        fmt::format("{}, {} a rank{}", format_duration_us(m->all_reduce.us),
                    format_bytes_binary(m->all_reduce_bytes_per_rank), on_wire(t.all_reduce_wire_us))}},
      {.title = "each alone, repeated with warm caches", .height = kSecondFigureShare * main_figure_height() / 2});
  begin_figure();
  draw_heading("dispatch bytes, sender -> receiver (measured)");
  draw_byte_matrix(*m, m->ranks, kSecondFigureShare * main_figure_height());
  end_figure("dispatch bytes between ranks");
  draw_value_table(
      "moe_a2a",
      {{"the counts' all-to-all (E/N numbers to each peer)", counts_phase},
       {"dispatch on the links a rank (measured)", format_bytes_both(m->dispatch_bytes_sent_per_rank)},
       {"the routing's rows for other ranks' experts",
        fmt::format("{} ({})", format_bytes_both(m->dispatch_bytes_routed_per_rank),
                    m->bytes_match_routing ? "equal at every rank" : "DIFFERENT")},
       {"even load, nothing dropped: T k H 4 (N-1)/N", format_bytes_both(t.dispatch_off_rank_bytes)},
       {"all-reduce a rank: measured, 2 (N-1)/N T k H 4",
        fmt::format("{}, {}", format_bytes_both(m->all_reduce_bytes_per_rank),
                    format_bytes_both(t.all_reduce_bytes_per_rank))},
       {"bus factors: all-to-all, all-reduce",
        fmt::format("{}, {}", format_number(t.all_to_all_bus_factor, 4), format_number(t.all_reduce_bus_factor, 4))}});
  emulated_caveat(ctx, m->emulated, t.ranks, m->hardware_threads);
}

// ---- step dense ----

void draw_dense(const ViewContext& ctx) {
  const MoeSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MoeTheory& t = steps->theory;
  const MoeMeasured* m = measured_of(ctx);
  if (m != nullptr)
    draw_bars({{"MoE layer (6 phases)", m->moe_us, series_color(0),
                fmt::format("{}, {} GFLOP/s", format_duration_us(m->moe_us), format_number(m->moe_gflops, 3))},
               {"dense MLP", m->dense.us, series_color(3),
                fmt::format("{}, {} GFLOP/s", format_duration_us(m->dense.us), format_number(m->dense_gflops, 3))}},
              {.title = "time of a forward on every rank's tokens (measured, median)", .height = main_figure_height()});
  else
    draw_needs_run(ctx, "time the layer and the dense MLP on the same tokens");
  // The closed forms: the main figure before a run, under the times after one.
  const float figure = (m != nullptr ? kSecondFigureShare : 1.0f) * main_figure_height() / 2;
  draw_bars(
      {{"MoE layer", double(t.moe_parameters), series_color(0),
        fmt::format("{} ({} active a token)", format_count(double(t.moe_parameters)),
                    format_count(double(t.active_parameters)))},
       {"dense H -> k F -> H", double(t.dense_parameters), series_color(3), format_count(double(t.dense_parameters))}},
      {.title = "parameters", .height = figure});
  draw_bars({{"MoE layer", t.moe_flop_per_token, series_color(0),
              fmt::format("{}: k 4 H F + 2 H E", format_count(t.moe_flop_per_token))},
             {"dense", t.dense_flop_per_token, series_color(3),
              fmt::format("{}: 4 H k F", format_count(t.dense_flop_per_token))}},
            {.title = "FLOP a token (nothing dropped)", .height = figure});
  if (m == nullptr) return;
  draw_note(fmt::format(
      "FLOP done: MoE {} (dropped assignments cost nothing), dense {}. The MoE also pays for routing, copies and two "
      "all-to-alls, and runs E/N pairs of narrower GEMMs per rank (about {} rows by F = {} with an even load) where "
      "the dense MLP runs one pair ({} rows by k F = {}).",
      format_count(m->moe_flop), format_count(m->dense_flop), format_count(t.rows_per_expert), t.ffn, t.tokens,
      t.dense_ffn));
  emulated_caveat(ctx, m->emulated, t.ranks, m->hardware_threads);
}

// ---- step overlap ----

// What carried the all-to-alls: MPI between processes, emulated wires, or plain copies between threads.
std::string links_note(const RunResult& result, const MoeTheory& t) {
  if (ran_as_processes(result))
    return "The ranks are processes: their all-to-alls go through MPI at this machine's speed (link_gbps emulates "
           "wires between rank threads only).";
  if (t.link_gbps > 0)
    return fmt::format(
        "The links are emulated wires of {} GB/s: a block is copied, then its bytes take their time on the wire while "
        "the rank's core computes, as a GPU's all-to-all runs on links and copy engines beside its SMs.",
        format_number(t.link_gbps, 4));
  return "The links are memory copies (link_gbps = 0): an all-to-all takes a core as the experts do, so the overlap "
         "gains only the time ranks wait for each other.";
}

void draw_overlap(const ViewContext& ctx) {
  const MoeSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MoeTheory& t = steps->theory;
  const MoeMeasured* m = measured_of(ctx);
  // Ranks as processes skip the overlap where MPI allows no calls from a second thread; the run's note says so.
  if (m != nullptr && ctx.result->timelines.empty() && ran_as_processes(*ctx.result))
    return draw_note(
        "Two micro-batches were not run: their communication thread needs MPI calls from a second "
        "thread, which this run's MPI library did not allow (its notes name the level it provided).");
  if (m == nullptr || ctx.result->timelines.size() < 2)
    return draw_needs_run(ctx, "run two micro-batches in sequence and overlapped");
  draw_value_table("moe_overlap",
                   {{"in sequence, overlapped (medians)",
                     fmt::format("{}, {} (x{})", format_duration_us(m->sequential.us),
                                 format_duration_us(m->overlapped.us), format_number(m->overlap_speedup, 3))},
                    {"overlapped, if the two lanes never slowed each other (from the phases)",
                     format_duration_us(m->ideal_overlapped_us)}});
  draw_timeline_alone("moe_overlapped", ctx.result->timelines[1], main_figure_height());
  draw_timeline_alone("moe_sequence", ctx.result->timelines[0], kSecondFigureShare * main_figure_height());
  draw_note(
      "Compute spans: route, experts and finish; all-to-all spans: counts, dispatch and combine; A and B name the "
      "micro-batches.");
  draw_note(links_note(*ctx.result, t));
  emulated_caveat(ctx, m->overlap_emulated, 2 * t.ranks, m->hardware_threads);
}

}  // namespace

const StepViews& moe_step_views() {
  static const StepViews views{
      {"router", draw_router}, {"alltoall", draw_alltoall}, {"dense", draw_dense}, {"overlap", draw_overlap}};
  return views;
}

}  // namespace dlsys::gui
