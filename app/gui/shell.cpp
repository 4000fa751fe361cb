#include "app/gui/shell.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>

#include "app/gui/file_picker.h"
#include "app/gui/settings.h"
#include "app/gui/theme.h"
#include "app/gui/theory_card.h"
#include "app/views/view.h"
#include "engine/backend.h"
#include "engine/errors.h"
#include "lessons/registry.h"

namespace dlsys::gui {

namespace {

constexpr double kPlaySecondsPerStep = 6.0;
constexpr ImGuiWindowFlags kPanelFlags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                         ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;

const Lesson& current_lesson(const AppState& state) { return *all_lessons()[state.lesson_index]; }

constexpr double kMessageSeconds = 8.0;

void go_to_step(AppState& state, int step) {
  LessonSession& session = state.session();
  const int count = static_cast<int>(current_lesson(state).step_count());
  session.step = std::clamp(step, 0, std::max(0, count - 1));
  session.step_started_s = state.now_s;
}

void select_lesson(AppState& state, int index) {
  state.lesson_index = index;
  state.playing = false;
  state.session().step_started_s = state.now_s;
}

void write_text(AppState& state, const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  if (!file) return set_message(state, "cannot write " + path, true);
  file << text;
  set_message(state, "wrote " + path, false);
}

void draw_sidebar(AppState& state, float width, float height) {
  ImGui::BeginChild("sidebar", {width, height}, true);
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("dlsys-lab");
  ImGui::PopFont();
  ImGui::TextDisabled("deep-learning systems, run live");
  ImGui::Separator();
  std::string chapter;
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i) {
    if (lessons[i]->chapter() != chapter) {
      chapter = lessons[i]->chapter();
      ImGui::Spacing();
      ImGui::TextDisabled("%s", chapter.c_str());
    }
    const bool running = state.worker.busy() && state.worker.running_lesson() == lessons[i]->id();
    const std::string label = lessons[i]->title() + (running ? "  (running)" : "") + "##" + lessons[i]->id();
    if (ImGui::Selectable(label.c_str(), state.lesson_index == static_cast<int>(i))) select_lesson(state, static_cast<int>(i));
  }
  ImGui::EndChild();
}

void draw_step_bar(AppState& state) {
  const Lesson& lesson = current_lesson(state);
  LessonSession& session = state.session();
  const int count = static_cast<int>(lesson.step_count());
  ImGui::BeginDisabled(session.step == 0);
  if (ImGui::Button("< Prev")) go_to_step(state, session.step - 1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(state.playing ? "Pause" : "Play")) {
    state.playing = !state.playing;
    session.step_started_s = state.now_s;
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(session.step + 1 >= count);
  if (ImGui::Button("Next >")) go_to_step(state, session.step + 1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::PushFont(heading_font());
  if (count > 0) ImGui::Text("Step %d of %d: %s", session.step + 1, count, lesson.text().steps[session.step].title.c_str());
  ImGui::PopFont();
}

void draw_caption(const AppState& state) {
  const Lesson& lesson = current_lesson(state);
  const int step = state.sessions[state.lesson_index].step;
  if (step < static_cast<int>(lesson.step_count())) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(lesson.text().steps[step].caption.c_str());
    ImGui::PopTextWrapPos();
  }
}

void draw_param(AppState& state, const ParamSpec& spec) {
  LessonSession& session = state.session();
  const Lesson& lesson = current_lesson(state);
  const auto specs = lesson.params();
  auto commit = [&](const std::string& text) {
    try {
      ParamValues next = session.params;
      next.set(specs, spec.key, text);
      lesson.validate(next);
      session.params = next;
      session.param_errors.erase(spec.key);
    } catch (const BadInput& e) {
      session.param_errors[spec.key] = e.what();
    }
  };
  ImGui::PushID(spec.key.c_str());
  ImGui::TextUnformatted(spec.unit.empty() ? spec.label.c_str() : (spec.label + " (" + spec.unit + ")").c_str());
  if (!spec.help.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s\nallowed: %s", spec.help.c_str(), spec.allowed().c_str());
  ImGui::SetNextItemWidth(-1);
  const ParamValue& value = session.params.all().at(spec.key);
  if (spec.type == ParamType::Choice) {
    if (ImGui::BeginCombo("##v", value.text.c_str())) {
      for (const auto& choice : spec.choices)
        if (ImGui::Selectable(choice.c_str(), choice == value.text)) commit(choice);
      ImGui::EndCombo();
    }
  } else if ((spec.type == ParamType::Integer || spec.type == ParamType::Real) && spec.max - spec.min <= 1e7) {
    // Sliders for numbers: the range is visible and a drag never leaves it. Ctrl+click types a value, which is not
    // clamped: one out of range is refused with the allowed range, like on the command line.
    double v = value.number;
    const bool wide = spec.min > 0 && spec.max / spec.min >= 100;
    const ImGuiSliderFlags flags = wide ? ImGuiSliderFlags_Logarithmic : 0;
    const char* format = spec.type == ParamType::Integer ? "%.0f" : "%.4g";
    if (ImGui::SliderScalar("##v", ImGuiDataType_Double, &v, &spec.min, &spec.max, format, flags)) {
      if (spec.type == ParamType::Integer) v = std::round(v);
      commit(spec.type == ParamType::Integer ? fmt::format("{:.0f}", v) : fmt::format("{:.6g}", v));
    }
  } else if (spec.type == ParamType::File) {
    std::string& text = session.edit_text.try_emplace(spec.key, value.text).first->second;
    const float button_w = ImGui::CalcTextSize("Open...").x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SetNextItemWidth(-button_w - ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::InputText("##v", &text, ImGuiInputTextFlags_EnterReturnsTrue) || ImGui::IsItemDeactivatedAfterEdit()) commit(text);
    ImGui::SameLine();
    static FilePicker picker;
    if (ImGui::Button("Open...")) open_file_picker("Choose a file", picker, text, ".json");
    std::string chosen;
    if (draw_file_picker("Choose a file", picker, chosen)) {
      text = chosen;
      commit(chosen);
    }
  } else {
    std::string& text = session.edit_text.try_emplace(spec.key, value.text).first->second;
    if (ImGui::InputText("##v", &text, ImGuiInputTextFlags_EnterReturnsTrue) || ImGui::IsItemDeactivatedAfterEdit()) commit(text);
  }
  if (auto it = session.param_errors.find(spec.key); it != session.param_errors.end()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(IM_COL32(230, 60, 50, 255)));
    ImGui::TextWrapped("%s", it->second.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::PopID();
}

void draw_run_bar(AppState& state) {
  const Lesson& lesson = current_lesson(state);
  LessonSession& session = state.session();
  const bool busy = state.worker.busy();
  const bool this_lesson_running = busy && state.worker.running_lesson() == lesson.id();
  if (!busy) {
    if (ImGui::Button("Run", {-1, 0})) start_run(state);
  } else if (ImGui::Button(this_lesson_running ? "Cancel" : "Cancel the other run", {-1, 0})) {
    state.worker.cancel();
  }
  if (busy) {
    ImGui::ProgressBar(static_cast<float>(state.worker.progress()), {-1, 0}, state.worker.progress_text().c_str());
  } else if (!session.last_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(IM_COL32(230, 60, 50, 255)));
    ImGui::TextWrapped("%s", session.last_error.c_str());
    ImGui::PopStyleColor();
  } else if (session.result) {
    ImGui::TextDisabled("last run: %.2f s on %s%s", session.last_run_wall_s, session.result->backend.kind.c_str(),
                        session.result->backend.emulated ? " (emulated)" : "");
  }
  const char* backends[] = {"auto", "cpu", "cuda"};
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##backend", ("backend: " + state.backend_choice).c_str())) {
    for (const char* b : backends) {
      const bool unavailable = std::string(b) == "cuda" && !cuda_status().available;
      ImGui::BeginDisabled(unavailable);
      if (ImGui::Selectable(b, state.backend_choice == b)) state.backend_choice = b;
      ImGui::EndDisabled();
    }
    ImGui::EndCombo();
  }
}

void draw_export_menu(AppState& state) {
  const Lesson& lesson = current_lesson(state);
  LessonSession& session = state.session();
  if (ImGui::Button("Export / state")) ImGui::OpenPopup("export");
  if (ImGui::BeginPopup("export")) {
    if (ImGui::MenuItem("Window as PNG", "F12")) state.want_window_png = true;
    for (int scale : {1, 2, 4})
      if (ImGui::MenuItem(fmt::format("Figure (view) at {}x", scale).c_str())) state.want_figure_scale = scale;
    ImGui::Separator();
    ImGui::BeginDisabled(!session.result);
    if (ImGui::MenuItem("Last run as CSV")) write_text(state, timestamped_output_path(lesson.id(), "csv"), to_csv(*session.result));
    if (ImGui::MenuItem("Last run as JSON"))
      write_text(state, timestamped_output_path(lesson.id(), "json"), to_json(*session.result).dump(2) + "\n");
    ImGui::EndDisabled();
    ImGui::Separator();
    if (ImGui::MenuItem("Save lesson state")) {
      const std::string path = timestamped_output_path(lesson.id() + "-state", "json");
      try {
        save_state_file(path, lesson.id(), session.step, session.params);
        set_message(state, "saved " + path, false);
      } catch (const BadInput& e) {
        set_message(state, e.what(), true);
      }
    }
    if (ImGui::MenuItem("Open lesson state...")) state.show_open_dialog = true;
    ImGui::EndPopup();
  }
  // The picker opens outside the menu popup, which has closed by now.
  static FilePicker picker;
  if (state.show_open_dialog) {
    open_file_picker("Open lesson state", picker, output_dir(), ".json");
    state.show_open_dialog = false;
  }
  std::string chosen;
  if (draw_file_picker("Open lesson state", picker, chosen)) {
    try {
      open_state_file(chosen, state);
      set_message(state, "opened " + chosen, false);
    } catch (const BadInput& e) {
      set_message(state, e.what(), true);
    }
  }
}

void draw_banner(const AppState& state, float width) {
  const CudaStatus& cuda = cuda_status();
  const RunResult* result = state.sessions[state.lesson_index].result.get();
  std::string text;
  if (cuda.compiled && !cuda.available) text = "CUDA unavailable: " + cuda.reason + ". Running on the CPU backend.";
  else if (!cuda.compiled) text = "CUDA backend not compiled in (no nvcc at build time). Running on the CPU backend.";
  if (result && result->backend.emulated) text += (text.empty() ? "" : "  |  ") + std::string("This run was emulated: ") +
                                                  (result->backend.notes.empty() ? "" : result->backend.notes.front());
  if (text.empty()) return;
  const float s = ui_scale();
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const float h = ImGui::CalcTextSize(text.c_str(), nullptr, false, width - 16 * s).y + 8 * s;
  ImGui::GetWindowDrawList()->AddRectFilled(pos, {pos.x + width, pos.y + h}, warning_color(), 3 * s);
  ImGui::SetCursorScreenPos({pos.x + 8 * s, pos.y + 4 * s});
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - 16 * s);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::SetCursorScreenPos({pos.x, pos.y + h + 4 * s});
}

void draw_status_bar(AppState& state, float y, float width, float height) {
  ImGui::SetNextWindowPos({0, y});
  ImGui::SetNextWindowSize({width, height});
  ImGui::Begin("status", nullptr, kPanelFlags);
  // Asked once: the summary reads /proc, which is too slow to repeat every frame.
  static const std::string summary = backend_summary(cuda_status().available ? BackendKind::Cuda : BackendKind::Cpu);
  ImGui::TextUnformatted(summary.c_str());
  if (cuda_status().compiled && !cuda_status().available) {
    ImGui::SameLine();
    // In presentation mode the room needs the fact, not the error string (the desk banner shows it in full).
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(highlight_color()), "| CUDA unavailable%s%s",
                       state.presentation ? "" : ": ", state.presentation ? "" : cuda_status().reason.c_str());
  }
  // The last action's outcome; in presentation mode, the keys when there is nothing to report.
  if (!state.message.empty() && state.now_s - state.message_s < kMessageSeconds) {
    ImGui::SameLine();
    ImGui::TextColored(state.message_is_error ? ImVec4(0.9f, 0.25f, 0.2f, 1) : ImGui::ColorConvertU32ToFloat4(muted_text_color()),
                       "| %s", state.message.c_str());
  } else if (state.presentation) {
    ImGui::SameLine();
    ImGui::TextDisabled("|  Left / Right: step   Space: play   R: run   Ctrl +/-: text size   F5: desk mode");
  }
  if (state.frame_ms > 0) {  // right-aligned, and only where it does not cover the text before it
    const std::string fps = fmt::format("{:.0f} fps", 1000.0 / state.frame_ms);
    const float x = width - ImGui::CalcTextSize(fps.c_str()).x - 12 * ui_scale();
    ImGui::SameLine();
    if (ImGui::GetCursorPosX() < x) {
      ImGui::SameLine(x);
      ImGui::TextDisabled("%s", fps.c_str());
    } else {
      ImGui::NewLine();
    }
  }
  ImGui::End();
}

