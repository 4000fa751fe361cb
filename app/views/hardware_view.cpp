// Views of the hardware lesson: the latency staircase with this machine's cache sizes as bands, the read stream's
// bandwidth beside it, the course's table on one basis, the links as bars per direction, and what the hierarchy
// means for the other lessons. Every number comes from the step data or the run's typed values.
#include <fmt/format.h>
#include <imgui.h>

#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/view.h"
#include "app/views/wide_tables.h"
#include "engine/units.h"
#include "kernels/hardware/hardware_math.h"
#include "lessons/hardware/hardware_gpu.h"
#include "lessons/hardware/hardware_steps.h"
#include "lessons/hardware/hardware_values.h"

namespace dlsys::gui {

namespace {

using hardware::HardwareMeasured;
using hardware::HardwareSteps;
using hardware::HardwareTheory;
using hardware::LevelPlateau;

constexpr double kKiB = 1024;  // the plots' x axis is in KiB, as the run's series are

const HardwareSteps* steps_of(const ViewContext& ctx) { return step_data_as<HardwareSteps>(ctx); }
const HardwareMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->measured_as<HardwareMeasured>() : nullptr;
}

// Measured numbers at three significant digits: more would claim a precision the runs do not have.
// (Thousands and up in whole units: 1555 GB/s, not 1.56e+03.)
std::string three_digits(double value) {
  return std::fabs(value) >= 1000 ? fmt::format("{:.0f}", value) : fmt::format("{:.3g}", value);
}
std::string gbps_text(double gbps) { return three_digits(gbps) + " GB/s"; }
std::string ns_text(double ns) { return three_digits(ns) + " ns"; }

// The levels' bands: each from the level below's capacity to its own, main memory to the end of the axis.
std::vector<PlotBand> level_bands(const std::vector<LevelPlateau>& levels) {
  std::vector<PlotBand> bands;
  double below = 0;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const double top = levels[i].capacity_bytes > 0 ? levels[i].capacity_bytes : 1e30;
    const std::string size = levels[i].capacity_bytes > 0 ? " " + format_bytes_binary(levels[i].capacity_bytes) : "";
    bands.push_back({below / kKiB, top / kKiB, levels[i].name + size, series_color(int(i) + 2)});
    below = top;
  }
  return bands;
}

// Where the run found main memory inside the reported last-level cache: a line at the most that cache held here.
void add_held_guide(PlotSpec& spec, const HardwareMeasured& m) {
  if (!m.last_cache_held_bytes || m.levels.size() < 2) return;  // a hand-edited file may hold the key alone
  const LevelPlateau& cache = m.levels[m.levels.size() - 2];
  spec.guides.push_back({true, *m.last_cache_held_bytes / kKiB,
                         fmt::format("{} served up to {}", cache.name, format_bytes_binary(*m.last_cache_held_bytes)),
                         highlight_color()});
}

void add_curves(PlotSpec& spec, const RunResult& result, const std::vector<const char*>& ids) {
  int color = 0;
  for (const char* id : ids)
    if (const Series* s = result.find_series(id)) spec.lines.push_back(categorical_line(*s, color++));
}

// This machine's caches before a run: what sysfs says, and where the chosen working set fits by size.
void draw_caches_before_run(const HardwareSteps& steps) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const CpuCache& c : steps.caches)
    rows.push_back({fmt::format("L{} {} cache, shared by {} CPU(s)", c.level, c.type, c.shared_cpus),
                    format_bytes_binary(c.size_bytes)});
  rows.push_back({fmt::format("working set {} fits in, by size", format_bytes_binary(double(steps.params.working_set))),
                  steps.working_set_level});
  draw_wide_value_table("caches", rows);
}

