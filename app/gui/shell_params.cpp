// The controls column: the lesson's parameters, the backend, the last run, and the theory card.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "app/gui/file_picker.h"
#include "app/gui/run_compare.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/theory_card.h"
#include "app/gui/widget_rects.h"
#include "engine/backend.h"
#include "engine/errors.h"
#include "lessons/common/run_lesson.h"

namespace dlsys::gui {

namespace {

// The parameters each lesson had before each change, newest last: Ctrl+Z takes them back one change at a time.
std::map<std::string, std::vector<ParamValues>>& undo_history() {
  static std::map<std::string, std::vector<ParamValues>> history;
  return history;
}

void draw_param(AppState& state, const Lesson& lesson, const std::vector<ParamSpec>& specs, const ParamSpec& spec) {
  LessonSession& session = state.session();
  auto commit = [&](const std::string& text) {
    try {
      ParamValues next = session.params;
      next.set(specs, spec.key, text);
      lesson.validate(next, backend_for(lesson, state.backend_choice));
      undo_history()[lesson.id()].push_back(session.params);
      session.params = next;
      session.param_errors.erase(spec.key);
    } catch (const BadInput& e) {
      session.param_errors[spec.key] = e.what();
    }
  };
  ImGui::PushID(spec.key.c_str());
  ImGui::BeginGroup();  // the label, the control and its error: hovering any of it shows the help
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(spec.unit.empty() ? spec.label.c_str() : (spec.label + " (" + spec.unit + ")").c_str());
  ImGui::PopTextWrapPos();
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
    const float open_w = button_width("Open...");
    ImGui::SetNextItemWidth(-open_w - ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::InputText("##v", &text, ImGuiInputTextFlags_EnterReturnsTrue) || ImGui::IsItemDeactivatedAfterEdit())
      commit(text);
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
    if (ImGui::InputText("##v", &text, ImGuiInputTextFlags_EnterReturnsTrue) || ImGui::IsItemDeactivatedAfterEdit())
      commit(text);
  }
  note_last_item("params/" + spec.key);
  if (auto it = session.param_errors.find(spec.key); it != session.param_errors.end()) {
    ImGui::PushStyleColor(ImGuiCol_Text, error_text_color());
    ImGui::TextWrapped("%s", it->second.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::EndGroup();
  if (!spec.help.empty() && ImGui::IsItemHovered() && !ImGui::IsAnyItemActive())
    ImGui::SetTooltip("%s\nallowed: %s", spec.help.c_str(), spec.allowed().c_str());
  ImGui::PopID();
}

// Back to the previous parameters (Ctrl+Z or the button), or all to their defaults (itself undoable).
void set_params(AppState& state, const ParamValues& values) {
  LessonSession& session = state.session();
  session.params = values;
  session.param_errors.clear();
  session.edit_text.clear();  // text fields show the values again
}

void draw_undo_and_reset(AppState& state, const Lesson& lesson, const std::vector<ParamSpec>& specs) {
  std::vector<ParamValues>& history = undo_history()[lesson.id()];
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::BeginDisabled(history.empty());
  const bool undo = ImGui::Button("Undo (Ctrl+Z)") ||
                    (io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Z), false));
  ImGui::EndDisabled();
  note_last_item("params/undo");
  if (undo && !history.empty()) {
    set_params(state, history.back());
    history.pop_back();
  }
  ImGui::SameLine();
  if (ImGui::Button("Reset to defaults")) {
    history.push_back(state.session().params);
    set_params(state, ParamValues::defaults(specs));
  }
  note_last_item("params/reset");
}

void draw_backend_choice(AppState& state) {
  const char* backends[] = {"auto", "cpu", "cuda"};
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##backend", ("backend: " + state.backend_choice).c_str())) {
    for (const char* b : backends) {
      const bool unavailable = std::string(b) == "cuda" && !cuda_status().available;
      ImGui::BeginDisabled(unavailable);
      if (ImGui::Selectable(b, state.backend_choice == b)) state.backend_choice = b;
      ImGui::EndDisabled();
      if (unavailable && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("CUDA cannot run here: %s", cuda_status().plain_reason.c_str());
    }
    ImGui::EndCombo();
  }
}

// The keys the current step names in its "Uses:" line (empty where it names none).
const std::vector<std::string>& step_uses(const AppState& state, const Lesson& lesson) {
  static const std::vector<std::string> none;
  const std::vector<LessonStep>& steps = lesson.text().steps;
  const int step = state.sessions[state.lesson_index].step;
  return step >= 0 && step < int(steps.size()) ? steps[std::size_t(step)].uses : none;
}

// The parameters the step names first, in its order, and the rest folded under a header that starts closed; a step
// that names none lists them all as the lesson declares them.
void draw_param_list(AppState& state, const Lesson& lesson, const std::vector<ParamSpec>& specs) {
  const std::vector<std::string>& uses = step_uses(state, lesson);
  std::vector<const ParamSpec*> others;
  for (const ParamSpec& spec : specs)
    if (std::find(uses.begin(), uses.end(), spec.key) == uses.end()) others.push_back(&spec);
  if (others.size() == specs.size()) {
    for (const ParamSpec& spec : specs) draw_param(state, lesson, specs, spec);
    return;
  }
  for (const std::string& key : uses)
    for (const ParamSpec& spec : specs)
      if (spec.key == key) draw_param(state, lesson, specs, spec);
  if (others.empty()) return;
  ImGui::Spacing();
  const bool open = ImGui::CollapsingHeader("Other parameters");
  note_last_item("params_other");
  if (open)
    for (const ParamSpec* spec : others) draw_param(state, lesson, specs, *spec);
}

}  // namespace

void draw_parameters(AppState& state) {
  const Lesson& lesson = current_lesson(state);
  const std::vector<ParamSpec> specs = lesson.params();
  draw_undo_and_reset(state, lesson, specs);
  draw_param_list(state, lesson, specs);
  ImGui::Spacing();
  draw_backend_choice(state);
}

void draw_run_summary(AppState& state) {
  const LessonSession& session = state.session();
  if (!session.last_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, error_text_color());
    ImGui::TextWrapped("%s", session.last_error.c_str());
    ImGui::PopStyleColor();
  } else if (session.result) {
    ImGui::PushTextWrapPos(0);
    if (session.last_run_wall_s > 0)
      ImGui::TextDisabled("last run: %.2f s on %s", session.last_run_wall_s, session.result->backend.kind.c_str());
    else
      ImGui::TextDisabled("last run on %s", session.result->backend.kind.c_str());
    ImGui::PopTextWrapPos();
  }
  draw_compare_controls(state);
}

void draw_theory(const AppState& state) { draw_lesson_markdown(current_lesson(state).text().theory); }

}  // namespace dlsys::gui
