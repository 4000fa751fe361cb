// Views of the serving lesson: the real model's passes on this machine's roofline, KV bytes per decode step, Gantt
// charts of the batch slots under static, adaptive and continuous batching with their latency-throughput curves, the
// KV budget's count, and speculative decoding beside its formula.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/figure_size.h"
#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/serving/serving_lesson.h"

namespace dlsys::gui {

namespace {

using serving::PolicyMeasured;
using serving::ServingMeasured;
using serving::ServingSteps;
using serving::ServingTheory;

const ServingSteps* steps_of(const ViewContext& ctx) { return step_data_as<ServingSteps>(ctx); }
const ServingMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->measured_as<ServingMeasured>() : nullptr;
}

// A band the reader cannot miss, for what a busy machine did to this lesson's numbers.
void busy_band(const ViewContext& ctx) {
  if (!ctx.result || !ctx.result->backend.conditions.disturbed()) return;
  draw_warning_band(
      "What the busy core did here: the policies shared the same load in the same run, so their throughput ratio "
      "still compares, but every latency and percentile includes waiting for a core.");
}

// ---- Gantt chart of batch slots ----

ImU32 request_color(int id) { return series_color(id % 6); }

// The Gantt chart's legend: what the chart holds.
FigureKey gantt_legend(const Timeline& t) {
  bool any_prefill = false, any_pad = false;
  for (const TimelineSpan& span : t.spans) {
    any_prefill = any_prefill || span.kind == "prefill";
    any_pad = any_pad || span.kind == "pad";
  }
  FigureKey legend;
  if (any_prefill) legend.entries.push_back({request_color(0), "prefill (first token)"});
  legend.entries.push_back({with_alpha(request_color(0), 0.45f), "decode, one colour per request"});
  if (any_pad) legend.entries.push_back({0, "padding: computed, thrown away", true});
  return legend;
}

// The lanes' area of the chart and the run's end, which maps time to x.
struct GanttArea {
  float x0 = 0, x1 = 0, y0 = 0, y1 = 0, lane_h = 0;
  double end = 1;
  float x_of(double v) const { return x0 + float(v / end) * (x1 - x0); }
};

// One bar per span; returns the span under the mouse, if any.
const TimelineSpan* draw_gantt_spans(ImDrawList* draw, const Timeline& t, const GanttArea& g, bool hovered) {
  const float s = ui_scale();
  const TimelineSpan* under = nullptr;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (const TimelineSpan& span : t.spans) {
    const float ly = g.y0 + span.lane * g.lane_h + std::min(2 * s, g.lane_h * 0.1f);
    const float lh = g.lane_h - 2 * std::min(2 * s, g.lane_h * 0.1f);
    ImVec2 a{g.x_of(span.start), ly}, b{std::max(g.x_of(span.end), g.x_of(span.start) + 1.0f), ly + lh};
    const ImU32 color = request_color(std::max(0, span.micro_batch));
    if (span.kind == "pad") {
      draw->AddRectFilled(a, b, with_alpha(muted_text_color(), 0.10f));
      draw_hatching(draw, a, b, with_alpha(muted_text_color(), 0.6f), 5 * s);
    } else if (span.kind == "prefill") {
      draw->AddRectFilled(a, b, color);
      draw->AddLine({a.x, a.y}, {a.x, b.y}, panel_color(), 2 * s);
    } else {
      draw->AddRectFilled(a, b, with_alpha(color, 0.45f));
      draw->AddRect(a, b, with_alpha(color, 0.9f));
      draw->AddLine({a.x, a.y}, {a.x, b.y}, panel_color(), 2 * s);  // where one request hands its slot on
      const ImVec2 ts = ImGui::CalcTextSize(span.label.c_str());
      if (b.x - a.x > ts.x + 4 * s && lh >= ts.y)
        draw->AddText({(a.x + b.x - ts.x) / 2, a.y + (lh - ts.y) / 2}, text_color(), span.label.c_str());
    }
    if (hovered && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) under = &span;
  }
  return under;
}

// Five ticks under the lanes, the unit at their left.
void draw_gantt_axis(ImDrawList* draw, const GanttArea& g, const std::string& unit) {
  const float s = ui_scale();
  for (int i = 0; i <= 4; ++i) {
    const double v = g.end * i / 4;
    const float x = g.x_of(v);
    draw->AddLine({x, g.y1}, {x, g.y1 + 4 * s}, muted_text_color());
    const std::string label = fmt::format("{:.4g}", v);
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    draw->AddText({std::clamp(x - w / 2, g.x0, g.x1 - w), g.y1 + 5 * s}, muted_text_color(), label.c_str());
  }
  const float unit_w = ImGui::CalcTextSize(unit.c_str()).x;
  draw->AddText({g.x0 - unit_w - 6 * s, g.y1 + 5 * s}, muted_text_color(), unit.c_str());
}

// Lanes = batch slots, one bar per request: its prefill (solid), its decode (lighter), and padding (hatched) where
// its row was computed after it had finished. Shows a tooltip for the span under the mouse.
void draw_gantt(const char* id, const Timeline& t, ImVec2 size) {
  const float s = ui_scale();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float line_h = ImGui::GetTextLineHeight();
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  float label_w = 0;
  for (const std::string& lane : t.lanes) label_w = std::max(label_w, ImGui::CalcTextSize(lane.c_str()).x);
  GanttArea g;
  g.x0 = origin.x + label_w + 8 * s;
  g.x1 = origin.x + size.x - 4 * s;
  const FigureKey legend = gantt_legend(t);
  const float legend_h = legend.height(g.x1 - g.x0), axis_h = line_h + 8 * s, title_h = line_h + 4 * s;
  // Tall enough for every lane's label, but no taller than the view: the view scrolls to it rather than hide which
  // slot is which.
  const float least = title_h + float(std::max<std::size_t>(1, t.lanes.size())) * (line_h + 2 * s) + axis_h + legend_h;
  size.y = within_view_height(std::max(size.y, least));
  ImGui::InvisibleButton(id, size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  g.y0 = origin.y + title_h;
  g.y1 = origin.y + size.y - axis_h - legend_h;
  draw->AddText(origin, text_color(), t.name.c_str());
  draw->AddRectFilled({g.x0, g.y0}, {g.x1, g.y1}, panel_color());
  g.end = 0;
  for (const TimelineSpan& span : t.spans) g.end = std::max(g.end, span.end);
  if (g.end <= 0) g.end = 1;
  const int lanes = std::max<int>(1, int(t.lanes.size()));
  g.lane_h = (g.y1 - g.y0) / float(lanes);
  for (int l = 0; l < lanes && l < int(t.lanes.size()); ++l) {
    const float ly = g.y0 + l * g.lane_h;
    if (g.lane_h >= line_h)
      draw->AddText({origin.x, ly + (g.lane_h - line_h) / 2}, muted_text_color(), t.lanes[std::size_t(l)].c_str());
    draw->AddLine({g.x0, ly}, {g.x1, ly}, grid_color());
  }
  const TimelineSpan* under = draw_gantt_spans(draw, t, g, hovered);
  draw_gantt_axis(draw, g, t.time_unit);
  legend.draw(draw, g.x0, g.x1, g.y1 + axis_h + 2 * s);
  note_plot_area(t.name, {g.x0, g.y0}, {g.x1, g.y1}, {}, origin, {origin.x + size.x, origin.y + size.y});
  if (under != nullptr) {
    ImGui::BeginTooltip();
    ImGui::Text("request %d, %s: %.4g to %.4g %s", under->micro_batch, under->kind.c_str(), under->start, under->end,
                t.time_unit.c_str());
    ImGui::EndTooltip();
  }
}

const Timeline* measured_gantt(const ViewContext& ctx, const char* policy) {
  if (!ctx.result) return nullptr;
  for (const Timeline& t : ctx.result->timelines)
    if (t.name.rfind(policy, 0) == 0) return &t;
  return nullptr;
}

const PolicyMeasured* policy_of(const ServingMeasured& m, const std::string& policy) {
  for (const PolicyMeasured& p : m.policies)
    if (p.policy == policy) return &p;
  return nullptr;
}

std::vector<std::string> policy_row(const PolicyMeasured& p) {
  return {p.policy,
          fmt::format("{:.0f}", p.tokens_per_s),
          fmt::format("{:.1f} ms", p.ttft_ms_p50),
          fmt::format("{:.2f} ms", p.tpot_ms_p50),
          fmt::format("{:.1f} ms", p.latency_ms_p50),
          fmt::format("{:.1f} ms", p.latency_ms_p99),
          p.policy == "continuous" ? "-" : percent_text(p.padding_fraction),
          fmt::format("{:.2f}", p.mean_rows_per_step)};
}

const std::vector<std::string> kPolicyHeaders{"policy",      "tokens/s", "TTFT p50", "TPOT p50",
                                              "latency p50", "p99",      "padding",  "rows per step"};

void draw_policy_table(const ServingMeasured& m, const std::vector<std::string>& which) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& name : which)
    if (const PolicyMeasured* p = policy_of(m, name)) rows.push_back(policy_row(*p));
  draw_columns_table("policies", kPolicyHeaders, rows);
}

