// The desktop app: a GLFW window with an OpenGL 3.3 context, Dear ImGui drawing the shell every frame, runs on a
// worker thread, and exports carried out between frames.
#define GL_GLEXT_PROTOTYPES 1
#include "app/gui/gui_main.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <tuple>
#include <utility>

#include "app/gui/fonts.h"
#include "app/gui/frame_pacer.h"
#include "app/gui/image_size.h"
#include "app/gui/offscreen.h"
#include "app/gui/settings.h"
#include "app/gui/shell.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/measure.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"
#include "lessons/run_file.h"

namespace dlsys {

namespace {

using namespace gui;

void glfw_error(int code, const char* description) {
  std::cerr << "GLFW error " << code << ": " << description << "\n";
}

// Applies --lesson/--step/--set/--open before the first frame. Throws BadInput.
void apply_start_request(const GuiRequest& request, AppState& state) {
  if (request.quick) {
    const auto& lessons = all_lessons();
    for (std::size_t i = 0; i < lessons.size(); ++i)
      state.sessions[i].params =
          parse_lesson_params(*lessons[i], {}, backend_for(*lessons[i], state.backend_choice), true);
  }
  if (!request.open_state_file.empty()) open_state_file(request.open_state_file, state);
  if (!request.open_run_file.empty()) {
    if (!request.open_state_file.empty() || !request.lesson.empty() || !request.sets.empty())
      throw BadInput(
          "--open-run FILE names its own lesson and parameters; it cannot be combined with --open, "
          "--lesson or --set");
    open_run_file(request.open_run_file, state);
    const Lesson& lesson = *all_lessons()[state.lesson_index];
    const int step = request.step == 0 ? 1 : request.step;
    if (step > static_cast<int>(lesson.step_count()))
      throw BadInput(fmt::format("--step {} is out of range; lesson '{}' has steps 1 to {}", step, lesson.id(),
                                 lesson.step_count()));
    state.session().step = step - 1;
    return;
  }
  if (request.lesson.empty()) {
    if (!request.sets.empty()) throw BadInput("--set needs --lesson ID to say which lesson the parameters are for");
    if (request.step != 0) throw BadInput("--step needs --lesson ID to say which lesson the step is in");
    return;
  }
  const Lesson& lesson = find_lesson(request.lesson);
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i)
    if (lessons[i] == &lesson) state.lesson_index = static_cast<int>(i);
  state.session().params =
      parse_lesson_params(lesson, request.sets, backend_for(lesson, state.backend_choice), request.quick);
  const int step = request.step == 0 ? 1 : request.step;
  if (step < 1 || step > static_cast<int>(lesson.step_count()))
    throw BadInput(fmt::format("--step {} is out of range; lesson '{}' has steps 1 to {}", step, lesson.id(),
                               lesson.step_count()));
  state.session().step = step - 1;
}

// Returns whether the file was written; the status bar says what happened either way.
bool save_window_png(AppState& state, int width, int height, const std::string& path) {
  try {
    write_png(path, read_pixels(width, height, true));
    report_written(state, path);
    return true;
  } catch (const std::exception& e) {
    set_message(state, e.what(), true);
    return false;
  }
}

bool export_figure(AppState& state, int scale, const std::string& path) {
  // The light theme prints and projects well: a figure from desk mode takes it when asked, the window keeps its own.
  const ThemeKind window_theme = current_theme();
  if (state.figure_light) apply_theme(ThemeKind::Projector);
  rebuild_fonts(state.scale(), static_cast<float>(scale));
  const ImVec4 clear = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  bool written = false;
  try {
    // The view's size in points: the window's pixels less the monitor's content scale, which the export's own
    // scale replaces.
    const ImVec2 points{state.view_size.x / state.content_scale, state.view_size.y / state.content_scale};
    const Image image = render_offscreen([&] { draw_view_only(state); }, points, static_cast<float>(scale), 2, clear);
    write_png(path, image);
    report_written(state, path, fmt::format("{}x{}", image.width, image.height));
    written = true;
  } catch (const std::exception& e) {
    set_message(state, std::string("figure export failed: ") + e.what(), true);
  }
  apply_theme(window_theme);
  rebuild_fonts(state.scale() * state.content_scale, 1.0f);
  return written;
}

// What a test driving the window needs to know besides where the widgets are.
nlohmann::json state_summary(const AppState& state, int fb_w, int fb_h) {
  const Lesson& lesson = *all_lessons()[state.lesson_index];
  const LessonSession& session = state.sessions[state.lesson_index];
  nlohmann::json lessons = nlohmann::json::array();
  for (const Lesson* l : all_lessons()) lessons.push_back(l->id());
  return {{"window", {fb_w, fb_h}},
          {"lesson", lesson.id()},
          {"lessons", lessons},
          {"step", session.step + 1},
          {"steps", lesson.step_count()},
          {"presentation", state.presentation},
          {"text_scale", state.scale()},
          {"playing", state.playing},
          // Busy until the frame has taken the run's outcome: a run that ends between this frame's poll and this
          // summary would otherwise read as over with neither its result nor its error yet in the session.
          {"busy", !state.worker.idle()},
          {"has_result", session.result != nullptr},
          {"run_wall_s", session.result ? session.result->backend.conditions.wall_s : 0.0},
          {"run_window_cpu_cores", session.result ? session.result->backend.conditions.window_cpu_cores : 0.0},
          {"result_stale", session.result && !params_changed_since(*session.result, session.params).empty()},
          {"has_previous_run", session.previous_result != nullptr},
          {"has_pinned_run", session.pinned_result != nullptr},
          {"comparing", session.comparison.has_value()},  // two runs drawn side by side with their table
          {"last_error", session.last_error},
          {"message", state.message},
          {"message_is_error", state.message_is_error},
          {"written_files", state.written_files},
          {"progress", progress_summary_json(state)}};
}

bool has_display() {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  return (display != nullptr && *display) || (wayland != nullptr && *wayland);
}

// The window's size where none was asked for: the primary monitor's work area (the screen less panels and docks),
// opened maximised, so the lab takes the screen it is on whatever its size.
PixelSize work_area_size() {
  int x = 0, y = 0, width = 0, height = 0;
  if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) glfwGetMonitorWorkarea(monitor, &x, &y, &width, &height);
  if (width < 64 || height < 64) return {1600, 900};  // no monitor reported: a common laptop screen
  return {width, height};
}

