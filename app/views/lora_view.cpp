// Views of the LoRA lesson: trainable counts against r, loss against steps for full fine-tuning, LoRA and QLoRA, the
// final loss against r beside Eckart and Young's least loss, each training's memory ledger beside the closed forms,
// and the real-model calculator.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/lora/lora_calculator.h"
#include "lessons/lora/lora_lesson.h"
#include "lessons/lora/lora_steps.h"
#include "lessons/lora/lora_values.h"

namespace dlsys::gui {

namespace {

using lora_lesson::LoraMeasured;
using lora_lesson::LoraSteps;
using lora_lesson::LoraTheory;
using lora_lesson::MethodMemory;
using lora_lesson::TrainingRun;
using Table = std::vector<std::vector<std::string>>;

const LoraSteps* steps_of(const ViewContext& ctx) { return step_data_as<LoraSteps>(ctx); }
const LoraMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->measured_as<LoraMeasured>() : nullptr;
}

std::string count_text(double n) { return format_count(n); }

std::string method_label(const std::string& method, int r) {
  if (method == "full") return "full fine-tuning";
  return fmt::format("{} r = {}", method == "lora" ? "LoRA" : "QLoRA", r);
}

void draw_idea_step(const ViewContext& ctx) {
  const LoraSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  const LoraTheory& t = s->theory;
  draw_heading(
      fmt::format("W is {} x {}: {} weights. B A trains r ({} + {}) numbers, each with a gradient and two Adam "
                  "moments.",
                  t.d, t.k, count_text(double(t.full_trainable)), t.d, t.k));
  std::vector<Bar> bars{
      {"full: d k", double(t.full_trainable), series_color(0), count_text(double(t.full_trainable)) + " (100%)"}};
  for (std::size_t i = 0; i < t.swept_ranks.size(); ++i) {
    const double n = double(t.trainable_by_rank[i]);
    bars.push_back({fmt::format("LoRA r = {}", t.swept_ranks[i]), n, series_color(1),
                    fmt::format("{} ({})", count_text(n), percent_text(n / double(t.full_trainable), 2))});
  }
  draw_bars(bars, {.title = "Trainable parameters", .height = main_figure_height()});
  draw_columns_table(
      "course", {"d = k = 4096", "trainable", "of d^2"},
      {{"full fine-tuning", count_text(double(t.course_full)), "100%"},
       {"LoRA r = 8: 2 d r", count_text(double(t.course_r8)), fmt::format("{:.2f}%", t.course_r8_percent)},
       {"LoRA r = 16", count_text(double(t.course_r16)), fmt::format("{:.2f}%", t.course_r16_percent)},
       {fmt::format("this layer, r = {}: r (d + k)", t.r), count_text(double(t.trainable_at_r)),
        percent_text(t.trainable_share_at_r, 2)}});
}

void draw_loss_step(const ViewContext& ctx) {
  const LoraMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run(ctx, "full fine-tuning, LoRA and QLoRA");
  const RunResult& r = *ctx.result;
  const lora_lesson::LoraParams p = run_params<LoraLesson>(ctx);
  PlotSpec spec{fmt::format("Loss against steps: {} x {} layer, true update of rank {}", p.d, p.k, p.true_rank),
                {"step", "", false},
                {"loss ||W' - W*||^2 / d", "", true},
                {},
                {}};
  std::vector<std::string> ids{"loss_full"};
  for (int rank : kSweptRanks) ids.push_back(fmt::format("loss_lora_r{}", rank));
  ids.push_back("loss_qlora");
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (const Series* series = r.find_series(ids[i])) {
      PlotLine line = categorical_line(*series, int(i));
      line.style = SeriesStyle::Line;
      line.whiskers = false;
      spec.lines.push_back(std::move(line));
    }
  if (p.noise > 0) spec.guides.push_back({false, p.noise, "the noise in W*", theory_color()});
  spec.y.min = std::max(1e-7, p.noise / 100);
  spec.size = {0, plot_height_leaving(0.5f)};
  draw_plot("loss", spec);
}

void draw_knee_step(const ViewContext& ctx) {
  const LoraMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run(ctx, "the final loss against r");
  const RunResult& r = *ctx.result;
  const lora_lesson::LoraParams p = run_params<LoraLesson>(ctx);
  PlotSpec spec{fmt::format("Final loss against r (knee at r = {})", m->knee_rank),
                {"rank r", "", true},
                {"final loss", "", true},
                {},
                {}};
  spec.lines.push_back(run_series_line(r, "best_loss_lora", theory_color(), SeriesStyle::Line));
  spec.lines.push_back(run_series_line(r, "final_loss_lora", series_color(1), SeriesStyle::Markers));
  spec.guides.push_back({true, double(p.true_rank), fmt::format("true rank {}", p.true_rank), series_color(0)});
  spec.size = {0, plot_height_leaving(float(kSweptRanks.size()) + 2.5f)};
  draw_plot("knee", spec);
  // The run's trainings in order: full, then LoRA at each swept r.
  Table rows;
  for (std::size_t i = 1; i <= kSweptRanks.size() && i < m->trainings.size(); ++i) {
    const TrainingRun& t = m->trainings[i];
    rows.push_back({fmt::format("{}", t.r), count_text(double(t.trainable_parameters)),
                    fmt::format("{:.3e}", t.final_loss), fmt::format("{:.3e}", t.best_rank_r_loss),
                    format_duration_us(t.step_us)});
  }
  draw_columns_table("knee_table",
                     {"r", "trainable r (d + k)", "final loss", "least of rank r (Eckart-Young)", "time a step"}, rows);
}

std::string bytes_text(double bytes) { return format_bytes_binary(bytes); }

// Bars of one method: the closed form, and the ledger's peak beside it after a run.
void add_memory_bars(std::vector<Bar>& bars, const MethodMemory& closed, const MethodMemory* ledger, int color) {
  const std::string name = method_label(closed.method, closed.r);
  bars.push_back({name + ": closed form", double(closed.total_bytes), with_alpha(series_color(color), 0.45f),
                  bytes_text(double(closed.total_bytes))});
  if (ledger != nullptr)
    bars.push_back({name + ": ledger", double(ledger->total_bytes), series_color(color),
                    bytes_text(double(ledger->total_bytes)) + " measured"});
}

// The closed forms tag by tag, one column per method.
void draw_tag_table(const std::vector<MethodMemory>& memory) {
  std::vector<std::string> headers{"closed form, by the ledger's tag"};
  for (const MethodMemory& mm : memory) headers.push_back(method_label(mm.method, mm.r));
  const std::vector<std::pair<const char*, std::int64_t MethodMemory::*>> tags{
      {"frozen W", &MethodMemory::frozen_bytes},
      {"trainable", &MethodMemory::trainable_bytes},
      {"gradients", &MethodMemory::gradient_bytes},
      {"Adam's m and v", &MethodMemory::optimizer_bytes},
      {"activations (outputs, errors, A x)", &MethodMemory::activation_bytes},
      {"workspace (copies, dequantized panel)", &MethodMemory::workspace_bytes}};
  Table rows;
  for (const auto& [label, field] : tags) {
    std::vector<std::string> row{label};
    for (const MethodMemory& mm : memory) row.push_back(bytes_text(double(mm.*field)));
    rows.push_back(std::move(row));
  }
  draw_columns_table("tags", headers, rows);
}

void draw_memory_step(const ViewContext& ctx) {
  const LoraSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  const LoraMeasured* m = measured_of(ctx);
  const LoraTheory* run_theory = m ? ctx.result->theory_as<LoraTheory>() : nullptr;
  const LoraTheory& t = run_theory ? *run_theory : s->theory;
  if (t.memory.size() != 3) return draw_needs_run(ctx, "the memory of each method");
  // The run's trainings in order: full, LoRA at each swept r, QLoRA at r, LoRA at r.
  const TrainingRun* ledgers[3] = {nullptr, nullptr, nullptr};
  if (m && m->trainings.size() == kSweptRanks.size() + 3) {
    ledgers[0] = &m->trainings.front();
    ledgers[1] = &m->trainings.back();
    ledgers[2] = &m->trainings[kSweptRanks.size() + 1];
  }
  std::vector<Bar> bars;
  for (int i = 0; i < 3; ++i)
    add_memory_bars(bars, t.memory[std::size_t(i)], ledgers[i] ? &ledgers[i]->ledger : nullptr, i);
  draw_bars(bars, {.title = fmt::format("Bytes one training of the {} x {} layer holds (fp32)", t.d, t.k),
                   .height = main_figure_height()});
  draw_tag_table(t.memory);
  if (!m)
    ImGui::TextDisabled("Press Run to read each training's own memory ledger beside these closed forms.");
  else
    draw_note(m->all_ledgers_match ? "Every training's ledger equals its closed form, tag by tag, to the byte."
                                   : "A ledger differs from its closed form: see the run's report.");
  draw_value_table(
      "base_bits",
      {{"frozen base in fp32", "32 bits per weight"},
       {"NF4 code + an fp32 scale per 64", fmt::format("4 + {:.3f} bits", t.nf4_scale_bits)},
       {"scales double-quantized: 8/64 + 32/(64 x 256)", fmt::format("4 + {:.4f} bits", t.nf4_double_quant_scale_bits)},
       {"double quantization saves", fmt::format("{:.4f} bits per weight", t.double_quant_saving_bits)},
       {fmt::format("this {} x {} base as stored (with the mean)", t.d, t.k),
        fmt::format("{:.4f} bits per weight", t.nf4_base_bits_per_parameter)}});
  if (m && ledgers[1] && ledgers[2])
    draw_note(
        fmt::format("Final loss at r = {}: LoRA {:.3e}, QLoRA {:.3e} ({:.2f}x): the 4-bit base's error is a floor "
                    "for the adapters.",
                    t.r, ledgers[1]->final_loss, ledgers[2]->final_loss, m->qlora_over_lora_final_loss));
}

void draw_overhead_step(const ViewContext& ctx) {
  const LoraMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run(ctx, "the adapter path against the merged weight");
  const RunResult& r = *ctx.result;
  const LoraTheory* t = r.theory_as<LoraTheory>();
  if (!t) return draw_needs_run(ctx, "the adapter path against the merged weight");
  PlotSpec spec{fmt::format("Forward pass of a {0} x {0} layer on {1} tokens: the adapter unmerged", t->inference_width,
                            t->inference_tokens),
                {"rank r", "", true},
                {"extra time over the merged weight", "%", false},
                {},
                {}};
  spec.lines.push_back(run_series_line(r, "forward_flop_share", theory_color(), SeriesStyle::Line));
  spec.lines.back().dashed = true;
  spec.lines.push_back(run_series_line(r, "forward_overhead", series_color(1), SeriesStyle::Markers));
  if (r.find_series("forward_adapter_products"))  // CPU runs
    spec.lines.push_back(run_series_line(r, "forward_adapter_products", series_color(2), SeriesStyle::LineAndMarkers));
  spec.guides.push_back({false, 0.0, "merged: none", series_color(0)});
  spec.size = {0, plot_height_leaving(float(m->forward.size()) + 1.5f)};
  draw_plot("overhead", spec);
  Table rows;
  for (const lora_lesson::ForwardPoint& f : m->forward)
    rows.push_back({fmt::format("{}", f.r), format_duration_us(f.adapter_us), format_duration_us(f.merged_us),
                    fmt::format("{:+.1f}%", 100 * f.overhead), fmt::format("{:.1f}%", 100 * f.flop_share),
                    f.agrees ? "same" : "DIFFERENT"});
  draw_columns_table("overhead_table", {"r", "adapter path", "merged", "extra time", "extra multiply-adds", "outputs"},
                     rows);
}

void draw_calculator_step(const ViewContext& ctx) {
  const LoraSteps* s = steps_of(ctx);
  if (s == nullptr) return draw_step_data_missing(ctx);
  const lora_lesson::CalculatorTheory& c = s->theory.calculator;
  // Short enough for one line in presentation mode: the counts themselves are in the table below.
  draw_heading(fmt::format("{}, adapters on {} at r = {}: {} of its weights trained; micro-batch {} of {} tokens",
                           c.model, c.targets, c.r, percent_text(c.adapter_share, 3), c.micro_batch, c.seq));
  std::vector<Bar> bars;
  double largest = 0;
  for (const lora_lesson::ModelMemory& mm : c.memory) largest = std::max(largest, mm.total_bytes);
  for (std::size_t i = 0; i < c.memory.size(); ++i) {
    const lora_lesson::ModelMemory& mm = c.memory[i];
    const std::string name = mm.method == "full" ? "full fine-tuning" : mm.method == "lora" ? "LoRA" : "QLoRA";
    bars.push_back({name + ": model states", mm.weight_bytes + mm.gradient_bytes + mm.optimizer_bytes,
                    series_color(int(i)),
                    format_bytes_decimal(mm.weight_bytes + mm.gradient_bytes + mm.optimizer_bytes)});
    bars.push_back({name + ": + activations", mm.total_bytes, with_alpha(series_color(int(i)), 0.45f),
                    format_bytes_decimal(mm.total_bytes)});
  }
  draw_bars(bars, {.full_scale = largest, .title = "Memory (GB = 1e9 bytes)", .height = main_figure_height()});
  draw_warning_band(lora_lesson::activation_note());
  Table rows;
  for (const lora_lesson::ModelMemory& mm : c.memory)
    rows.push_back({mm.method, count_text(mm.trainable_parameters), format_bytes_decimal(mm.weight_bytes),
                    format_bytes_decimal(mm.gradient_bytes), format_bytes_decimal(mm.optimizer_bytes),
                    format_bytes_decimal(mm.activation_bytes), format_bytes_decimal(mm.total_bytes)});
  draw_columns_table("calculator", {"method", "trainable", "weights", "gradients", "optimizer", "activations", "total"},
                     rows);
  Table matrices;
  for (const lora_lesson::AdaptedMatrix& a : c.matrices)
    matrices.push_back({a.name, fmt::format("{} x {}", a.rows, a.cols), fmt::format("{}", a.count),
                        count_text(double(a.adapter_parameters))});
  draw_columns_table("matrices", {"adapted", "d x k", "layers", "r (d + k) each"}, matrices);
  draw_note(
      "Full fine-tuning: 16-bit weights and gradients, fp32 master weights and Adam's moments (2 + 2 + 12 bytes a "
      "parameter). LoRA: the base frozen in 16 bits, the same 16 bytes for each adapter parameter. QLoRA: the blocks' "
      "linear weights in NF4 with double-quantized scales; embeddings, norms and the output layer in 16 bits.");
}

}  // namespace

const StepViews& lora_step_views() {
  static const StepViews views{{"idea", draw_idea_step, StepShows::TheoryOnly},
                               {"loss", draw_loss_step},
                               {"knee", draw_knee_step},
                               {"memory", draw_memory_step},
                               {"overhead", draw_overhead_step},
                               {"calculator", draw_calculator_step, StepShows::TheoryOnly}};
  return views;
}

}  // namespace dlsys::gui