void draw_header_buttons(AppState& state, float main_x, float main_w) {
  const char* mode_label = state.presentation ? "Desk mode (F5)" : "Presentation (F5)";
  // Presentation mode hides the controls column, so Run / Cancel (and progress) move up here.
  const bool busy = state.worker.busy();
  const std::string run_label = !state.presentation ? ""
                                : busy ? fmt::format("Cancel ({:.0f}%)", 100 * state.worker.progress())
                                       : std::string("Run (R)");
  const ImGuiStyle& style = ImGui::GetStyle();
  float buttons_w = ImGui::CalcTextSize(mode_label).x + ImGui::CalcTextSize("Export / state").x +
                    4 * style.FramePadding.x + style.ItemSpacing.x;
  if (!run_label.empty()) buttons_w += ImGui::CalcTextSize("Cancel (100%)").x + 2 * style.FramePadding.x + style.ItemSpacing.x;
  ImGui::SameLine();
  if (ImGui::GetCursorPosX() + buttons_w <= main_x + main_w) ImGui::SameLine(main_x + main_w - buttons_w);
  else ImGui::NewLine();
  if (!run_label.empty()) {
    if (ImGui::Button((run_label + "###run").c_str())) busy ? state.worker.cancel() : start_run(state);
    ImGui::SameLine();
  }
  if (ImGui::Button(mode_label)) {
    state.presentation = !state.presentation;
    state.fonts_dirty = true;
  }
  ImGui::SameLine();
  draw_export_menu(state);
}

