// Views of the mesh lesson's costs: bytes per group and memory per rank, each beside its closed form.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/mesh_view.h"
#include "engine/units.h"

namespace dlsys::gui::mesh_view {

namespace {
std::string bytes_text(std::int64_t bytes) { return format_bytes_both(double(bytes)); }
}  // namespace

void draw_bytes(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MeshTheory& t = steps->theory;
  const MeshMeasured* m = measured_of(ctx);
  std::vector<Bar> bars;
  const auto add = [&](const std::string& what, std::int64_t formula, const std::int64_t* counted, int color) {
    bars.push_back({what + ": formula", double(formula), theory_color(), bytes_text(formula)});
    if (counted != nullptr)
      bars.push_back({what + ": counted", double(*counted), series_color(color),
                      fmt::format("{}{}", bytes_text(*counted), *counted == formula ? " (equal)" : " (DIFFERENT)")});
  };
  add("tp group", t.tp_group_bytes, m ? &m->tp_group_bytes : nullptr, 0);
  add("dp group", t.dp_group_bytes, m ? &m->dp_group_bytes : nullptr, 1);
  add("pipelines", t.pp_bytes, m ? &m->pp_bytes : nullptr, 2);
  double largest = 1;
  for (const Bar& b : bars) largest = std::max(largest, b.value);
  draw_bars(
      bars,
      {.full_scale = largest, .title = "bytes sent per step, group 0 of each kind", .height = main_figure_height()});
  if (m == nullptr) draw_needs_run(ctx, "count what every link and message carried");
  draw_note(
      "Every group of a kind sends the same: the bars are group 0's (replica 0, stage 0 for tp; tp rank 0, "
      "stage 0 for dp) and every pipeline message.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < t.rank_costs.size(); ++i) {
    const RankTheory& k = t.rank_costs[i];
    const RankMeasured* r = m && i < m->rank_runs.size() ? &m->rank_runs[i] : nullptr;
    const auto cell = [&](std::int64_t formula, std::int64_t RankMeasured::*field) {
      return r ? fmt::format("{} / {}", r->*field, formula) : fmt::format("- / {}", formula);
    };
    rows.push_back({fmt::format("{} ({},{},{})", k.rank, k.d, k.t, k.p), cell(k.tp_bytes, &RankMeasured::tp_bytes),
                    cell(k.dp_bytes, &RankMeasured::dp_bytes), cell(k.pp_bytes, &RankMeasured::pp_bytes)});
  }
  draw_columns_table("mesh_bytes", {"rank (d,t,p)", "tp B (counted / formula)", "dp B", "pipeline B"}, rows);
  draw_note(fmt::format(
      "tp: {} all-reduces a rank, each 2 (t - 1)/t = {} of {} B; dp: {} of each rank's {} B gradient shard; pipeline: "
      "{} B a message.",
      t.rank_costs.empty() ? 0 : t.rank_costs.front().tp_all_reduces, short_number_text(t.tp_ring_factor),
      t.activation_bytes, short_number_text(t.dp_ring_factor), t.shard_gradient_bytes, t.activation_bytes));
}

void draw_memory(const ViewContext& ctx) {
  const MeshSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const MeshTheory& t = steps->theory;
  const MeshMeasured* m = measured_of(ctx);
  // Against the rank: the formula's parts stacked as lines (weights, + gradients, + activations, + scratch) and the
  // ledger's total as markers on the top line.
  PlotSpec spec{"Memory per rank: the formula's parts and the ledger", {"rank", ""}, {"bytes", "B"}, {}, {}};
  const char* names[] = {"weights", "+ gradients", "+ stashed activations", "+ backward buffers (formula's total)"};
  for (int part = 0; part < 4; ++part) {
    PlotLine line{.name = names[part], .color = part == 3 ? theory_color() : series_color(part)};
    line.style = SeriesStyle::LineAndMarkers;
    for (const RankTheory& k : t.rank_costs) {
      const std::int64_t parts[] = {k.weight_bytes, k.gradient_bytes, k.activation_bytes, k.scratch_bytes};
      double y = 0;
      for (int i = 0; i <= part; ++i) y += double(parts[i]);
      line.points.push_back({double(k.rank), y, y, y});
    }
    spec.lines.push_back(std::move(line));
  }
  if (m != nullptr) {
    PlotLine ledger{.name = "ledger's total", .color = series_color(4)};
    ledger.style = SeriesStyle::Markers;
    ledger.marker = MarkerShape::Square;
    for (const RankMeasured& r : m->rank_runs)
      ledger.points.push_back({double(r.rank), double(r.total_bytes), double(r.total_bytes), double(r.total_bytes)});
    spec.lines.push_back(std::move(ledger));
  }
  spec.y.min = 0;
  spec.size = {0, main_figure_height()};
  draw_plot("mesh_memory_plot", spec);
  if (m == nullptr) draw_needs_run(ctx, "read every rank's memory from the ledger");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < t.rank_costs.size(); ++i) {
    const RankTheory& k = t.rank_costs[i];
    const RankMeasured* r = m && i < m->rank_runs.size() ? &m->rank_runs[i] : nullptr;
    rows.push_back({fmt::format("{} ({},{},{})", k.rank, k.d, k.t, k.p), std::to_string(k.weight_bytes),
                    std::to_string(k.gradient_bytes),
                    fmt::format("{} = {} x {}", k.activation_bytes, k.in_flight, k.stash_bytes),
                    std::to_string(k.scratch_bytes), r ? std::to_string(r->peak_message_bytes) : "-"});
  }
  draw_columns_table("mesh_memory",
                     {"rank (d,t,p)", "weights B", "gradients B", "activations B (in flight x one)", "scratch B",
                      "messages B (measured)"},
                     rows);
  draw_note(m ? (m->memory_match ? "Every rank's ledger equals the formula, to the byte (messages between stages, "
                                   "which depend on timing, are counted apart)."
                                 : "A rank's ledger DIFFERS from the formula.")
              : "Formula per rank; a run reads the ledger.");
}

}  // namespace dlsys::gui::mesh_view