void draw_curves(const RunResult& r, const std::vector<std::string>& policies, ImVec2 size) {
  PlotSpec spec{
      "Latency vs throughput (dashed: p99)", {"throughput", "tokens/s", false}, {"latency", "ms", true}, {}, {}};
  const char* all[] = {"static", "adaptive", "continuous"};
  for (int i = 0; i < 3; ++i) {
    if (std::find(policies.begin(), policies.end(), all[i]) == policies.end()) continue;
    spec.lines.push_back(
        run_series_line(r, fmt::format("curve_p50_{}", all[i]), series_color(i), SeriesStyle::LineAndMarkers));
    spec.lines.push_back(run_series_line(r, fmt::format("curve_p99_{}", all[i]), series_color(i),
                                         SeriesStyle::LineAndMarkers, {.dashed = true}));
  }
  spec.size = size;
  draw_plot("curves", spec);
}

// ---- steps ----

void draw_intensity_table(const ServingSteps& s) {
  const ServingTheory& t = s.theory;
  draw_columns_table(
      "intensity", {"FLOP per byte", "16-bit weights", "fp32 (this lab)"},
      {{"prefill of the prompt", short_number_text(t.prefill_intensity), short_number_text(t.prefill_intensity_fp32)},
       {"decode, batch 1", short_number_text(t.decode_intensity_batch1),
        short_number_text(t.decode_intensity_batch1_fp32)},
       {fmt::format("decode, batch {}", s.max_batch), short_number_text(t.decode_intensity),
        short_number_text(t.decode_intensity_fp32)}});
}