ViewContext make_view_context(AppState& state) {
  LessonSession& session = state.session();
  return ViewContext{current_lesson(state), session.params, session.step, session.result.get(),
                     state.fixed_time ? state.fixed_step_time_s : state.now_s - session.step_started_s, state.presentation};
}

void draw_lesson_view(AppState& state) {
  ViewContext context = make_view_context(state);
  const bool running = state.worker.busy() && state.worker.running_lesson() == context.lesson.id();
  set_run_progress(running, state.worker.progress(), state.worker.progress_text());
  state.view_size = ImGui::GetContentRegionAvail();
  if (LessonView view = find_lesson_view(context.lesson.id())) view(context);
  else draw_lesson_markdown(context.lesson.text().theory);
}

}  // namespace

void set_message(AppState& state, std::string text, bool is_error) {
  state.message = std::move(text);
  state.message_is_error = is_error;
  state.message_s = state.now_s;
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
    lesson.validate(session.params);
    state.worker.start(lesson, session.params, resolve_backend(state.backend_choice));
    session.last_error.clear();
  } catch (const BadInput& e) {
    session.last_error = e.what();
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
      session.result = outcome->result;
      session.last_error.clear();
    } else {
      session.last_error = "run stopped: " + outcome->error;
      set_message(state, session.last_error, outcome->error != "cancelled");  // visible in presentation mode too
    }
  }
}

