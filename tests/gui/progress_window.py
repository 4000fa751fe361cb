#!/usr/bin/env python3
"""A student's progress in the real window, driven by X events as drive_window.py drives it:

    progress_window.py BIN PNG_CHECK OUTDIR

Steps seen and a run finished are counted and kept in progress.json across a restart (the first window is killed,
not closed: what it counted and the parameters it showed were saved as they changed); a launch that names another
lesson offers to continue where the last session stopped, and the sidebar's Continue entry goes there; the lesson menu
saves a lesson state and opens it again through the file picker; Reset progress asks first (Cancel keeps it) and then
clears the file; a damaged progress.json is said in the status bar and replaced, never a crash. Window PNGs (F12) of
the sidebar at 1x and 2x text, at the desk and in presentation mode with the panels, are left in OUTDIR.
"""
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drive_window  # noqa: E402  (reads BIN PNG_CHECK OUTDIR from the same arguments)
from drive_window import App, Failure, log, new_file, run_to_end, xdotool  # noqa: E402

OUT = drive_window.OUT
SIZE = (1600, 900)  # room for the sidebar at 1x text, not at 2x
PROGRESS = os.path.join(OUT, "config", "dlsys-lab", "progress.json")


def progress_of(state, lesson):
    return state["progress"]["lessons"].get(lesson, {"steps_visited": 0, "runs_finished": 0})


def read_progress_file():
    with open(PROGRESS) as f:
        return json.load(f)


def read_last_state():
    with open(os.path.join(OUT, "config", "dlsys-lab", "last-state.json")) as f:
        return json.load(f)


def window_png(app, name):
    """F12 writes the window as a PNG; kept under OUTDIR with a name that says what it shows."""
    before = len(app.state["written_files"])
    app.key("F12")
    path = new_file(app, before)
    shutil.copy(path, os.path.join(OUT, name))


def menu_item(app, item):
    app.click("progress/menu")
    app.click(f"progress/{item}")


def first_session():
    app = App("progress-first", ["--lesson", "bubble", "--quick"], SIZE)
    app.wait(lambda s: progress_of(s, "bubble")["steps_visited"] == 1, "the first step counted as seen")
    app.click("step/next")
    app.wait(lambda s: progress_of(s, "bubble")["steps_visited"] == 2, "the second step counted as seen")
    run_to_end(app)
    app.wait(lambda s: progress_of(s, "bubble")["runs_finished"] == 1, "the finished run counted")
    if progress_of(app.state, "bubble")["complete"]:
        raise Failure("bubble counted as done with steps not seen")
    window_png(app, "sidebar-desk-1x.png")
    steps = app.state["steps"]
    for _ in range(steps - 2):
        app.click("step/next")
    app.wait(lambda s: progress_of(s, "bubble")["complete"], "bubble done: every step seen and a run finished")
    window_png(app, "sidebar-done-1x.png")
    before = len(app.state["written_files"])
    menu_item(app, "save_state")
    state_file = new_file(app, before)
    if "bubble-state-" not in state_file:
        raise Failure(f"the lesson menu saved '{state_file}', not a bubble state")
    # A parameter changed is kept for the next launch at once: the window is killed, not closed, and still the
    # place to continue from has the new parameters (and progress.json every count).
    quick_params = read_last_state()["params"]
    app.click("params/reset")
    app.wait(lambda s: read_last_state()["params"] != quick_params, "the changed parameters in last-state.json")
    app.proc.kill()
    app.proc.wait()
    app.log_file.close()
    saved = read_progress_file()["lessons"]["bubble"]
    if len(saved["steps_visited"]) != steps or saved["runs_finished"] != {"cpu": 1}:
        raise Failure(f"progress.json after the first session: {saved}")
    return state_file, steps