void draw_staircase_step(const ViewContext& ctx) {
  const HardwareSteps* steps = steps_of(ctx);
  const HardwareMeasured* m = measured_of(ctx);
  if (m == nullptr) {
    draw_needs_run(ctx, "the latency staircase");
    if (steps) draw_caches_before_run(*steps);
    return;
  }
  PlotSpec spec{"Latency of a dependent load against the working set",
                {"working set", "KiB", true},
                {"latency per load", "ns", true},
                {},
                {}};
  add_curves(spec, *ctx.result, {"latency_one", "latency_all"});
  spec.bands = level_bands(m->levels);
  if (steps)
    spec.guides.push_back({true, double(steps->params.working_set) / kKiB,
                           fmt::format("{}: {} by size", format_bytes_binary(double(steps->params.working_set)),
                                       steps->working_set_level),
                           theory_color()});
  add_held_guide(spec, *m);
  spec.size.y = plot_height_leaving(3 + float(m->levels.size()));
  draw_plot("staircase", spec);
  draw_note(fmt::format("Nearest measured working set, {}: {} per load (fastest call), which the staircase names {}.",
                        format_bytes_binary(m->working_set_bytes), ns_text(m->working_set_latency_ns),
                        m->working_set_level));
  if (!m->plateaus_in_bands)
    draw_warning_band(
        "The plateaus do not all sit inside the bands of the reported sizes (a level with no working set well inside "
        "it, a plateau named for another level, or two levels too close): the table says which.");
  std::vector<std::vector<std::string>> rows;
  for (const LevelPlateau& l : m->levels)
    rows.push_back({l.name, l.capacity_bytes > 0 ? format_bytes_binary(l.capacity_bytes) : "-",
                    l.points_inside > 0 ? ns_text(l.latency_ns) : "-",
                    l.last_served_bytes > 0 ? format_bytes_binary(l.last_served_bytes) : "-",
                    l.in_band.value ? "yes" : "no"});
  draw_wide_columns_table(
      "levels", {"level", "reported size", "plateau (one thread)", "largest set it served", "inside its band"}, rows);
}

void draw_bandwidth_step(const ViewContext& ctx) {
  const HardwareMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "the read stream's bandwidth");
  PlotSpec spec{
      "Read bandwidth against the working set", {"working set", "KiB", true}, {"read bandwidth", "GB/s", true}, {}, {}};
  add_curves(spec, *ctx.result, {"bandwidth_one", "bandwidth_all"});
  spec.bands = level_bands(m->levels);
  spec.guides.push_back({false, m->stream_gbps,
                         fmt::format("STREAM {} (roofline's code): {}", m->stream_kernel, gbps_text(m->stream_gbps)),
                         theory_color()});
  add_held_guide(spec, *m);
  spec.size.y = plot_height_leaving(3 + float(m->levels.size()));
  draw_plot("bandwidth", spec);
  draw_note(fmt::format("Main memory read on {} thread(s): {} = {} of STREAM's best kernel ({}).", m->threads,
                        gbps_text(m->dram_read_gbps), percent_text(m->dram_read_over_stream, 0),
                        m->dram_within_stream.value ? "at most it, within the stated margin" : "NOT within it"));
  if (!m->dram_within_stream.value)
    draw_warning_band(
        "The read stream's DRAM plateau is missing or lies above STREAM by more than the margin: "
        "check the note above and rerun on a quiet machine.");
  std::vector<std::vector<std::string>> rows;
  for (const LevelPlateau& l : m->levels)
    rows.push_back({l.name, ns_text(l.latency_ns), gbps_text(l.read_gbps_one),
                    m->threads > 1 ? gbps_text(l.read_gbps_all) : "-", three_digits(l.lines_in_flight)});
  draw_wide_columns_table("latency_bandwidth",
                          {"level", "latency", "read, one thread", fmt::format("read, {} threads", m->threads),
                           "lines in flight (one thread)"},
                          rows);
}

// The GPU of the machine that ran, as the CUDA runtime describes it, or why there is none.
void draw_gpu_facts(const hardware::GpuFacts& g) {
  if (g.name.empty()) {
    draw_note(fmt::format("No GPU answered where this ran ({}): on a machine with one, its own facts appear here.",
                          g.absent_reason));
    return;
  }
  draw_note(
      fmt::format("This machine's {}: {} SMs, {} of shared memory per SM ({} per block at most), L2 {}; memory "
                  "bus {} bits at {} MHz x 2 = {}{}.",
                  g.name, g.sms, format_bytes_binary(g.shared_memory_per_sm_bytes),
                  format_bytes_binary(g.shared_memory_per_block_optin_bytes), format_bytes_binary(g.l2_cache_bytes),
                  g.memory_bus_bits, three_digits(g.memory_clock_mhz), gbps_text(g.theoretical_gbps),
                  g.datasheet_gbps > 0 ? fmt::format(" (datasheet {})", gbps_text(g.datasheet_gbps)) : ""));
}

// The GPU's bands, as hardware_gpu.h looks for its levels: L1, L2 (to half its size), HBM (from 4x it).
std::vector<PlotBand> gpu_bands(const hardware::GpuFacts& g) {
  return {{0, hardware::kGpuL1BandBytes / kKiB, "L1", series_color(2)},
          {hardware::kGpuL2BandFromBytes / kKiB, g.l2_cache_bytes / 2 / kKiB,
           "L2 " + format_bytes_binary(g.l2_cache_bytes), series_color(3)},
          {4 * g.l2_cache_bytes / kKiB, 1e30, "HBM", series_color(4)}};
}

