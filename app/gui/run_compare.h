#pragma once
// Two runs of a lesson side by side in the window: the run on show (A) against a pinned run or, without one, the run
// it replaced (B). The session keeps both; the lessons layer makes the table (lessons/common/run_comparison.h).
#include <memory>
#include <string>

#include "app/gui/app_state.h"
#include "lessons/common/lesson.h"

namespace dlsys::gui {

// Shows `result` as the session's run; the run it replaces becomes the previous run.
void show_result(LessonSession& session, std::shared_ptr<const RunResult> result);
// The run B compared with the run on show: the pinned run when it is another run, else the previous run; null when
// there is none.
std::shared_ptr<const RunResult> compared_run(const LessonSession& session);
// Makes the table again when the runs compared changed; clears it when nothing is compared. Call once per frame.
void refresh_comparison(LessonSession& session, const Lesson& lesson);
// Pin / Unpin and the "Compare with pinned/previous" toggle, for the controls column.
void draw_compare_controls(AppState& state);
// The same from the keyboard, in either mode (presentation mode has no controls column): P pins the run on show, or
// lets go of it when it is the pinned one; C turns the comparison on or off where there is a run to compare with.
// Each returns what it did, for the status line; empty when there was nothing to do.
std::string toggle_pin(LessonSession& session);
std::string toggle_comparison(LessonSession& session);

}  // namespace dlsys::gui
