// The app shell: arranges the sidebar (or a lesson drop-down), the header with the step and run controls, the
// caption, the controls column and the lesson's view for the space there is, at any text size; the status bar below.
#include "app/gui/shell.h"

#include <GLFW/glfw3.h>
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/figure_size.h"
#include "app/gui/folded_band.h"
#include "app/gui/play_pace.h"
#include "app/gui/run_compare.h"
#include "app/gui/settings.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/theory_card.h"
#include "app/gui/widget_rects.h"
#include "app/views/view.h"
#include "engine/backend.h"
#include "engine/errors.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

namespace dlsys::gui {

namespace {

constexpr ImGuiWindowFlags kPanelFlags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                         ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
// Below this many points of window width the sidebar gives way to a drop-down, and below this many points of page
// width the controls column and the view become tabs: each keeps a usable size instead of shrinking to nothing.
constexpr float kSidebarMinWindowPoints = 900;
constexpr float kViewMinPoints = 420;
constexpr float kViewMinHeightLines = 6;
// Nor less than this share of the window: with large text in a small window the caption gives up its lines first,
// and only then does the page scroll, rather than leave a figure no room for its data.
constexpr float kViewMinWindowShare = 0.35f;

float view_min_height() {
  return std::max(kViewMinHeightLines * ImGui::GetTextLineHeightWithSpacing(),
                  kViewMinWindowShare * ImGui::GetIO().DisplaySize.y);
}

RunProgress run_progress_of(AppState& state, const Lesson& lesson) {
  if (!state.worker.busy() || state.worker.running_lesson() != lesson.id()) return {};
  return {true, state.worker.progress(), state.worker.progress_text()};
}

ViewContext make_view_context(AppState& state, bool figure) {
  LessonSession& session = state.session();
  const bool stale = session.result && !params_changed_since(*session.result, session.params).empty();
  const LessonSession::Comparison* compared = session.comparison ? &*session.comparison : nullptr;
  return ViewContext{current_lesson(state),
                     session.step,
                     session.result.get(),
                     state.fixed_time ? state.fixed_step_time_s : state.now_s - session.step_started_s,
                     state.presentation,
                     stale,
                     figure,
                     session.step_data.latest(),
                     session.step_data.error(),
                     run_progress_of(state, current_lesson(state)),
                     compared ? compared->b.get() : nullptr,
                     compared ? &compared->table : nullptr,
                     compared ? session.compared_step_data.latest() : nullptr};
}

void draw_lesson_view(AppState& state, bool figure) {
  const ViewContext context = make_view_context(state, figure);
  if (!figure) state.view_size = ImGui::GetContentRegionAvail();
  set_view_height(ImGui::GetContentRegionAvail().y);
  if (context.compare_result != nullptr) return draw_compared_step(context);
  const std::vector<LessonStep>& steps = context.lesson.text().steps;
  const std::string step_id = context.step < static_cast<int>(steps.size()) ? steps[context.step].id : "";
  if (StepView view = find_step_view(context.lesson.id(), step_id))
    view(context);
  else if (find_step_views(context.lesson.id()) == nullptr)
    draw_lesson_markdown(context.lesson.text().theory);
  else
    ImGui::TextDisabled("Step '%s' has no view: the lesson's view table lacks it.", step_id.c_str());
}

// The view with what qualifies its result: one line of marks above (stale, recorded, busy machine), one line of the
// run's notes below. Scrolls when the view needs more height than there is.
void draw_view_area(AppState& state, float height) {
  // Only the view itself scrolls: one scroll bar, beside what moves.
  ImGui::BeginChild("view_area", {0, height}, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const float width = ImGui::GetContentRegionAvail().x;
  draw_result_marks(state, width);
  const float notes_h = run_notes_height(state, width);
  // Every visit to a step opens the view at its top (its main figure), not where the step before it was scrolled to:
  // the view is a new child window for each visit (ImGui 1.86 cannot set the next window's scroll).
  ImGui::PushID(state.lesson_index);
  ImGui::PushID(static_cast<int>(state.session().step_started_s * 1000) ^ state.session().step);
  ImGui::BeginChild("view", {0, std::max(ImGui::GetContentRegionAvail().y - notes_h, view_min_height())}, false);
  draw_lesson_view(state, false);
  ImGui::EndChild();
  note_last_item("view");
  ImGui::PopID();
  ImGui::PopID();
  draw_run_notes(state, width);
  ImGui::EndChild();
}

void draw_controls_column(AppState& state) {
  const bool parameters_open = ImGui::CollapsingHeader("Parameters", ImGuiTreeNodeFlags_DefaultOpen);
  note_last_item("parameters");
  if (parameters_open) draw_parameters(state);
  draw_run_summary(state);
  // Before the theory card, which is long: the questions stay in reach without scrolling past it.
  const bool exercises_open = ImGui::CollapsingHeader("Exercises");
  note_last_item("exercises");
  if (exercises_open) draw_exercises(state);
  if (ImGui::CollapsingHeader("Theory", ImGuiTreeNodeFlags_DefaultOpen)) draw_theory(state);
}

// Row 1: the lesson (title, or a drop-down where there is no sidebar) and, right-aligned, the mode and export.
void draw_title_row(AppState& state, bool with_sidebar) {
  if (with_sidebar) {
    ImGui::PushFont(heading_font());
    ImGui::TextUnformatted(current_lesson(state).title().c_str());
    ImGui::PopFont();
  } else {
    draw_lesson_menu(state);
  }
  place_right_aligned(mode_and_export_width(state));
  draw_mode_and_export(state);
}

// Row 2: Prev / Play / Next, the step's title, and Run / Cancel right-aligned; the title moves to a line of its own
// when the three do not fit side by side.
void draw_step_row(AppState& state) {
  const float s = ui_scale();
  draw_step_buttons(state);
  const float run_w = run_controls_width(state);
  ImGui::SameLine();
  const float title_room = ImGui::GetContentRegionAvail().x - run_w - 2 * ImGui::GetStyle().ItemSpacing.x;
  if (title_room >= 220 * s) {
    draw_step_title(state, title_room);
    place_right_aligned(run_w);
    draw_run_controls(state);
  } else {
    place_right_aligned(run_w);
    draw_run_controls(state);
    draw_step_title(state, ImGui::GetContentRegionAvail().x);
  }
}

// The caption; a long one scrolls in its own box rather than pushing the view off the window. Where the window is
// short of room it folds to one line (whole on hover, or open after a click) so the view keeps the height.
void draw_caption(const AppState& state, float max_height) {
  const Lesson& lesson = current_lesson(state);
  const int step = state.sessions[state.lesson_index].step;
  if (step >= static_cast<int>(lesson.step_count())) return;
  const std::string& caption = lesson.text().steps[step].caption;
  const float width = ImGui::GetContentRegionAvail().x;
  const Band band{caption, caption, 0, 0, "caption", ""};
  if (band_folds(band)) return draw_folded_bands({band}, width);
  const float height = ImGui::CalcTextSize(caption.c_str(), nullptr, false, width).y;
  const bool boxed = height > max_height;
  if (boxed) ImGui::BeginChild("caption", {0, max_height}, false);
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(caption.c_str());
  ImGui::PopTextWrapPos();
  fold_band_on_click(band);
  if (boxed) ImGui::EndChild();
}

// The controls column's width beside the view, or 0 where the view and the controls become tabs.
float controls_column_width(const AppState& state, float page_w) {
  const float s = ui_scale();
  if (!state.panels_shown()) return 0;
  const float controls_w = std::min(360 * s, std::max(page_w * 0.3f, 240 * s));
  return page_w - controls_w >= kViewMinPoints * s ? controls_w : 0;
}

// The least height of the body: the view's least height and what stands around it (the tabs, the marks, the notes).
float min_body_height(const AppState& state) {
  const bool tabs = state.panels_shown() && controls_column_width(state, ImGui::GetContentRegionAvail().x) == 0;
  const float width = ImGui::GetContentRegionAvail().x;
  return view_min_height() + (tabs ? ImGui::GetFrameHeightWithSpacing() : 0) + result_marks_height(state, width) +
         run_notes_height(state, width) + 2 * ImGui::GetStyle().ItemSpacing.y;
}

void draw_body(AppState& state, float height) {
  if (!state.panels_shown()) return draw_view_area(state, height);
  const float page_w = ImGui::GetContentRegionAvail().x;
  const float controls_w = controls_column_width(state, page_w);
  if (controls_w > 0) {
    ImGui::BeginChild("controls", {controls_w, height}, true);
    draw_controls_column(state);
    ImGui::EndChild();
    ImGui::SameLine();
    return draw_view_area(state, height);
  }
  if (!ImGui::BeginTabBar("page")) return;
  const float tab_h = ImGui::GetFrameHeightWithSpacing();
  if (ImGui::BeginTabItem("View")) {
    note_last_item("tab/view");
    draw_view_area(state, height - tab_h);
    ImGui::EndTabItem();
  } else {
    note_last_item("tab/view");
  }
  const bool params_open = ImGui::BeginTabItem("Parameters");
  note_last_item("tab/parameters");
  if (params_open) {
    ImGui::BeginChild("controls", {0, height - tab_h}, true);
    draw_parameters(state);
    draw_run_summary(state);
    ImGui::EndChild();
    ImGui::EndTabItem();
  }
  const bool theory_open = ImGui::BeginTabItem("Theory");
  note_last_item("tab/theory");
  if (theory_open) {
    ImGui::BeginChild("theory", {0, height - tab_h}, false);
    draw_theory(state);
    ImGui::EndChild();
    ImGui::EndTabItem();
  }
  const bool exercises_open = ImGui::BeginTabItem("Exercises");
  note_last_item("tab/exercises");
  if (exercises_open) {
    ImGui::BeginChild("exercises", {0, height - tab_h}, false);
    draw_exercises(state);
    ImGui::EndChild();
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

}  // namespace

void set_message(AppState& state, std::string text, bool is_error) {
  state.message = std::move(text);
  state.message_is_error = is_error;
  state.message_s = state.now_s;
}

void report_written(AppState& state, const std::string& path, const std::string& detail) {
  state.written_files.push_back(path);
  set_message(state, "wrote " + path + (detail.empty() ? "" : " (" + detail + ")"), false);
}

void init_sessions(AppState& state) {
  for (const Lesson* lesson : all_lessons()) {
    LessonSession session;
    session.params = ParamValues::defaults(lesson->params());
    state.sessions.push_back(std::move(session));
  }
}

void start_run(AppState& state) {
  const Lesson& lesson = current_lesson(state);
  LessonSession& session = state.session();
  try {
    const BackendKind backend = backend_for(lesson, state.backend_choice);
    lesson.validate(session.params, backend);
    state.worker.start(lesson, session.params, backend);
    session.last_error.clear();
  } catch (const std::exception& e) {
    session.last_error = e.what();
    set_message(state, "cannot run: " + session.last_error, true);
  }
}

void poll_worker(AppState& state) {
  auto outcome = state.worker.take_finished();
  if (!outcome) return;
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i) {
    if (lessons[i]->id() != outcome->lesson_id) continue;
    LessonSession& session = state.sessions[i];
    session.last_run_wall_s = outcome->wall_s;
    if (outcome->result) {
      if (state.record_progress) record_finished_run(state.progress, outcome->lesson_id, outcome->result->backend.kind);
      show_result(session, outcome->result);
      session.last_error.clear();
    } else {
      session.last_error = "run stopped: " + outcome->error;
      set_message(state, session.last_error, outcome->error != "cancelled");  // visible in presentation mode too
    }
  }
}

void begin_frame(AppState& state) {
  if (state.pending_lesson_index >= 0) {
    state.lesson_index = std::clamp(state.pending_lesson_index, 0, static_cast<int>(state.sessions.size()) - 1);
    state.pending_lesson_index = -1;
    state.playing = false;
    state.session().step_started_s = state.now_s;
  }
  if (!state.pending_state_file.empty()) {
    const std::string path = std::move(state.pending_state_file);
    state.pending_state_file.clear();
    try {
      open_state_file(path, state);
      set_message(state, "opened " + path, false);
    } catch (const std::exception& e) {
      set_message(state, e.what(), true);
    }
  }
  if (!state.pending_run_file.empty()) {
    const std::string path = std::move(state.pending_run_file);
    state.pending_run_file.clear();
    try {
      open_run_file(path, state);
      set_message(state, "opened the recorded run " + path, false);
    } catch (const std::exception& e) {
      set_message(state, e.what(), true);  // the window stays as it was
    }
  }
  LessonSession& session = state.session();
  session.step_data.request(current_lesson(state), session.params);
  refresh_comparison(session, current_lesson(state));
  if (state.playing && state.now_s - session.step_started_s >
                           play_seconds_for_caption(current_lesson(state).text().steps[session.step].caption)) {
    if (session.step + 1 < static_cast<int>(current_lesson(state).step_count()))
      go_to_step(state, session.step + 1);
    else
      state.playing = false;
  }
  note_step_shown(state);
}

void handle_keys(AppState& state) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  LessonSession& session = state.session();
  // No key repeat: one press is one step, however long the key is held.
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow), false)) go_to_step(state, session.step + 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow), false)) go_to_step(state, session.step - 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) toggle_play(state);
  if (ImGui::IsKeyPressed(GLFW_KEY_F5, false)) toggle_presentation(state);
  if (ImGui::IsKeyPressed(GLFW_KEY_F6, false) && state.presentation)
    state.presentation_panels = !state.presentation_panels;
  if (ImGui::IsKeyPressed(GLFW_KEY_F12, false)) state.want_window_png = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_F1, false)) toggle_keys_help(state);
  for (const ImWchar c : io.InputQueueCharacters)
    if (c == '?') toggle_keys_help(state);
  if (ImGui::IsKeyPressed(GLFW_KEY_R, false) && !io.KeyCtrl && !state.worker.busy()) start_run(state);
  using Toggle = std::string (*)(LessonSession&);
  for (const auto& [key, toggle] : {std::pair<int, Toggle>{GLFW_KEY_P, toggle_pin}, {GLFW_KEY_C, toggle_comparison}})
    if (ImGui::IsKeyPressed(key, false) && !io.KeyCtrl)
      if (const std::string done = toggle(session); !done.empty()) set_message(state, done, false);
  if (io.KeyCtrl) {
    float& scale = state.presentation ? state.presentation_scale : state.desk_scale;
    const float before = scale;
    if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD, false))
      scale = std::min(3.0f, scale + 0.25f);
    if (ImGui::IsKeyPressed(GLFW_KEY_MINUS, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT, false))
      scale = std::max(1.0f, scale - 0.25f);
    if (scale != before) {
      state.fonts_dirty = true;
      set_message(state, fmt::format("text scale {:.2f}x", scale), false);
    }
  }
}