std::string pcie_link_text(const hardware::PcieFacts& link) {
  return fmt::format("PCIe Gen{} x{}: {} per direction after the line code", link.generation, link.lanes,
                     gbps_text(link.link_gbps));
}

// The pinned copy against the link GPU 0 reports, or why there is no link to set it against.
std::string pinned_copy_text(const hardware::GpuFacts& facts, const hardware::GpuProbes& g) {
  if (!facts.pcie || !g.pcie_copy)
    return "the PCIe lines are the slots' limits: the system did not say which link this GPU has";
  const hardware::PcieFacts& link = *facts.pcie;
  return fmt::format("{} of GPU 0's {}; with 128 to 256 B per packet a copy can reach {} to {}: {}",
                     percent_text(g.pcie_copy->pinned_over_link, 0), pcie_link_text(link),
                     gbps_text(link.achievable_low_gbps), gbps_text(link.achievable_high_gbps),
                     g.pcie_copy->within_achievable.value ? "inside" : "outside");
}

void draw_gpu_step(const ViewContext& ctx) {
  const HardwareMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "GPU 0's hierarchy (a run on the CUDA backend)");
  if (!m->gpu_probes) {
    draw_note("This run was on the CPU: GPU 0's hierarchy is measured by a run on the CUDA backend (backend: cuda).");
    return draw_gpu_facts(m->gpu);
  }
  const hardware::GpuProbes& g = *m->gpu_probes;
  const float width = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  const float height = plot_height_leaving(4 + float(g.levels.size()));
  PlotSpec latency{"GPU: latency of a dependent load", {"working set", "KiB", true}, {"latency", "ns", true}, {}, {}};
  add_curves(latency, *ctx.result, {"gpu_latency"});
  latency.bands = gpu_bands(m->gpu);
  latency.size = {width, height};
  draw_plot("gpu_latency", latency);
  ImGui::SameLine();
  PlotSpec read{"GPU: read bandwidth, every SM", {"working set", "KiB", true}, {"read", "GB/s", true}, {}, {}};
  add_curves(read, *ctx.result, {"gpu_bandwidth"});
  read.bands = gpu_bands(m->gpu);
  if (m->gpu.theoretical_gbps > 0)
    read.guides.push_back({false, m->gpu.theoretical_gbps,
                           fmt::format("HBM bus x clock x 2: {}", gbps_text(m->gpu.theoretical_gbps)), theory_color()});
  read.size = {width, height};
  draw_plot("gpu_bandwidth", read);
  if (!(g.hbm_hundreds_of_cycles.value && g.l2_well_below_hbm.value && g.hbm_within_theoretical.value))
    draw_warning_band(fmt::format(
        "Expected on a GPU, not all found: HBM at least {:.0f} cycles away ({}), the L2 at most {:.0f} % of it ({}), "
        "HBM's read at most bus x clock x 2 ({}).",
        hardware::kGpuHbmLeastCycles, g.hbm_hundreds_of_cycles.value ? "yes" : "no",
        100 * hardware::kGpuL2OverHbmLatency, g.l2_well_below_hbm.value ? "yes" : "no",
        g.hbm_within_theoretical.value ? "yes" : "no"));
  std::vector<std::vector<std::string>> rows;
  for (const hardware::GpuLevel& l : g.levels)
    rows.push_back({l.name, l.points_inside > 0 ? ns_text(l.latency_ns) : "-",
                    l.points_inside > 0 ? three_digits(l.latency_cycles) : "-",
                    l.points_inside > 0 ? gbps_text(l.read_gbps) : "-",
                    l.points_inside > 0 ? three_digits(l.read_gbps * l.latency_ns / 128) : "-"});
  rows.push_back({"shared memory, every SM", "-", "-", gbps_text(g.shared_gbps),
                  fmt::format("{} of 128 B/clock/SM at {} MHz ({})", percent_text(g.shared_over_theory, 0),
                              three_digits(g.sm_clock_mhz), gbps_text(g.shared_theory_gbps))});
  draw_wide_columns_table("gpu_levels", {"level", "latency", "cycles", "read", "128 B lines in flight (Little)"}, rows);
  PlotSpec copies{"Host to GPU 0: pageable against pinned memory",
                  {"bytes copied", "KiB", true},
                  {"copy rate", "GB/s", true},
                  {},
                  {}};
  add_curves(copies, *ctx.result, {"copy_pageable", "copy_pinned"});
  if (const std::optional<hardware::PcieFacts>& link = m->gpu.pcie) {
    copies.guides.push_back(
        {false, link->link_gbps, fmt::format("GPU 0's link, {}", pcie_link_text(*link)), theory_color()});
    copies.guides.push_back({false, link->achievable_high_gbps, "the most its packets leave for data", theory_color()});
  } else {
    copies.guides.push_back({false, hardware::kPcieGen4x16Gbps, "PCIe Gen4 x16, per direction", theory_color()});
    copies.guides.push_back({false, hardware::kPcieGen5x16Gbps, "PCIe Gen5 x16, per direction", theory_color()});
  }
  copies.size.y = main_figure_height() * 0.6f;
  draw_plot("gpu_copies", copies);
  draw_note(fmt::format(
      "HBM read at {} of bus x clock x 2; shared memory over every SM {}x HBM. Host to GPU, {}: pageable {}, pinned "
      "{} ({}). {}",
      percent_text(g.hbm_over_theoretical, 0), three_digits(g.shared_over_hbm), format_bytes_binary(g.copy_bytes),
      gbps_text(g.pageable_gbps), gbps_text(g.pinned_gbps), pinned_copy_text(m->gpu, g),
      g.gpus >= 2 ? fmt::format("GPU 0 to GPU 1: {} ({}).", gbps_text(g.peer_gbps),
                                g.peer_access.value ? "peer to peer" : "through the host")
                  : "One GPU: no GPU-to-GPU link to measure."));
  if (g.wrong > 0)
    draw_warning_band(
        fmt::format("{} GPU probe(s) computed a wrong result: their times are not to be trusted.", g.wrong));
}