void handle_keys(AppState& state) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  LessonSession& session = state.session();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) go_to_step(state, session.step + 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) go_to_step(state, session.step - 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) {
    state.playing = !state.playing;
    session.step_started_s = state.now_s;
  }
  if (ImGui::IsKeyPressed(GLFW_KEY_F5, false)) {
    state.presentation = !state.presentation;
    state.fonts_dirty = true;
  }
  if (ImGui::IsKeyPressed(GLFW_KEY_F12, false)) state.want_window_png = true;
  if (ImGui::IsKeyPressed(GLFW_KEY_R, false) && !io.KeyCtrl && !state.worker.busy()) start_run(state);
  if (io.KeyCtrl) {
    float& scale = state.presentation ? state.presentation_scale : state.desk_scale;
    const float before = scale;
    if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD, false)) scale = std::min(3.0f, scale + 0.25f);
    if (ImGui::IsKeyPressed(GLFW_KEY_MINUS, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT, false)) scale = std::max(1.0f, scale - 0.25f);
    if (scale != before) {
      state.fonts_dirty = true;
      set_message(state, fmt::format("text scale {:.2f}x", scale), false);
    }
  }
}

void draw_shell(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  const float s = ui_scale();
  const Lesson& lesson = current_lesson(state);
  LessonSession& session = state.session();
  if (state.playing && state.now_s - session.step_started_s > kPlaySecondsPerStep) {
    if (session.step + 1 < static_cast<int>(lesson.step_count())) go_to_step(state, session.step + 1);
    else state.playing = false;
  }

  const float status_h = ImGui::GetFrameHeight() + 6 * s;
  const float W = io.DisplaySize.x, H = io.DisplaySize.y - status_h;
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({W, H});
  ImGui::Begin("dlsys-lab", nullptr, kPanelFlags);

  const float sidebar_w = state.presentation ? 0.0f : std::min(280.0f * s, W * 0.22f);
  if (!state.presentation) {
    draw_sidebar(state, sidebar_w, ImGui::GetContentRegionAvail().y);
    ImGui::SameLine();
  }
  ImGui::BeginGroup();
  const float main_x = ImGui::GetCursorPosX();
  const float main_w = ImGui::GetContentRegionAvail().x;
  // Header: the lesson title (desk mode only), the step bar, and the mode toggle and export menu right-aligned.
  if (!state.presentation) {
    ImGui::PushFont(heading_font());
    ImGui::TextUnformatted(lesson.title().c_str());
    ImGui::PopFont();
    draw_header_buttons(state, main_x, main_w);
    draw_banner(state, main_w);
    draw_step_bar(state);
  } else {
    draw_step_bar(state);
    draw_header_buttons(state, main_x, main_w);
  }
  draw_caption(state);
  ImGui::Separator();

  const float body_h = ImGui::GetContentRegionAvail().y;
  if (!state.presentation) {
    const float controls_w = std::min(360.0f * s, main_w * 0.3f);
    ImGui::BeginChild("controls", {controls_w, body_h}, true);
    if (ImGui::CollapsingHeader("Theory", ImGuiTreeNodeFlags_DefaultOpen)) draw_lesson_markdown(lesson.text().theory);
    if (ImGui::CollapsingHeader("Parameters", ImGuiTreeNodeFlags_DefaultOpen))
      for (const ParamSpec& spec : lesson.params()) draw_param(state, spec);
    ImGui::Separator();
    draw_run_bar(state);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  ImGui::BeginChild("view", {0, body_h}, false);
  draw_lesson_view(state);
  ImGui::EndChild();
  ImGui::EndGroup();
  ImGui::End();
  draw_status_bar(state, H, W, status_h);
}

void draw_view_only(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize(io.DisplaySize);
  ImGui::Begin("figure", nullptr, kPanelFlags);
  draw_lesson_view(state);
  ImGui::End();
}

}  // namespace dlsys::gui