void draw_prefill_step(const ViewContext& ctx) {
  const ServingSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  const ServingTheory& t = s->theory;
  draw_heading("Prefill multiplies matrices, decode multiplies vectors");
  const ServingMeasured* m = measured_of(ctx);
  if (!m) {
    draw_intensity_table(*s);
    draw_note(
        "Weights only: 2 FLOP per weight for each token in flight, over 2 bytes (16-bit) or 4 (fp32) per weight.");
    return draw_needs_run(ctx, "the real model's prefill and decode passes on this machine's roofline");
  }
  const RunResult& r = *ctx.result;
  PlotSpec spec{"Passes on the roofline of the machine that ran them",
                {"FLOP per byte of fp32 weights", "FLOP/B", true},
                {"rate", "GFLOP/s", true},
                {},
                {}};
  spec.lines.push_back(run_series_line(r, "roof", theory_color(), SeriesStyle::Line));
  spec.lines.push_back(run_series_line(r, "prefill_point", series_color(0), SeriesStyle::Markers));
  spec.lines.push_back(run_series_line(r, "decode_b1_point", series_color(1), SeriesStyle::Markers));
  spec.lines.push_back(run_series_line(r, "decode_batch_point", series_color(2), SeriesStyle::Markers));
  // The tables beside the plot; in a short window they would leave it a narrow plot whose legend and title take most
  // of its height, so the plot takes the width and the tables scroll under it.
  const bool beside = !window_is_short();
  const float side_w = ImGui::GetContentRegionAvail().x * (beside ? 0.45f : 1.0f);
  spec.size = beside ? ImVec2{ImGui::GetContentRegionAvail().x - side_w - ImGui::GetStyle().ItemSpacing.x,
                              std::max(ImGui::GetContentRegionAvail().y, 220 * ui_scale())}
                     : ImVec2{0, main_figure_height()};
  draw_plot("roofline", spec);
  if (beside) ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + side_w);
  draw_intensity_table(*s);
  std::vector<std::vector<std::string>> rows;
  for (const serving::RooflinePoint& p : m->roofline)
    rows.push_back({p.name, fmt::format("{:.3f} ms", p.ms), fmt::format("{:.1f}", p.gflops),
                    fmt::format("{:.1f}", p.roof_gflops)});
  draw_columns_table("passes", {"measured pass", "time", "GFLOP/s", "roof"}, rows);
  if (const PolicyMeasured* c = policy_of(*m, m->policy))
    draw_value_table("ttft", {{fmt::format("TTFT p50 ({})", c->policy), fmt::format("{:.1f} ms", c->ttft_ms_p50)},
                              {fmt::format("TPOT p50 ({})", c->policy), fmt::format("{:.2f} ms", c->tpot_ms_p50)}});
  if (m->device == "cuda")
    draw_note(fmt::format(
        "Roof: {:.1f} GFLOP/s and {:.1f} GB/s, GPU 0's datasheet figures. The model's weights are {}: at this size a "
        "GPU pass is a few dozen small kernel launches and a wait for its tokens, so expect every point far below "
        "the roof; the gap between batch 1 and the full batch shows what batching buys when launches, not bytes, "
        "set the time.",
        m->peak_gflops, m->bandwidth_gbps, format_bytes_both(double(t.weights_bytes))));
  else if (m->weights_flushed.value_or(false))
    draw_note(fmt::format(
        "Roof: {:.1f} GFLOP/s (OpenBLAS sgemm, best seen here) and {:.1f} GB/s (a stream that only reads, measured in "
        "this run). The model's weights ({}) are flushed from the caches before each timed pass, as a model too "
        "large for them would find its weights: decode reads every weight for a row or two of work, so it follows "
        "the slope, under it. Prefill stays below the flat roof because its matrices are small (the prompt's rows x "
        "d_model), far from the size the sgemm peak was measured at.",
        m->peak_gflops, m->bandwidth_gbps, format_bytes_both(double(t.weights_bytes))));
  else
    draw_note(fmt::format(
        "Roof: {:.1f} GFLOP/s (OpenBLAS sgemm) and {:.1f} GB/s (memcpy). This run was recorded before the lab flushed "
        "the weights ({}) between passes: they stayed in the CPU's caches, so decode could sit above the slope.",
        m->peak_gflops, m->bandwidth_gbps, format_bytes_both(double(t.weights_bytes))));
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