void draw_course_step(const ViewContext& ctx) {
  const HardwareSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const HardwareTheory& t = steps->theory;
  draw_bars(
      {
          {"A100 40 GB", t.a100_40gb_hbm_gbps, series_color(1),
           fmt::format("{} = 5120 bits x 1215 MHz x 2: below 2-3 TB/s", gbps_text(t.a100_40gb_hbm_gbps))},
          {"A100 80 GB", 2039, series_color(0), "2039 GB/s (datasheet)"},
          {"H100 PCIe", 2000, series_color(0), "2000 GB/s (datasheet)"},
          {"H100 SXM", t.h100_sxm_hbm_gbps, series_color(1),
           fmt::format("{} = 5120 bits x 2619 MHz x 2: above", gbps_text(t.h100_sxm_hbm_gbps))},
          {"H200", 4800, series_color(1), "4800 GB/s (datasheet): above"},
          {"A100 shared memory", t.a100_smem_gbps_aggregate, series_color(3),
           fmt::format("{} summed over 108 SMs; {} per SM", gbps_text(t.a100_smem_gbps_aggregate),
                       gbps_text(t.a100_smem_gbps_per_sm))},
      },
      {.title = "HBM against the course's 2-3 TB/s", .height = main_figure_height()});
  if (const HardwareMeasured* m = measured_of(ctx)) draw_gpu_facts(m->gpu);
  for (const hardware::CourseFigure& f : steps->course_table) {
    draw_heading(fmt::format("{}: the course says {}", f.what, f.course));
    draw_note(fmt::format("Published: {}.{}", f.reference,
                          f.correction.empty() ? " The figure stands." : " " + f.correction));
  }
}

