#include "app/views/allreduce_processes_panel.h"

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "engine/units.h"
#include "lessons/allreduce/mpi_report.h"

namespace dlsys::gui {

void draw_allreduce_processes_measured(const ViewContext& ctx, const allreduce::AllreduceProcessesMeasured& m) {
  draw_heading(fmt::format("{} ranks: {}", m.world_size, m.label));
  for (const std::string& caveat : m.caveats) draw_note(caveat);
  draw_note(allreduce::processes_bench_sentence(m));

  PlotSpec spec{"Bus bandwidth, ranks as processes", {"message size", "bytes", true}, {"busbw", "GB/s", false}, {}, {}};
  int color = 0;
  for (const Series& series : ctx.result->series)
    if (series.id.rfind("busbw_", 0) == 0) spec.lines.push_back(categorical_line(series, color++));
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
