#include "app/views/allreduce_processes_panel.h"

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "engine/units.h"

namespace dlsys::gui {

void draw_allreduce_processes_measured(const ViewContext& ctx, const allreduce::AllreduceProcessesMeasured& m) {
  draw_heading(fmt::format("{} ranks: {}", m.world_size, m.label));
  for (const std::string& caveat : m.caveats) draw_note(caveat);
  const std::string size = format_bytes_binary(m.bench_bytes);
  if (m.lab_ring_fraction_of_mpi_busbw)
    draw_note(
        fmt::format("At {} the lab's ring over MPI point-to-point reaches {:.0f}% of {}'s busbw in the same run "
                    "(expected at least {:.0f}%); #wrong {} on every row: {}.",
                    size, 100 * *m.lab_ring_fraction_of_mpi_busbw, m.bench_peer, 100 * m.bench_expected_fraction,
                    m.wrong == 0 ? "0" : "not 0", m.bench_met ? "met" : "NOT met"));
  else
    draw_note(fmt::format("At {} {} across processes reaches {:.2f} GB/s busbw; #wrong {} on every row.", size,
                          m.bench_peer, m.mpi_busbw_gbps, m.wrong == 0 ? "0" : "not 0"));

  PlotSpec spec{"Bus bandwidth, ranks as processes", {"message size", "bytes", true}, {"busbw", "GB/s", false}, {}, {}};
  int color = 0;
  for (const Series& series : ctx.result->series)
    if (series.id.rfind("busbw_", 0) == 0) spec.lines.push_back(line_from_series(series, series_color(color++)));
  std::vector<std::vector<std::string>> rows;
  for (const allreduce::ProcessRow& row : m.rows)
    rows.push_back({row.collective + " / " + row.implementation, format_bytes_binary(row.bytes),
                    format_duration_us(row.time_us), format_number(row.algbw_gbps, 3), format_number(row.busbw_gbps, 3),
                    fmt::format("{}", row.wrong)});
  const float avail_w = ImGui::GetContentRegionAvail().x, avail_h = ImGui::GetContentRegionAvail().y;
  // The plot takes what is left of the view (at least 16 lines), the table comes under it: the view scrolls to it.
  spec.size = {avail_w, std::max(avail_h, 16 * ImGui::GetTextLineHeight())};
  draw_plot("busbw_processes", spec);
  draw_columns_table("processes_table", {"collective / implementation", "size", "time", "algbw", "busbw", "#wrong"},
                     rows);
}

}  // namespace dlsys::gui