void draw_links_step(const ViewContext& ctx) {
  const HardwareSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  std::vector<Bar> bars;
  for (const hardware::LinkFigure& l : steps->links)
    if (l.in_chart)
      bars.push_back({l.name, l.gbps_per_direction, series_color(0),
                      gbps_text(l.gbps_per_direction) + (l.course.empty() ? "" : " (the course: " + l.course + ")")});
  const HardwareMeasured* m = measured_of(ctx);
  if (m != nullptr && m->gpu_probes) {  // the run's own links, measured
    const hardware::GpuProbes& g = *m->gpu_probes;
    const std::string share = m->gpu.pcie && g.pcie_copy ? fmt::format(": {} of its PCIe Gen{} x{}",
                                                                       percent_text(g.pcie_copy->pinned_over_link, 0),
                                                                       m->gpu.pcie->generation, m->gpu.pcie->lanes)
                                                         : "";
    bars.push_back({"host to GPU 0 (measured)", g.pinned_gbps, series_color(1),
                    gbps_text(g.pinned_gbps) + " from pinned memory" + share});
    if (g.gpus >= 2)
      bars.push_back({"GPU 0 to GPU 1 (measured)", g.peer_gbps, series_color(1),
                      gbps_text(g.peer_gbps) + (g.peer_access.value ? ", peer to peer" : ", through the host")});
  }
  draw_bars(bars, {.title = "Links, GB/s each way (GB = 1e9 B)", .height = main_figure_height()});
  std::vector<std::vector<std::string>> rows;
  for (const hardware::LinkFigure& l : steps->links)
    rows.push_back({l.name, l.basis, gbps_text(l.gbps_per_direction), gbps_text(2 * l.gbps_per_direction),
                    l.course.empty() ? "-" : l.course});
  if (m != nullptr && m->gpu_probes)
    rows.push_back(
        {"host to GPU 0, pinned (measured)", "this machine's GPU 0", gbps_text(m->gpu_probes->pinned_gbps), "-", "-"});
  if (m != nullptr) {
    rows.push_back({"DRAM read (measured)", fmt::format("this machine, {} thread(s)", m->threads),
                    gbps_text(m->dram_read_gbps), "-", "-"});
    rows.push_back({"STREAM (measured)", "this machine, " + m->stream_kernel, gbps_text(m->stream_gbps), "-", "-"});
  }
  draw_wide_columns_table("links", {"link", "basis", "each way", "both ways", "the course says"}, rows);
  const HardwareTheory& t = steps->theory;
  draw_wide_value_table(
      "ratios",
      {
          {"the course's NVLink 5 / PCIe Gen4: 1800 both ways over 32 one way",
           fmt::format("{:.2f}x (\"60x\")", t.course_nvlink_pcie_ratio)},
          {"like for like, both per direction: 900 / 32", fmt::format("{:.3g}x", t.nvlink_pcie_gen4_ratio)},
          {"against the PCIe Gen5 of a B200 host: 900 / 64", fmt::format("{:.3g}x", t.nvlink_pcie_gen5_ratio)},
          {"one H100's NVLink / its InfiniBand port, per direction: 450 / 50",
           fmt::format("{:.3g}x", t.nvlink_infiniband_ratio)},
          {"the course's own figures: one GPU's 900 (both ways) / a node's 400",
           fmt::format("{:.3g}x, not \"10-100x\"", t.course_nvlink_infiniband_ratio)},
      });
  if (m != nullptr && m->gpu_probes)
    draw_note("Host to GPU 0, measured: " + pinned_copy_text(m->gpu, *m->gpu_probes) + ".");
  if (ctx.result == nullptr) draw_note("Run the lesson to add this machine's measured memory bandwidth to the table.");
}

void draw_consequences_step(const ViewContext& ctx) {
  const HardwareSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const HardwareTheory& t = steps->theory;
  std::vector<Bar> bars{
      {"A100 smem / HBM", t.a100_smem_over_hbm, series_color(0),
       fmt::format("{:.3g}x: shared memory of all 108 SMs against HBM", t.a100_smem_over_hbm)},
      {"H100 smem / HBM", t.h100_smem_over_hbm, series_color(0),
       fmt::format("{:.3g}x: all 132 SMs against HBM", t.h100_smem_over_hbm)},
  };
  if (const HardwareMeasured* m = measured_of(ctx))
    for (std::size_t i = 0; i + 1 < m->levels.size(); ++i)  // every level but main memory, the yardstick
      if (const LevelPlateau& l = m->levels[i]; l.points_inside > 0)
        bars.push_back({fmt::format("{} / DRAM, here", l.name), l.read_over_dram, series_color(1),
                        fmt::format("{:.3g}x: read stream, one thread, this machine", l.read_over_dram)});
  draw_bars(bars, {.title = "Close by against main memory", .height = main_figure_height()});
  for (const hardware::Consequence& c : steps->consequences) {
    draw_heading(fmt::format("{} lesson", c.lesson));
    draw_note(c.claim + ". " + c.numbers + ".");
  }
}

}  // namespace

const StepViews& hardware_step_views() {
  static const StepViews views{{"staircase", draw_staircase_step},
                               {"bandwidth", draw_bandwidth_step},
                               {"gpu", draw_gpu_step},
                               {"course", draw_course_step, StepShows::TheoryOnly},
                               {"links", draw_links_step},
                               {"consequences", draw_consequences_step}};
  return views;
}

}  // namespace dlsys::gui