def second_session(state_file, steps):
    app = App("progress-second", ["--lesson", "matmul"], SIZE)
    if app.state["progress"]["continue_from"] != {"lesson": "bubble", "step": steps}:
        raise Failure(f"no place to continue from: {app.state['progress']}")
    if not progress_of(app.state, "bubble")["complete"]:
        raise Failure(f"the progress did not survive the restart: {app.state['progress']}")
    app.rect("progress/continue")
    window_png(app, "sidebar-continue-1x.png")
    app.click("progress/continue")
    app.wait(lambda s: s["lesson"] == "bubble" and s["step"] == steps and s["progress"]["continue_from"] is None,
             f"the window to continue at bubble, step {steps}")
    # A state file opened from the lesson menu, through the file picker.
    app.click("sidebar/matmul")
    app.wait(lambda s: s["lesson"] == "matmul", "matmul")
    menu_item(app, "open_state")
    app.click("picker/path")
    app.key("ctrl", "a")
    xdotool("type", "--delay", 20, state_file)
    app.click("picker/open")
    app.wait(lambda s: s["lesson"] == "bubble" and s["message"].startswith("opened"), "the state file to open")
    # 2x text (Ctrl + four times), then presentation mode with the panels back (F5, F6): the sidebar stays readable.
    for _ in range(4):
        app.key("ctrl", "equal")
    app.wait(lambda s: s["text_scale"] == 2.0, "2x text")
    app.click("lesson_menu")  # no room for a sidebar at 2x: the drop-down ends with the lesson menu
    app.rect("progress/open_state")
    window_png(app, "lesson-dropdown-2x.png")
    app.key("Escape")
    app.resize((1920, 1080))  # room for the sidebar at 2x
    app.rect("progress/menu")
    xdotool("mousemove", "--window", app.window, 5, 5)  # no tooltip over the page
    window_png(app, "sidebar-desk-2x.png")
    app.resize(SIZE)
    app.key("F5")
    app.key("F6")
    app.wait(lambda s: s["presentation"] and "progress/menu" in s["widgets"], "presentation mode with the panels")
    window_png(app, "sidebar-presentation.png")
    app.key("F5")
    for _ in range(4):
        app.key("ctrl", "minus")
    app.wait(lambda s: not s["presentation"] and s["text_scale"] == 1.0, "desk mode at 1x")
    # Reset asks first: Cancel keeps the progress, the confirmation clears the file.
    menu_item(app, "reset")
    app.click("progress/reset_cancel")
    app.wait(lambda s: "progress/reset_confirm" not in s["widgets"], "the confirmation to close")
    if progress_of(app.settle(), "bubble")["runs_finished"] != 1:
        raise Failure(f"Cancel reset the progress: {app.state['progress']}")
    menu_item(app, "reset")
    app.rect("progress/reset_confirm")
    window_png(app, "reset-confirmation.png")
    app.click("progress/reset_confirm")
    app.wait(lambda s: progress_of(s, "bubble")["runs_finished"] == 0 and s["message"].startswith("progress reset"),
             "the progress to be reset")
    lessons = read_progress_file()["lessons"]
    if lessons.get("bubble", {}).get("runs_finished") or len(lessons) > 1:
        raise Failure(f"progress.json after the reset: {lessons}")
    app.quit()


def damaged_file():
    with open(PROGRESS, "w") as f:
        f.write('{"format": 1, "lessons": {"bubble": ')
    app = App("progress-damaged", [], SIZE)
    state = app.wait(lambda s: s["message_is_error"], "the damaged file to be reported")
    if "progress file" not in state["message"]:
        raise Failure(f"the status bar says: {state['message']}")
    app.click("step/prev")  # another step seen: a change to save
    app.wait(lambda s: progress_of(s, "bubble")["steps_visited"] == 2, "the step before counted as seen")
    app.quit()
    read_progress_file()  # replaced by a whole one
    if not os.path.exists(PROGRESS + ".damaged"):
        raise Failure("the damaged progress file was not kept aside")


def main():
    shutil.rmtree(os.path.join(OUT, "config"), ignore_errors=True)
    os.makedirs(OUT, exist_ok=True)
    t0 = time.time()
    state_file, steps = first_session()
    log(f"ok: steps seen and a finished run counted, kept in progress.json, a state saved ({time.time() - t0:.0f} s)")
    second_session(state_file, steps)
    log(f"ok: continue, open state, 2x and presentation shots, reset with a confirmation ({time.time() - t0:.0f} s)")
    damaged_file()
    log(f"ok: a damaged progress file is reported and replaced ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    try:
        drive_window.with_display(main)
    except (Failure, OSError, ValueError, KeyError) as e:
        print(f"FAIL: {e!r}", file=sys.stderr)
        sys.exit(1)