void draw_shell(AppState& state) {
  begin_widget_frame();
  const ImGuiIO& io = ImGui::GetIO();
  const float s = ui_scale();
  const float status_h = ImGui::GetFrameHeight() + 6 * s;
  const float W = io.DisplaySize.x, H = io.DisplaySize.y - status_h;
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({W, H});
  ImGui::Begin("dlsys-lab", nullptr, kPanelFlags);

  const bool with_sidebar = state.panels_shown() && W / s >= kSidebarMinWindowPoints;
  if (with_sidebar) {
    draw_sidebar(state, std::min(280.0f * s, W * 0.22f), ImGui::GetContentRegionAvail().y);
    ImGui::SameLine();
  }
  // The page scrolls only when even the minimum sizes do not fit (3x text in a small window).
  ImGui::BeginChild("page", {0, 0}, false);
  draw_title_row(state, with_sidebar);
  draw_step_row(state);
  // Enlarged text leaves the caption fewer lines of its own (it scrolls in its box), so the view keeps room for a
  // figure.
  // The caption box takes at most a share of the window that shrinks as the text grows, and never the view's least
  // height (with the tabs, the marks and the notes around it); it keeps one line, and a long caption scrolls in it.
  const float min_body_h = min_body_height(state);
  const float caption_room = ImGui::GetContentRegionAvail().y - min_body_h - 2 * ImGui::GetStyle().ItemSpacing.y;
  draw_caption(state, std::max(ImGui::GetTextLineHeightWithSpacing(),
                               std::min(H * 0.22f / state.text_enlargement(), caption_room)));
  ImGui::Separator();
  draw_body(state, std::max(ImGui::GetContentRegionAvail().y, min_body_h));
  ImGui::EndChild();
  ImGui::End();
  draw_status_bar(state, H, W, status_h);
  draw_keys_help(state);
  draw_progress_dialogs(state);
}

void draw_view_only(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize(io.DisplaySize);
  ImGui::Begin("figure", nullptr, kPanelFlags);
  if (state.figure_title) {
    const Lesson& lesson = current_lesson(state);
    const int step = state.session().step;
    ImGui::PushFont(heading_font());
    ImGui::PushTextWrapPos(0);
    ImGui::Text("%s - step %d: %s", lesson.title().c_str(), step + 1, lesson.text().steps[step].title.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
  }
  draw_lesson_view(state, true);
  ImGui::End();
}

}  // namespace dlsys::gui