// A GL 3.3 window with Dear ImGui bound to it; nullptr (and a message on stderr) when there is none to be had.
// `pacer` receives the window's input callbacks before ImGui's, so ImGui chains to them. A size of 0 x 0 fills the
// monitor's work area.
GLFWwindow* open_window(PixelSize size, bool vsync, std::unique_ptr<FramePacer>& pacer) {
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    std::cerr << "dlsys-lab: GLFW could not initialise the display; try the headless commands (dlsys-lab --help)\n";
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  if (size.width == 0) {
    size = work_area_size();
    glfwWindowHint(GLFW_MAXIMIZED, GLFW_TRUE);
  }
  GLFWwindow* window = glfwCreateWindow(size.width, size.height, "dlsys-lab", nullptr, nullptr);
  if (window == nullptr) {
    glfwTerminate();
    std::cerr << "dlsys-lab: could not open a GL 3.3 window\n";
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(vsync ? 1 : 0);
  pacer = std::make_unique<FramePacer>(window);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  static const std::string ini_path = config_dir() + "/imgui.ini";
  ImGui::GetIO().IniFilename = ini_path.c_str();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");
  return window;
}

void close_window(GLFWwindow* window) {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

// Builds the shell's frame and, when `pacer` says it changed or a screenshot will read the back buffer, renders it.
// Returns the framebuffer's size and whether the frame was rendered (only then is there anything to swap).
std::pair<PixelSize, bool> draw_one_frame(AppState& state, GLFWwindow* window, FramePacer& pacer, bool scripted) {
  // The monitor's content scale (its DPI setting) enlarges everything, as the text scale does; a window moved to
  // another monitor follows it.
  float content_scale = 1, unused = 1;
  glfwGetWindowContentScale(window, &content_scale, &unused);
  content_scale = std::clamp(content_scale, 1.0f, 4.0f);
  if (content_scale != state.content_scale) {
    state.content_scale = content_scale;
    state.fonts_dirty = true;
  }
  if (state.fonts_dirty) {
    apply_theme(state.presentation ? ThemeKind::Projector : ThemeKind::Dark);
    rebuild_fonts(state.scale() * state.content_scale, 1.0f);
    state.fonts_dirty = false;
  }
  poll_worker(state);
  begin_frame(state);
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  handle_keys(state);
  draw_shell(state);
  ImGui::Render();
  PixelSize fb;
  glfwGetFramebufferSize(window, &fb.width, &fb.height);
  const bool reads_back_buffer = scripted || state.want_window_png;
  if (!pacer.should_render(*ImGui::GetDrawData(), fb.width, fb.height, reads_back_buffer)) return {fb, false};
  glViewport(0, 0, fb.width, fb.height);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  return {fb, true};
}

// `--screenshot`: after enough frames and no run going, saves the window (and the figure, when asked) and closes.
struct ScriptedShot {
  const GuiRequest& request;
  int idle_frames = 0;  // frames drawn since the last run ended
  Stopwatch idle_timer;

  // Returns the exit code once the shot is taken, -1 before.
  int after_frame(AppState& state, const PixelSize& fb, int frames_drawn) {
    if (state.worker.busy())
      idle_frames = 0;
    else if (++idle_frames == 1)
      idle_timer.restart();
    const int frames_before_shot = request.frames > 0 ? request.frames : 3;
    if (frames_drawn < frames_before_shot || !state.worker.idle()) return -1;
    if (idle_frames > 3)
      std::cerr << fmt::format("drew {} frames at {:.1f} fps (no run going)\n", idle_frames - 1,
                               (idle_frames - 1) / (idle_timer.elapsed_us() / 1e6));
    bool ok = save_window_png(state, fb.width, fb.height, request.screenshot_png);
    std::cerr << state.message << "\n";
    if (ok && !request.figure_png.empty()) {
      ok = export_figure(state, request.figure_scale, request.figure_png);
      std::cerr << state.message << "\n";
    }
    return ok ? 0 : kExitRunFailure;
  }
};

// Keeps the last-state file up to date: whenever the lesson, the step or a parameter changes, and when the window
// closes, so a window that is killed still reopens on the step and the parameters it showed.
class LastStateKeeper {
 public:
  void after_frame(const AppState& state) {
    if (shown(state) != saved_) save(state);
  }
  void save(const AppState& state) {
    saved_ = shown(state);
    try {
      save_last_state(state);
    } catch (const std::exception& e) {
      if (!warned_) std::cerr << "dlsys-lab: " << e.what() << "\n";
      warned_ = true;
    }
  }

 private:
  // The lesson, the step and the parameters' text: a few short strings, compared once a frame.
  static std::tuple<int, int, std::string> shown(const AppState& state) {
    const LessonSession& session = state.sessions[state.lesson_index];
    std::string params;
    for (const auto& [key, value] : session.params.all()) params += key + '=' + value.text + '\n';
    return {state.lesson_index, session.step, params};
  }
  std::tuple<int, int, std::string> saved_{-1, -1, ""};
  bool warned_ = false;
};

// --compare-run FILE: the recorded run pinned in its lesson and "Compare" on; a lesson named otherwise must be its.
void pin_requested_run(const GuiRequest& request, AppState& state) {
  auto pinned = std::make_shared<const RunResult>(read_run_file(request.compare_run_file));
  const bool names_lesson =
      !request.lesson.empty() || !request.open_run_file.empty() || !request.open_state_file.empty();
  if (names_lesson && pinned->lesson != all_lessons()[state.lesson_index]->id())
    throw BadInput(fmt::format(
        "--compare-run: run file '{}' is a run of lesson '{}'; allowed: a run of lesson '{}', "
        "the lesson opened",
        path_for_message(request.compare_run_file), pinned->lesson, all_lessons()[state.lesson_index]->id()));
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i)
    if (lessons[i]->id() == pinned->lesson) state.lesson_index = static_cast<int>(i);
  state.session().pinned_result = std::move(pinned);
  state.session().comparing = true;
}

void apply_request(const GuiRequest& request, AppState& state) {
  apply_start_request(request, state);
  if (!request.compare_run_file.empty()) pin_requested_run(request, state);
}

// No display: what works without one instead.
int refuse_without_display() {
  std::cerr << "dlsys-lab: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the GUI cannot open.\n"
               "Headless commands work without one:\n"
               "  dlsys-lab list | info\n"
               "  dlsys-lab run LESSON [--set k=v]... [--json -]\n"
               "  dlsys-lab shot LESSON [--step N] -o view.png\n"
               "or run the GUI under a virtual display: xvfb-run -a dlsys-lab\n";
  return kExitBadInput;
}

}  // namespace