// The course's example: the bytes a decode step reads at the first and the 200th generated token.
void draw_context_example(const ServingTheory& t) {
  draw_heading("Every decode step reads the whole cache");
  draw_columns_table("example", {"the course's example (Llama-2-7B, 16-bit)", "keys attended", "KV bytes read"},
                     {{"generated token 1", format_count(double(t.example_first_attends)),
                       format_bytes_both(double(t.example_first_kv_bytes))},
                      {"generated token 200", format_count(double(t.example_last_attends)),
                       format_bytes_both(double(t.example_last_kv_bytes))}});
  draw_note(
      fmt::format("{} bytes of K and V per token (2 x 32 layers x 4096 x 2 bytes); the lab's model holds {} per token.",
                  format_count(double(t.example_bytes_per_token)), format_bytes_both(double(t.kv_bytes_per_token))));
}

// The context step's measured figures: the KV bytes each step reads and the step's time, against the keys attended.
void draw_context_figures(const RunResult& r, const ServingMeasured& m, const ServingTheory& t) {
  PlotSpec bytes{"KV bytes read per step", {"keys attended", "tokens", false}, {"KV read", "MB", false}, {}, {}};
  bytes.lines.push_back(run_series_line(r, "context_kv_bytes", theory_color(), SeriesStyle::Line));
  PlotSpec time{"Step time (measured)", {"keys attended", "tokens", false}, {"step", "ms", false}, {}, {}};
  time.lines.push_back(run_series_line(r, "context_step_ms", series_color(0), SeriesStyle::Markers));
  draw_plot_pair("kv_bytes", std::move(bytes), "step_time", std::move(time), plot_height_leaving(1.5f));
  if (!m.context_attended.empty())
    draw_note(fmt::format(
        "One sequence, prompt {} tokens, decoded to the end of the {}-token context. Token 1 attends over {} keys "
        "and reads {}; the last over {} keys and reads {}. The step also reads all the weights ({}), so at this size "
        "the cache's share of the time grows slowly.",
        m.context_prompt, m.context_attended.back(), m.context_attended.front(),
        format_bytes_both(double(m.context_kv_bytes.front())), m.context_attended.back(),
        format_bytes_both(double(m.context_kv_bytes.back())), format_bytes_both(double(t.weights_bytes))));
}

