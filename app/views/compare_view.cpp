// Two runs of one lesson compared: a badge naming each run in its colour, the step drawn for both, and the table the
// lessons layer made of them (lessons/common/run_comparison.h). Nothing is computed here.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/figure_size.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "app/views/view.h"

namespace dlsys::gui {

namespace {

// The table under the figure takes its rows' height, but no more than this share of the view: the figure keeps the
// rest, and a long table scrolls in its box.
constexpr float kTableMaxShare = 0.45f;

const char* run_letter(int run) { return run == 0 ? "A" : "B"; }

void draw_step_view(const ViewContext& context) {
  const std::vector<LessonStep>& steps = context.lesson.text().steps;
  const std::string step_id = context.step < static_cast<int>(steps.size()) ? steps[context.step].id : "";
  if (StepView view = find_step_view(context.lesson.id(), step_id))
    view(context);
  else
    ImGui::TextDisabled("Step '%s' has no view to compare runs in.", step_id.c_str());
}

std::string marked_name(const ComparedValue& row) { return (row.differs ? "* " : "  ") + row.name; }

// The table's height whole: its header and rows, and the benchmark lines (two lines each where they wrap).
float table_rows_height(const RunComparison& c) {
  const std::size_t benchmark_lines = 2 * (!c.a_benchmark.empty() + !c.b_benchmark.empty());
  const std::size_t rows = std::max(c.params.size(), c.measured.size() + benchmark_lines) + 2;
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  return static_cast<float>(rows) * row_h;
}

// Parameters on the left, measured numbers on the right, each run's benchmark line under them.
void draw_comparison_table(const RunComparison& c, float height) {
  ImGui::BeginChild("comparison_table", {0, height}, false);
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  std::vector<std::vector<std::string>> params, measured;
  for (const ComparedValue& row : c.params) params.push_back({marked_name(row), row.a, row.b});
  for (const ComparedValue& row : c.measured)
    measured.push_back(
        {row.name, row.a, row.b, row.ratio_b_over_a ? fmt::format("{:.3g}", *row.ratio_b_over_a) : std::string("-")});
  ImGui::BeginChild("compared_params", {half, 0}, false);
  draw_columns_table("compared_params_table", {"parameter (* differs)", "A", "B"}, params);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("compared_measured", {half, 0}, false);
  draw_columns_table("compared_measured_table", {"measured", "A", "B", "B / A"}, measured);
  for (int run = 0; run < 2; ++run) {
    const std::string& line = run == 0 ? c.a_benchmark : c.b_benchmark;
    if (!line.empty()) draw_note(fmt::format("{}: {}", run_letter(run), line));
  }
  ImGui::EndChild();
  ImGui::EndChild();
  note_last_item("compare/table");
}

// One half of a side-by-side comparison: the step as its view draws it with `run` as its result.
void draw_half(const ViewContext& context, const RunResult* run, int index, const std::string& name, ImVec2 size) {
  ImGui::BeginChild(run_letter(index), size, false);
  draw_run_badge(index, name);
  ViewContext one = context;
  one.result = run;
  one.compare_result = nullptr;
  one.result_stale = index == 0 && context.result_stale;
  if (index == 1) {
    one.step_data = context.compare_step_data;
    one.step_data_error.clear();
  }
  set_view_height(ImGui::GetContentRegionAvail().y);
  draw_step_view(one);
  ImGui::EndChild();
}

}  // namespace

void draw_run_badge(int run, const std::string& name) {
  const std::string text = fmt::format("{}: {}", run_letter(run), name);
  const ImVec2 pad{6 * ui_scale(), 2 * ui_scale()};
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(at, {at.x + size.x + 2 * pad.x, at.y + size.y + 2 * pad.y}, run_color(run), 3 * ui_scale());
  draw->AddText({at.x + pad.x, at.y + pad.y}, IM_COL32(255, 255, 255, 255), text.c_str());
  ImGui::Dummy({size.x + 2 * pad.x, size.y + 2 * pad.y});
  note_last_item(fmt::format("compare/badge_{}", run == 0 ? "a" : "b"));
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
}

void draw_compared_step(const ViewContext& context) {
  const RunComparison& table = *context.comparison;
  const float table_h = std::min(table_rows_height(table), kTableMaxShare * ImGui::GetContentRegionAvail().y);
  const float figure_h = ImGui::GetContentRegionAvail().y - table_h - ImGui::GetStyle().ItemSpacing.y;
  const std::vector<LessonStep>& steps = context.lesson.text().steps;
  const std::string step_id = context.step < static_cast<int>(steps.size()) ? steps[context.step].id : "";
  if (step_compare_layout(context.lesson.id(), step_id) == CompareLayout::Overlaid) {
    ImGui::BeginChild("overlaid", {0, figure_h}, false);
    draw_run_badge(0, table.a_name);
    ImGui::SameLine();
    draw_run_badge(1, table.b_name);
    ImGui::SameLine();
    ImGui::TextDisabled("B dashed and paler, in A's colours");
    set_view_height(ImGui::GetContentRegionAvail().y);
    draw_step_view(context);
    ImGui::EndChild();
  } else {
    const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
    draw_half(context, context.result, 0, table.a_name, {half, figure_h});
    ImGui::SameLine();
    draw_half(context, context.compare_result, 1, table.b_name, {half, figure_h});
  }
  draw_comparison_table(table, table_h);
}

void add_compared_lines(const ViewContext& context, PlotSpec& spec, const RunLines& lines_of) {
  if (context.result == nullptr) return;
  std::vector<PlotLine> lines = lines_of(*context.result);
  if (context.compare_result == nullptr) {
    spec.lines.insert(spec.lines.end(), lines.begin(), lines.end());
    return;
  }
  // B's lines go first: a plot draws its first lines on top, so where both runs measured the same (a deterministic
  // training curve), B's pale dashes still show on A's line, and A shows between them.
  std::vector<PlotLine> compared;
  for (PlotLine& line : lines_of(*context.compare_result)) {
    // The same series of both runs in one colour, B's dashed and paler.
    for (const PlotLine& a : lines)
      if (a.name == line.name) line.color = a.color;
    compared.push_back(compared_run_line(std::move(line)));
    compared.back().name = "B: " + compared.back().name;
  }
  for (PlotLine& line : lines) line.name = "A: " + line.name;
  spec.lines.insert(spec.lines.end(), compared.begin(), compared.end());
  spec.lines.insert(spec.lines.end(), lines.begin(), lines.end());
}

}  // namespace dlsys::gui
