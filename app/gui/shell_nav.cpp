// Getting around: the lesson list and the step controls.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/fit_text.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "lessons/registry.h"

namespace dlsys::gui {

const Lesson& current_lesson(const AppState& state) { return *all_lessons()[state.lesson_index]; }

void go_to_step(AppState& state, int step) {
  LessonSession& session = state.session();
  const int count = static_cast<int>(current_lesson(state).step_count());
  session.step = std::clamp(step, 0, std::max(0, count - 1));
  session.step_started_s = state.now_s;
}

void toggle_play(AppState& state) {
  state.playing = !state.playing;
  state.session().step_started_s = state.now_s;
}

void toggle_presentation(AppState& state) {
  state.presentation = !state.presentation;
  state.fonts_dirty = true;
}

void request_lesson(AppState& state, int index) { state.pending_lesson_index = index; }

float button_width(const std::string& label) {
  return ImGui::CalcTextSize(label.c_str(), nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}

float buttons_width(std::initializer_list<std::string> labels) {
  float width = 0;
  for (const auto& label : labels) width += button_width(label);
  return width + ImGui::GetStyle().ItemSpacing.x * static_cast<float>(labels.size() > 0 ? labels.size() - 1 : 0);
}

bool place_right_aligned(float width) {
  ImGui::SameLine();
  const float right = ImGui::GetWindowContentRegionMax().x;
  const float x = right - width;
  if (ImGui::GetCursorPosX() <= x) {
    ImGui::SameLine(x);
    return true;
  }
  ImGui::NewLine();
  ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX(), right - width));
  return false;
}

namespace {

bool lesson_is_running(const AppState& state, const Lesson& lesson) {
  return state.worker.busy() && state.worker.running_lesson() == lesson.id();
}

}  // namespace

void draw_sidebar(AppState& state, float width, float height) {
  const float s = ui_scale();
  ImGui::BeginChild("sidebar", {width, height}, true);
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("dlsys-lab");
  ImGui::PopFont();
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("deep-learning systems, run live");
  ImGui::PopTextWrapPos();
  draw_sidebar_actions(state);
  ImGui::Separator();
  std::string chapter;
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i) {
    const Lesson& lesson = *lessons[i];
    if (lesson.chapter() != chapter) {
      chapter = lesson.chapter();
      ImGui::Spacing();
      ImGui::PushTextWrapPos(0);
      ImGui::TextDisabled("%s", chapter.c_str());
      ImGui::PopTextWrapPos();
    }
    // Titles wrap instead of being cut; a running lesson says so on a line of its own, and a started one shows its
    // progress below (wrapped too, so it stays whole at any text size).
    const float wrap_w = ImGui::GetContentRegionAvail().x - 4 * s;
    const std::string title = lesson.title();
    const ImVec2 title_size = ImGui::CalcTextSize(title.c_str(), nullptr, false, wrap_w);
    const bool running = lesson_is_running(state, lesson);
    const float line_h = ImGui::GetTextLineHeight();
    const LessonProgressSummary progress = lesson_progress(state, lesson);
    const float progress_h = progress_line_height(progress, wrap_w - 8 * s);
    const ImVec2 pos = ImGui::GetCursorScreenPos();
    ImGui::PushID(lesson.id().c_str());
    if (ImGui::Selectable("##lesson", state.lesson_index == static_cast<int>(i), 0,
                          {0, title_size.y + (running ? line_h : 0) + progress_h}))
      request_lesson(state, static_cast<int>(i));
    note_last_item("sidebar/" + lesson.id());
    if (progress.started() && ImGui::IsItemHovered())
      ImGui::SetTooltip("%s", progress_details(state.progress, lesson.id(), progress).c_str());
    ImGui::PopID();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), pos, text_color(), title.c_str(), nullptr, wrap_w);
    if (running)
      draw->AddText({pos.x + 8 * s, pos.y + title_size.y}, highlight_color(),
                    fmt::format("running {:.0f}%", 100 * state.worker.progress()).c_str());
    draw_progress_line(progress, {pos.x + 8 * s, pos.y + title_size.y + (running ? line_h : 0)}, wrap_w - 8 * s);
  }
  ImGui::EndChild();
  note_last_item("sidebar");  // where the list can be scrolled, when it is longer than the window
}