void draw_context_step(const ViewContext& ctx) {
  const ServingSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  const ServingTheory& t = s->theory;
  const ServingMeasured* m = measured_of(ctx);
  if (!m) {
    draw_context_example(t);
    return draw_needs_run(ctx, "one sequence decoding to the end of its context");
  }
  draw_context_and_figure([&] { draw_context_example(t); }, [&] { draw_context_figures(*ctx.result, *m, t); });
}

void draw_gantt_or_theory(const ViewContext& ctx, const char* policy, int theory_index, float height) {
  if (const Timeline* t = measured_gantt(ctx, policy)) {
    draw_gantt(policy, *t, {0, height});
    return;
  }
  const ServingSteps* s = steps_of(ctx);
  if (s && theory_index >= 0 && theory_index < int(s->schedules.size()))
    draw_gantt(policy, s->schedules[std::size_t(theory_index)], {0, height});
}

void draw_static_step(const ViewContext& ctx) {
  const ServingSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  draw_heading("Static batching: the batch waits for its longest request");
  const ServingMeasured* m = measured_of(ctx);
  draw_gantt_or_theory(ctx, "static", 0, plot_height_leaving(m ? 5.5f : 3.0f));
  if (!m) {
    draw_note(
        fmt::format("Before a run: the stream's lengths with every request waiting at the start, in token steps. "
                    "Padding from the lengths alone: {:.1f}% of the slots.",
                    100 * s->theory.expected_static_padding));
    return draw_needs_run(ctx, "the stream served with static batching");
  }
  draw_policy_table(*m, {"static"});
  if (const PolicyMeasured* p = policy_of(*m, "static"))
    draw_note(
        fmt::format("Padding measured {:.1f}% of the slot-tokens; from the stream's lengths in batches of {} (closed "
                    "form) {:.1f}%. Answers are returned when their batch ends; TTFT counts the first token when it is "
                    "computed, as a streaming server would send it.",
                    100 * p->padding_fraction, s->max_batch, 100 * p->padding_fraction_closed_form));
  busy_band(ctx);
}

void draw_adaptive_step(const ViewContext& ctx) {
  draw_heading("Adaptive batching: a full batch or a timer, whichever comes first");
  const ServingMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run(ctx, "the stream served with adaptive batching");
  const RunResult& r = *ctx.result;
  // The curves the caption reads are the main figure; the knobs beside them (under them in a short window, where
  // half the width leaves each plot a sliver under its title and legend), then the Gantt chart of the chosen rate
  // and the tables.
  const float plot_h = main_figure_height();
  const bool beside = !window_is_short();
  const float width = beside ? ImGui::GetContentRegionAvail().x * 0.5f - ImGui::GetStyle().ItemSpacing.x : 0;
  draw_curves(r, {"static", "adaptive"}, {width, plot_h});
  if (beside) ImGui::SameLine();
  ImGui::BeginGroup();
  PlotSpec knobs{"Adaptive's knobs at 1/4 of the rate",
                 {"throughput", "tokens/s", false},
                 {"latency", "ms", false},
                 {},
                 {},
                 {width, plot_h * (beside ? 0.55f : kSecondFigureShare)}};
  knobs.lines.push_back(run_series_line(r, "adaptive_knobs_p50", series_color(1), SeriesStyle::Markers));
  knobs.lines.push_back(run_series_line(r, "adaptive_knobs_p99", series_color(3), SeriesStyle::Markers));
  draw_plot("knobs", knobs);
  std::vector<std::vector<std::string>> rows;
  for (const serving::KnobPoint& k : m->adaptive_knobs)
    rows.push_back({fmt::format("{}", k.max_batch), fmt::format("{:g} ms", k.delay_ms),
                    fmt::format("{:.0f}", k.tokens_per_s), fmt::format("{:.1f} ms", k.latency_ms_p50),
                    fmt::format("{:.1f} ms", k.latency_ms_p99)});
  draw_columns_table("knob_table", {"max batch", "delay", "tokens/s", "latency p50", "p99"}, rows);
  ImGui::EndGroup();
  draw_gantt_or_theory(ctx, "adaptive", -1, kSecondFigureShare * main_figure_height());
  draw_policy_table(*m, {"static", "adaptive"});
  busy_band(ctx);
}

