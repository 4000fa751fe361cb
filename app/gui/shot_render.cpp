// `dlsys-lab shot`: runs the lesson, then renders the same shell the GUI shows into a PNG through a surfaceless EGL
// context, so it works on machines with no display at all.
#include "app/gui/shot_render.h"

#include <backends/imgui_impl_opengl3.h>
#include <fmt/format.h>
#include <imgui.h>

#include <cmath>
#include <ostream>

#include "app/gui/fonts.h"
#include "app/gui/image_size.h"
#include "app/gui/offscreen.h"
#include "app/gui/run_compare.h"
#include "app/gui/settings.h"
#include "app/gui/shell.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"
#include "lessons/run_file.h"

namespace dlsys {

namespace {

using namespace gui;  // the window code this file drives

// The recorded run named by --open-run (null without one), refusing what does not apply to it.
std::shared_ptr<const RunResult> recorded_run(const ShotOptions& o) {
  if (o.open_run_file.empty()) {
    if (o.lesson.empty()) throw BadInput("shot needs a LESSON to run, or --open-run FILE with a recorded run");
    return nullptr;
  }
  if (!o.sets.empty() || o.quick || o.backend != "auto")
    throw BadInput("--open-run FILE renders the run as recorded; --set, --quick and --backend do not apply to it");
  auto recorded = std::make_shared<const RunResult>(read_run_file(o.open_run_file));
  if (!o.lesson.empty() && o.lesson != recorded->lesson)
    throw BadInput(fmt::format("lesson '{}' was named, but run file '{}' is a run of lesson '{}'",
                               clip_for_message(o.lesson), path_for_message(o.open_run_file), recorded->lesson));
  return recorded;
}

// The step, scales and size against what is allowed; the window's layout size in points.
PixelSize checked_layout(const ShotOptions& o, const Lesson& lesson) {
  if (o.step < 1 || o.step > static_cast<int>(lesson.step_count()))
    throw BadInput(fmt::format("--step {} is out of range; lesson '{}' has steps 1 to {}", o.step, lesson.id(),
                               lesson.step_count()));
  if (!(o.scale >= 1 && o.scale <= 4))
    throw BadInput(fmt::format("--scale {} is not allowed; allowed: 1 to 4", o.scale));
  if (o.text_scale != 0 && !(o.text_scale >= 1 && o.text_scale <= 3))
    throw BadInput(fmt::format("--text-scale {} is not allowed; allowed: 1 to 3", o.text_scale));
  const PixelSize size = parse_pixel_size(o.size);
  if (size.width * o.scale > kMaxImageSide || size.height * o.scale > kMaxImageSide)
    throw BadInput(fmt::format("--size {} at --scale {} makes a {:.0f}x{:.0f} image; allowed: at most {} pixels a side",
                               o.size, o.scale, size.width * o.scale, size.height * o.scale, kMaxImageSide));
  return size;
}

// The window's state as the GUI would hold it: the recorded run opened, or the lesson run here first.
// The mode and text size asked for, with animations frozen so that the same run always renders the same pixels.
void apply_render_options(const ShotOptions& o, gui::AppState& state) {
  state.presentation = o.presentation;
  if (o.text_scale != 0)
    (o.presentation ? state.presentation_scale : state.desk_scale) = static_cast<float>(o.text_scale);
  state.fixed_time = true;
  state.show_recorded_label = !o.no_recorded_label;
}

void check_step_data(const Lesson& lesson, gui::AppState& state) {
  state.session().step_data.compute_now(lesson, state.session().params);
  // The window shows this message in place of the view; a figure for slides must not be that message.
  if (!state.session().step_data.error().empty())
    throw BadInput(
        fmt::format("lesson '{}': the steps cannot be drawn: {}", lesson.id(), state.session().step_data.error()));
}

void load_run(const ShotOptions& o, const Lesson& lesson, bool recorded, gui::AppState& state) {
  apply_render_options(o, state);
  if (recorded) {
    gui::open_run_file(o.open_run_file, state);
  } else {
    const BackendKind backend = backend_for(lesson, o.backend);
    const ParamValues params = parse_lesson_params(lesson, o.sets, backend, o.quick);
    const auto& lessons = all_lessons();
    for (std::size_t i = 0; i < lessons.size(); ++i)
      if (lessons[i] == &lesson) state.lesson_index = static_cast<int>(i);
    state.session().params = params;
    RunControl control;
    state.session().result = std::make_shared<const RunResult>(run_lesson(lesson, params, backend, control));
    // The run's own wall time (what a run file records), so the same run drawn again from its file reads the same.
    state.session().last_run_wall_s = state.session().result->backend.conditions.wall_s;
  }
  check_step_data(lesson, state);
}

using NamedFiles = std::vector<std::pair<std::string, std::string>>;

// Each asked step drawn as a fresh window would draw it, into `files` (PNG bytes by path); returns the lines that
// say what was written, for once the files are.
std::vector<std::string> render_steps(const ShotOptions& o, const Lesson& lesson, gui::AppState& state,
                                      const PixelSize& size, NamedFiles& files, void (*draw)(gui::AppState&)) {
  HeadlessGl gl;
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui_ImplOpenGL3_Init("#version 330");
  apply_theme(state.presentation ? ThemeKind::Projector : ThemeKind::Dark);
  rebuild_fonts(state.scale(), static_cast<float>(o.scale));
  const ImVec4 clear = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  // The layout is WxH points, as in a window of that size; each point becomes scale x scale pixels, with text
  // rasterised at that resolution rather than enlarged.
  const ImVec2 layout{static_cast<float>(size.width), static_cast<float>(size.height)};
  std::vector<int> steps{o.step};
  if (o.every_step) {
    steps.clear();
    for (int step = 1; step <= static_cast<int>(lesson.step_count()); ++step) steps.push_back(step);
  }
  auto png_path = [&](int step) { return o.every_step ? every_step_path(o.output_png, step) : o.output_png; };
  std::vector<std::string> wrote;
  try {
    for (const int step : steps) {
      state.session().step = step - 1;
      if (!o.widget_rects_path.empty())
        enable_widget_rects(o.every_step ? every_step_path(o.widget_rects_path, step) : o.widget_rects_path);
      const Image image = render_offscreen([&] { draw(state); }, layout, static_cast<float>(o.scale), 3, clear);
      write_widget_rects({{"window", {size.width, size.height}},
                          {"lesson", lesson.id()},
                          {"step", step},
                          {"presentation", o.presentation}});
      files.emplace_back(png_path(step), encode_png(png_path(step), image));
      wrote.push_back(fmt::format("wrote {} ({}x{}, step {} of {}, rendered by {})\n", png_path(step), image.width,
                                  image.height, step, lesson.step_count(), gl.renderer()));
    }
  } catch (...) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui::DestroyContext();
    throw;
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui::DestroyContext();
  return wrote;
}

// `compare`: run A shown as a recorded run is, run B pinned beside it, "Compare" on; the figure is the view alone.
RenderedFigure render_comparison(const CompareOptions& c, const RunResult& a, const RunResult& b) {
  ShotOptions o;
  o.step = c.step;
  o.size = c.size;
  o.scale = c.scale;
  o.text_scale = c.text_scale;
  o.presentation = c.presentation;
  o.output_png = c.output_png;
  const Lesson& lesson = find_lesson(a.lesson);
  const PixelSize size = checked_layout(o, lesson);
  gui::AppState state;
  gui::init_sessions(state);
  apply_render_options(o, state);
  gui::show_recorded_run(std::make_shared<const RunResult>(a), state);
  gui::LessonSession& session = state.session();
  session.pinned_result = std::make_shared<const RunResult>(b);
  session.comparing = true;
  gui::refresh_comparison(session, lesson);
  if (!session.comparison) throw BadInput(session.last_error);
  session.compared_step_data.compute_now(lesson, session.comparison->b_params);
  check_step_data(lesson, state);
  NamedFiles files;
  const std::vector<std::string> wrote = render_steps(o, lesson, state, size, files, draw_view_only);
  return {std::move(files.front().second), wrote.front()};
}

}  // namespace

RenderedFigure render_compare(const CompareOptions& options, const RunResult& a, const RunResult& b) {
  return render_comparison(options, a, b);
}

int render_shot(const ShotOptions& o, std::ostream& out, std::ostream&) {
  // A recorded run names its lesson and parameters; otherwise the lesson runs here first.
  const std::shared_ptr<const RunResult> recorded = recorded_run(o);
  check_outputs_distinct({o.output_png, o.json_path});
  const Lesson& lesson = find_lesson(recorded ? recorded->lesson : o.lesson);
  const PixelSize size = checked_layout(o, lesson);
  gui::AppState state;
  gui::init_sessions(state);
  load_run(o, lesson, recorded != nullptr, state);
  // The PNGs and the run file are written together or not at all.
  NamedFiles files;
  const std::vector<std::string> wrote = render_steps(o, lesson, state, size, files, draw_shell);
  if (!o.json_path.empty()) files.emplace_back(o.json_path, dump_json_text(to_json(*state.session().result), 2) + "\n");
  write_files_checked(files);
  for (const std::string& line : wrote) out << line;
  return 0;
}

}  // namespace dlsys