float lesson_menu_width(const AppState& state) {
  const ImGuiStyle& style = ImGui::GetStyle();
  return std::min(ImGui::CalcTextSize(current_lesson(state).title().c_str()).x + ImGui::GetFrameHeight() +
                      2 * style.FramePadding.x + 2 * style.ItemInnerSpacing.x,
                  ImGui::GetContentRegionAvail().x * 0.45f);
}

void draw_lesson_menu(AppState& state) {
  ImGui::SetNextItemWidth(lesson_menu_width(state));
  // As tall as the window allows: every lesson in sight, none behind a scroll bar.
  const bool open =
      ImGui::BeginCombo("##lessons", current_lesson(state).title().c_str(), ImGuiComboFlags_HeightLargest);
  note_last_item("lesson_menu");
  if (!open) return;
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i) {
    const Lesson& lesson = *lessons[i];
    const LessonProgressSummary progress = lesson_progress(state, lesson);
    const std::string label = lesson.title() + (lesson_is_running(state, lesson) ? "  (running)" : "") +
                              (progress.started() ? "  (" + progress_line(progress) + ")" : "");
    ImGui::PushID(lesson.id().c_str());
    if (ImGui::Selectable(label.c_str(), state.lesson_index == static_cast<int>(i)))
      request_lesson(state, static_cast<int>(i));
    note_last_item("sidebar/" + lesson.id());
    ImGui::PopID();
  }
  ImGui::Separator();
  draw_lesson_actions(state);  // where there is no sidebar, its lesson menu ends the list
  ImGui::EndCombo();
}

namespace {
bool at_last_step(const AppState& state) {
  return state.sessions[state.lesson_index].step + 1 >= static_cast<int>(current_lesson(state).step_count());
}
constexpr const char* kNextLessonLabel = "Next lesson >";
}  // namespace

float step_buttons_width(const AppState& state) {
  return buttons_width({"< Prev", state.playing ? "Pause" : "Play", at_last_step(state) ? kNextLessonLabel : "Next >"});
}

void draw_step_buttons(AppState& state) {
  const LessonSession& session = state.session();
  const int count = static_cast<int>(current_lesson(state).step_count());
  ImGui::BeginDisabled(session.step == 0);
  if (ImGui::Button("< Prev")) go_to_step(state, session.step - 1);
  note_last_item("step/prev");
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(state.playing ? "Pause###play" : "Play###play")) toggle_play(state);
  note_last_item("step/play");
  ImGui::SameLine();
  if (!at_last_step(state)) {
    if (ImGui::Button("Next >")) go_to_step(state, std::min(session.step + 1, count - 1));
    note_last_item("step/next");
    return;
  }
  // The last step leads on to the next lesson, from its first step.
  const int next = state.lesson_index + 1;
  const bool has_next = next < static_cast<int>(all_lessons().size());
  ImGui::BeginDisabled(!has_next);
  if (ImGui::Button(kNextLessonLabel)) {
    state.sessions[next].step = 0;
    request_lesson(state, next);
  }
  note_last_item("step/next_lesson");
  ImGui::EndDisabled();
  if (has_next && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", all_lessons()[next]->title().c_str());
}

void draw_step_title(const AppState& state, float width) {
  const Lesson& lesson = current_lesson(state);
  const int step = state.sessions[state.lesson_index].step;
  if (step >= static_cast<int>(lesson.step_count())) return;
  // One line, cut where it does not fit (large text in a small window), whole on hover: the view keeps the height.
  const std::string title =
      fmt::format("Step {} of {}: {}", step + 1, lesson.step_count(), lesson.text().steps[step].title);
  ImGui::PushFont(heading_font());
  const std::string shown = fitted_text(title, "", width);
  ImGui::TextUnformatted(shown.c_str());
  ImGui::PopFont();
  if (shown != title && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", title.c_str());
}

}  // namespace dlsys::gui