void draw_continuous_step(const ViewContext& ctx) {
  draw_heading("Continuous batching: finished sequences leave, waiting ones join, every iteration");
  const ServingMeasured* m = measured_of(ctx);
  if (!m) {
    if (const ServingSteps* s = steps_of(ctx)) {
      draw_gantt(s->schedules.size() > 1 ? "continuous_theory" : "none",
                 s->schedules.size() > 1 ? s->schedules[1] : Timeline{}, {0, ImGui::GetContentRegionAvail().y * 0.6f});
    }
    return draw_needs_run(ctx, "the stream served with continuous batching");
  }
  // The Gantt chart is the main figure; the curves beside static and adaptive, the table and the benchmark line
  // follow it.
  draw_gantt_or_theory(ctx, "continuous", 1, main_figure_height());
  draw_curves(*ctx.result, {"static", "adaptive", "continuous"}, {0, main_figure_height()});
  draw_policy_table(*m, {"static", "adaptive", "continuous"});
  const bool warn = m->default_stream && !m->meets_throughput_bar;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(warn ? warning_color() : text_color()));
  ImGui::TextWrapped(
      "Continuous / static throughput: %.2fx at the same maximum batch, same run (the lesson expects at "
      "least %.1fx on the default stream%s); tokens identical across every policy, batch and rate: %s.",
      m->continuous_over_static, m->throughput_ratio_bar,
      m->default_stream ? (m->meets_throughput_bar ? ": met" : ": NOT met") : ", not this one",
      m->tokens_identical ? "yes" : "NO");
  ImGui::PopStyleColor();
  if (m->cpu_match_fraction)
    draw_note(fmt::format(
        "On the GPU: decode passes sum every output in a fixed order whatever the batch, so the policies agree; "
        "{:.0f}% of the requests also match the CPU model token for token. The rest differ because fp32 sums taken "
        "in another order (cuBLAS against OpenBLAS in the prefill, fused multiply-adds) round differently, and a "
        "near tie between two logits can then go the other way.",
        100.0 * *m->cpu_match_fraction));
  busy_band(ctx);
}

// How many sequences the KV budget holds, reserved or paged.
void draw_memory_fit(const ServingMeasured& m) {
  draw_columns_table("fit", {"KV budget " + format_bytes_both(double(m.kv_budget_bytes)), "sequences that fit"},
                     {{"reserving the model's whole context per sequence", fmt::format("{}", m.contiguous_fit)},
                      {fmt::format("paged: {}-token blocks for each request's real length", m.block_tokens),
                       fmt::format("{}", m.paged_fit)}});
  draw_note(
      fmt::format("{} of K and V per token (2 x layers x d_model x 4 bytes, the kvcache lesson's formula in fp32). "
                  "Paged blocks waste at most one partly filled block per sequence.",
                  format_bytes_both(double(m.kv_bytes_per_token))));
}

void draw_memory_step(const ViewContext& ctx) {
  const char* heading = "KV memory caps the batch; paged blocks let more in";
  const ServingMeasured* m = measured_of(ctx);
  if (!m) {
    draw_heading(heading);
    return draw_needs_run(ctx, "the KV budget's count and the cache the continuous run held");
  }
  const RunResult& r = *ctx.result;
  PlotSpec spec{"Continuous batching: KV tokens held and reserved, per decode step",
                {"time", "ms", false},
                {"KV tokens", "tokens", false},
                {},
                {}};
  spec.lines.push_back(run_series_line(r, "kv_tokens_continuous", series_color(2), SeriesStyle::Line));
  spec.lines.push_back(
      run_series_line(r, "kv_reserved_continuous", series_color(2), SeriesStyle::Line, {.dashed = true}));
  if (m->kv_bytes_per_token > 0)
    spec.guides.push_back(
        {false, double(m->kv_budget_bytes) / double(m->kv_bytes_per_token), "the budget, in tokens", warning_color()});
  draw_context_and_figure(
      [&] {
        draw_heading(heading);
        draw_memory_fit(*m);
      },
      [&] {
        spec.size = {0, plot_height_leaving(1)};
        draw_plot("kv_tokens", spec);
      });
}

