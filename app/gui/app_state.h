#pragma once
// Everything the GUI remembers between frames: one session per lesson (its parameters, step and last result),
// the display mode, and requests the main loop carries out after drawing (screenshots, exports).
#include <imgui.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/gui/run_worker.h"
#include "app/gui/step_data_worker.h"
#include "engine/params.h"
#include "engine/run_result.h"
#include "lessons/common/exercises.h"
#include "lessons/common/progress.h"
#include "lessons/common/run_comparison.h"
#include "lessons/common/state_file.h"

namespace dlsys::gui {

// A prediction typed for one exercise, and what checking it gave.
struct ExerciseAttempt {
  std::string input;
  std::optional<ExerciseCheck> check;
  std::string error;  // why the prediction could not be read
};

struct LessonSession {
  ParamValues params;
  std::map<std::string, std::string> edit_text;     // what the user is typing, per parameter
  std::map<std::string, std::string> param_errors;  // why the last edit was refused, per parameter
  int step = 0;
  double step_started_s = 0;
  StepDataWorker step_data;  // what the steps draw, computed from `params` off the UI thread
  std::shared_ptr<const RunResult> result;
  std::string last_error;
  double last_run_wall_s = 0;
  // Runs kept to compare with the one on show (app/gui/run_compare.h): the run it replaced, and one the user pinned.
  std::shared_ptr<const RunResult> previous_result;
  std::shared_ptr<const RunResult> pinned_result;
  bool comparing = false;  // "Compare with pinned/previous" is on
  struct Comparison {
    std::shared_ptr<const RunResult> a, b;  // the runs the table was made of: `result` and the one compared
    RunComparison table;
    ParamValues b_params;  // run B's parameters, which its half of the view draws its step data from
  };
  std::optional<Comparison> comparison;              // kept in step with the runs by refresh_comparison, once per frame
  StepDataWorker compared_step_data;                 // the step data of run B's parameters
  std::map<std::string, ExerciseAttempt> exercises;  // by exercise id
};

struct AppState {
  std::vector<LessonSession> sessions;  // indexed like all_lessons()
  int lesson_index = 0;
  // Requests made while a frame is drawn, carried out before the next one (begin_frame): a frame never changes
  // lesson halfway through drawing it.
  int pending_lesson_index = -1;
  std::string pending_state_file;
  std::string pending_run_file;  // a recorded run to open (Export menu), opened between frames
  bool presentation = false;
  bool presentation_panels = false;  // presentation mode with the sidebar and parameters back (F6)
  static constexpr float kDeskScaleDefault = 1.0f, kPresentationScaleDefault = 1.5f;
  float desk_scale = kDeskScaleDefault;
  float presentation_scale = kPresentationScaleDefault;
  bool fonts_dirty = true;
  std::string backend_choice = "auto";
  RunWorker worker;
  bool playing = false;
  double now_s = 0;
  std::string message;  // the last action's outcome, shown in the status bar
  bool message_is_error = false;
  double message_s = 0;                    // when it was set: messages fade after a few seconds
  std::vector<std::string> written_files;  // every file this session wrote, in order
  // Filled while drawing, carried out by the main loop after the frame.
  bool want_window_png = false;
  int want_figure_scale = 0;
  ImVec2 view_size{800, 600};
  bool figure_title = true;   // figure exports carry the lesson and step as a title
  bool figure_light = false;  // figure exports in the light theme from desk mode too (presentation mode is light)
  bool show_open_dialog = false;
  bool show_keys = false;  // the list of keys and gestures (F1 or ?)
  bool show_open_run_dialog = false;
  bool show_reset_progress = false;  // the confirmation before progress.json is cleared
  // The student's progress (steps seen, runs finished, exercises answered), kept in progress.json. Only the window of
  // a session records it: shots and scripted screenshots leave it alone.
  StudentProgress progress;
  bool record_progress = false;
  StudentProgress progress_saved;  // the file as this window last read or wrote it
  int progress_saved_revision = 0;
  bool progress_save_failed = false;  // said once in the status bar, not every frame
  // Where the last session stopped, while the window shows something else (a launch that named a lesson or a file):
  // the sidebar offers to continue there.
  std::optional<LessonState> continue_from;
  bool show_recorded_label = true;  // shot --no-recorded-label turns it off, so a test can compare every pixel
  bool fixed_time = false;          // screenshots: animations frozen at a fixed step time
  double fixed_step_time_s = 2.5;

  LessonSession& session() { return sessions[lesson_index]; }
  float scale() const { return presentation ? presentation_scale : desk_scale; }
  // Whether the sidebar and the parameters are drawn: always at the desk, in presentation mode after F6.
  bool panels_shown() const { return !presentation || presentation_panels; }
  float content_scale = 1.0f;  // the monitor's: pixels per point at 1x text
  // How many times its mode's usual size the text is (Ctrl +/-).
  float text_enlargement() const {
    return presentation ? presentation_scale / kPresentationScaleDefault : desk_scale / kDeskScaleDefault;
  }
};

}  // namespace dlsys::gui