int run_gui(const GuiRequest& request) {
  const Stopwatch since_start;
  if (!request.widget_rects_path.empty()) enable_widget_rects(request.widget_rects_path);
  AppState state;
  init_sessions(state);
  // A launch that names nothing to open starts where the last window closed; a window that opens something else
  // offers that place to continue from (a scripted screenshot does not: it draws what it names, whoever runs it).
  const bool names_a_start = !request.lesson.empty() || !request.open_state_file.empty() ||
                             !request.open_run_file.empty() || !request.compare_run_file.empty();
  const bool scripted = !request.screenshot_png.empty();
  if (!names_a_start || !scripted) take_up_last_state(state, !names_a_start);
  if (!scripted) {  // a scripted screenshot is not a session: it neither shows nor changes the student's progress
    state.record_progress = true;
    load_progress(state);
  }
  PixelSize size;
  try {
    if (!request.size.empty()) size = parse_pixel_size(request.size);
    apply_request(request, state);
  } catch (const BadInput& e) {
    std::cerr << "dlsys-lab: " << e.what() << "\n";
    return kExitBadInput;
  }
  // Bad requests are reported before the display is needed, so they read the same everywhere.
  if (!has_display()) return refuse_without_display();
  state.presentation = request.presentation;
  state.figure_light = request.figure_light;
  std::unique_ptr<FramePacer> pacer;
  GLFWwindow* window = open_window(size, !scripted, pacer);  // scripted runs measure the frame rate without vsync
  if (window == nullptr) return kExitRunFailure;

  if (request.run_on_start) start_run(state);
  ScriptedShot shot{request};
  LastStateKeeper last_state;
  int frames_drawn = 0, exit_code = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (!glfwWindowShouldClose(window)) {
    pacer->wait(state.worker.busy(), scripted, widget_rects_enabled());
    const auto now = std::chrono::steady_clock::now();
    state.now_s = std::chrono::duration<double>(now - t0).count();
    const auto [fb, rendered] = draw_one_frame(state, window, *pacer, scripted);
    nlohmann::json summary = state_summary(state, fb.width, fb.height);
    summary["frame"] = frames_drawn;  // so a test can wait for frames, not for time
    if (!scripted) {                  // a scripted screenshot is not a session to come back to
      last_state.after_frame(state);
      save_progress_if_changed(state);
    }
    write_widget_rects(summary);
    if (frames_drawn++ == 0 && scripted)
      std::cerr << fmt::format("first frame after {:.0f} ms\n", since_start.elapsed_us() / 1e3);
    if (state.want_window_png) {
      save_window_png(state, fb.width, fb.height, timestamped_output_path("window", "png"));
      state.want_window_png = false;
    }
    if (scripted) {
      if (const int code = shot.after_frame(state, fb, frames_drawn); code >= 0) {
        exit_code = code;
        glfwSetWindowShouldClose(window, 1);
      }
    }
    if (rendered) glfwSwapBuffers(window);
    if (state.want_figure_scale > 0) {
      export_figure(state, state.want_figure_scale,
                    timestamped_output_path(all_lessons()[state.lesson_index]->id() + "-figure", "png"));
      state.want_figure_scale = 0;
    }
  }
  state.worker.cancel();
  close_window(window);
  if (!scripted) {
    last_state.save(state);
    save_progress_if_changed(state);
  }
  return exit_code;
}

}  // namespace dlsys