void draw_speculative_step(const ViewContext& ctx) {
  const ServingSteps* s = steps_of(ctx);
  draw_heading("Speculative decoding: the draft proposes, the target verifies in one pass");
  const ServingMeasured* m = measured_of(ctx);
  if (!m || !m->speculative) {
    if (s)
      draw_note(fmt::format("The draft will be the target's first {} of {} layers; k = {}.", s->theory.draft_layers,
                            s->theory.target_layers, s->theory.k));
    return draw_needs_run(ctx, m ? "a run with draft = on" : "speculative decoding against the target alone");
  }
  const serving::SpeculativeMeasured& sp = *m->speculative;
  const RunResult& r = *ctx.result;
  const float table_w = std::min(ImGui::GetContentRegionAvail().x * 0.45f, 600 * ui_scale());
  PlotSpec spec{"Tokens per target pass against acceptance",
                {"acceptance rate a", "", false},
                {"tokens per target pass", "", false},
                {},
                {}};
  spec.lines.push_back(run_series_line(r, "spec_expected", theory_color(), SeriesStyle::Line));
  spec.lines.push_back(run_series_line(r, "spec_measured", series_color(0), SeriesStyle::Markers));
  spec.size = {ImGui::GetContentRegionAvail().x - table_w - ImGui::GetStyle().ItemSpacing.x, plot_height_leaving(1)};
  draw_plot("spec", spec);
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + table_w);
  std::vector<std::pair<std::string, std::string>> rows{
      {"draft", fmt::format("first {} of {} layers", sp.draft_layers, sp.target_layers)},
      {"k (proposals per round)", fmt::format("{}", sp.k)}};
  if (sp.accepted && sp.rejections && sp.target_passes) {
    rows.push_back({"verification passes", fmt::format("{}", *sp.target_passes)});
    rows.push_back({"proposals kept", fmt::format("{}", *sp.accepted)});
    rows.push_back({"passes that rejected one", fmt::format("{}", *sp.rejections)});
    rows.push_back({"acceptance a = kept / (kept + rejections)", percent_text(sp.acceptance_rate)});
  } else {
    rows.push_back({"acceptance (kept / proposed, as recorded)", percent_text(sp.acceptance_rate)});
  }
  rows.push_back({"tokens per target pass", fmt::format("{:.2f}", sp.tokens_per_target_pass)});
  rows.push_back({"formula at that rate", fmt::format("{:.2f}", sp.expected_tokens_per_pass)});
  rows.push_back({"target alone", fmt::format("{:.1f} ms", sp.greedy_ms)});
  rows.push_back({"with the draft", fmt::format("{:.1f} ms", sp.speculative_ms)});
  rows.push_back({"speed-up", fmt::format("{:.2f}x", sp.speculative_speedup)});
  rows.push_back({"output = target's greedy", sp.identical ? "yes, every request" : "NO"});
  draw_value_table("spec_values", rows);
  draw_note(fmt::format(
      "How the draft was made: the first {} of the target's layers with the target's embeddings and output head; the "
      "target's later layers were built with output projections scaled by {:g}, so they nudge the draft's answer "
      "rather than rewrite it, a stand-in for a trained draft. A pass tests its proposals in order and stops at the "
      "first rejection, so a counts one rejection per such pass, not the untested proposals after it. {}",
      sp.draft_layers, sp.quiet_scale,
      m->device == "cuda"
          ? "On a GPU a decode pass waits on memory, so a pass over k + 1 rows should cost little more than one "
            "row's and the draft's own passes be what stands between the tokens per pass and the speed-up; the "
            "measured speed-up above says how far that held here."
          : "On this CPU a pass over k + 1 rows costs several times one row's (the weights stay in cache), so the "
            "speed-up is well below the tokens per pass; on a GPU, where a decode pass waits on memory, extra rows "
            "are nearly free."));
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

}  // namespace

const StepViews& serving_step_views() {
  static const StepViews views{{"prefill", draw_prefill_step},        {"context", draw_context_step},
                               {"static", draw_static_step},          {"adaptive", draw_adaptive_step},
                               {"continuous", draw_continuous_step},  {"memory", draw_memory_step},
                               {"speculative", draw_speculative_step}};
  return views;
}

}  // namespace dlsys::gui
