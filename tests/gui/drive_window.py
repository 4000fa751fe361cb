#!/usr/bin/env python3
"""Drives the real dlsys-lab window as a person would: X mouse and key events (xdotool) into the app under Xvfb.

    drive_window.py BIN PNG_CHECK OUTDIR

The app is started with --widget-rects FILE, so it keeps FILE updated with where its named widgets are and what
state it is in; every click goes to a widget found by name, and every action waits for the state it should cause.
Lessons come from `BIN list`, so a new lesson is covered with no change here. Fails (exit 1) when the app dies,
hangs, or an expected file is not written, or a plot step does not show its plot.

Key down and key up are separate events with a pause between them: ImGui 1.86 has no input queue, and a press and
release inside one frame is lost.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_rule  # noqa: E402

BIN, PNG_CHECK, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
SCREEN = (1920, 1080)
TIMEOUT_S = 20
RUN_TIMEOUT_S = 120


class Failure(Exception):
    pass


def log(text):
    print(text, flush=True)


def xdotool(*args):
    subprocess.run(["xdotool", *map(str, args)], check=True, env=os.environ)


class App:
    """One running dlsys-lab window and what it last said about itself."""

    def __init__(self, name, args, size):
        self.name = name
        self.rects_path = os.path.join(OUT, f"{name}-rects.json")
        if os.path.exists(self.rects_path):
            os.remove(self.rects_path)
        self.files = os.path.join(OUT, f"{name}-files")
        os.makedirs(self.files, exist_ok=True)
        env = dict(os.environ, DLSYS_LAB_OUT=self.files, XDG_CONFIG_HOME=os.path.join(OUT, "config"))
        self.log_file = open(os.path.join(OUT, f"{name}.log"), "w")
        self.proc = subprocess.Popen(
            [BIN, "--size", f"{size[0]}x{size[1]}", "--widget-rects", self.rects_path, *args],
            env=env, stdout=self.log_file, stderr=subprocess.STDOUT)
        self.state = self.wait(lambda s: True, "the first frame")
        self.window = self.find_window()

    def find_window(self):
        deadline = time.time() + TIMEOUT_S
        while time.time() < deadline:
            found = subprocess.run(["xdotool", "search", "--pid", str(self.proc.pid)], capture_output=True, text=True)
            ids = found.stdout.split()
            if ids:
                return ids[-1]
            time.sleep(0.1)
        raise Failure("the app's window never appeared")

    def alive(self):
        if self.proc.poll() is not None:
            raise Failure(f"the app exited with code {self.proc.returncode} (log: {self.log_file.name})")

    def read(self):
        try:
            with open(self.rects_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def wait(self, predicate, what, timeout=TIMEOUT_S):
        """Waits until the app's state satisfies `predicate`; fails if it dies or takes longer than `timeout`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.alive()
            state = self.read()
            if state is not None and predicate(state):
                self.state = state
                return state
            time.sleep(0.01)
        raise Failure(f"timed out after {timeout} s waiting for {what}; last state: "
                      f"{ {k: v for k, v in (self.read() or {}).items() if k not in ('widgets', 'plots')} }")

    def settle(self, frames=3):
        """Lets a few frames pass so the state describes what the last action did."""
        start = (self.read() or self.state)["frame"]
        return self.wait(lambda s: s["frame"] >= start + frames, f"{frames} frames")

    def stable(self, frames=3, timeout=TIMEOUT_S):
        """The state once the layout has not changed for `frames` frames (scrolling and popups take a frame or two)."""
        first = None
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.alive()
            state = self.read()
            if state is not None:
                layout = (state["widgets"], state["plots"])
                if first is None or layout != first[1]:
                    first = (state["frame"], layout)
                elif state["frame"] - first[0] >= frames:
                    self.state = state
                    return state
            time.sleep(0.01)
        raise Failure(f"the layout kept changing for {timeout} s")

    def rect(self, name, timeout=TIMEOUT_S):
        """Where the widget is, once the layout has settled (a popup is placed on its second frame)."""
        self.wait(lambda s: name in s["widgets"], f"widget '{name}'", timeout)
        state = self.stable(timeout=timeout)
        if name not in state["widgets"]:
            raise Failure(f"widget '{name}' appeared and went away")
        return state["widgets"][name]

    def click(self, name):
        x0, y0, x1, y1 = self.rect(name)
        xdotool("mousemove", "--window", self.window, int((x0 + x1) / 2), int((y0 + y1) / 2))
        self.settle(2)  # the hover is seen before the press
        xdotool("mousedown", 1)
        self.settle(2)  # a press and release inside one frame is lost, however slow the frames are
        xdotool("mouseup", 1)
        self.settle(1)

    def click_until(self, name, predicate, what):
        """Clicks `name` until `predicate` holds: a second click only when the first changed nothing within a few
        seconds (once in many CI runs a press on a checkbox right after a run was not taken), so a toggle is never
        flipped twice. Says so in the log when it clicks again."""
        self.click(name)
        try:
            return self.wait(predicate, what, 5)
        except Failure:
            log(f"note: the click on '{name}' was not taken within 5 s; clicking again")
        self.click(name)
        return self.wait(predicate, what)

    def key(self, *keys):
        for k in keys:
            xdotool("keydown", k)
        self.settle(2)  # held across frames, as a hand holds a key (quick_taps_move_one_step_each sends taps)
        for k in reversed(keys):
            xdotool("keyup", k)
        self.settle(1)

    def resize(self, size):
        xdotool("windowsize", self.window, size[0], size[1])
        self.wait(lambda s: s["window"] == list(size), f"the window at {size[0]}x{size[1]}")
        self.settle()

    def quit(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Failure("the app did not quit within 10 s of SIGTERM")
        self.log_file.close()


def lesson_switch_walk(items):
    """A walk that enters every item from two or three other items: down the list, back up, then in steps of a stride
    that shares no factor with the list's length. (Every ordered pair once grows with the
    square of the lessons; a crash that needs one particular pair would also need that pair's state, which this
    walk's variety of neighbours covers without the quadratic cost.)"""
    n = len(items)
    stride = next((k for k in range(n // 2 - 1, 1, -1) if math.gcd(k, n) == 1), 1)
    return items + items[-2::-1] + [items[(i * stride) % n] for i in range(1, n + 1)]


def scroll_list_to(app, lesson, container):
    """Where the list of lessons is longer than its container (the sidebar, or the whole window for the lesson
    drop-down, whose items are named like the sidebar's), turns the wheel over it until the lesson is in sight."""
    for _ in range(30):
        state = app.stable()
        widgets = state["widgets"]
        side = widgets.get(container) if container else None
        side, item = side or [0, 0] + state["window"], widgets[f"sidebar/{lesson}"]
        if item[1] >= side[1] and item[3] <= side[3]:
            return
        xdotool("mousemove", "--window", app.window, int((item[0] + item[2]) / 2), int((side[1] + side[3]) / 2))
        xdotool("click", 5 if item[3] > side[3] else 4)
        try:
            app.wait(lambda s, r=item: s["widgets"][f"sidebar/{lesson}"] != r, "the list to scroll", 1.5)
        except Failure:
            return


def choose_lesson(app, lesson):
    """Clicks the lesson in the sidebar, or in the lesson drop-down where the window has no sidebar."""
    if f"sidebar/{lesson}" not in app.settle(1)["widgets"]:
        app.click("lesson_menu")
        app.rect(f"sidebar/{lesson}")
        scroll_list_to(app, lesson, None)
    else:
        scroll_list_to(app, lesson, "sidebar")
    app.click(f"sidebar/{lesson}")
    app.wait(lambda s: s["lesson"] == lesson, f"lesson {lesson}")


def walk_steps(app, with_keys):
    steps = app.state["steps"]
    if app.state["step"] != 1:
        for _ in range(app.state["step"] - 1):
            app.key("Left")
        app.wait(lambda s: s["step"] == 1, "step 1")
    for step in range(2, steps + 1):
        app.key("Right") if with_keys else app.click("step/next")
        app.wait(lambda s, want=step: s["step"] == want, f"step {step} of {app.state['lesson']}")
    for step in range(steps - 1, 0, -1):
        app.key("Left") if with_keys else app.click("step/prev")
        app.wait(lambda s, want=step: s["step"] == want, f"step {step} of {app.state['lesson']}")


def quick_taps_move_one_step_each(app):
    """A key pressed and released at once (down and up in one burst, as a tap reaches a busy machine between two
    frames) still moves one step: each of three taps, one after the other."""
    start = app.state["step"]
    for tap in range(1, 4):
        xdotool("keydown", "Right", "keyup", "Right")
        app.wait(lambda s, want=start + tap: s["step"] == want, f"step {start + tap} after {tap} quick tap(s) of Right")
    for _ in range(3):
        app.key("Left")
    app.wait(lambda s: s["step"] == start, f"step {start}")


def hold_key_moves_one_step(app):
    start = app.state["step"]
    xdotool("keydown", "Right")
    time.sleep(0.8)
    xdotool("keyup", "Right")
    state = app.settle(5)
    if state["step"] != start + 1:
        raise Failure(f"holding Right for 0.8 s moved from step {start} to step {state['step']}")
    app.key("Left")
    app.wait(lambda s: s["step"] == start, f"step {start}")


def change_a_parameter_marks_result_stale(app):
    """Clicks into the parameters' sliders (a click sets the value under the mouse) until one changes."""
    if not app.state["has_result"] or app.state["result_stale"]:
        raise Failure("expected a fresh result before changing a parameter")
    for name in sorted(n for n in app.stable()["widgets"] if n.startswith("params/")):
        x0, y0, x1, y1 = app.state["widgets"][name]
        xdotool("mousemove", "--window", app.window, int(x0 + 0.3 * (x1 - x0)), int((y0 + y1) / 2))
        app.settle(2)
        xdotool("mousedown", 1)
        app.settle(2)
        xdotool("mouseup", 1)
        state = app.settle(4)
        if state["result_stale"]:
            return
        app.key("Escape")  # a drop-down may have opened
    raise Failure("no parameter click marked the result as stale")


def answer_an_exercise(app):
    """Opens the lesson's exercises, types a prediction (key down and up per character) and presses Enter: the
    verdict appears beside the closed form's answer. The parameters are folded meanwhile, so the questions are in
    sight whatever the lesson's parameters take."""
    app.click("parameters")
    app.click("exercises")
    field = next((n for n in app.stable()["widgets"] if n.startswith("exercise/") and n.endswith("/answer")), None)
    if field is None:
        raise Failure(f"{app.state['lesson']}: the exercises opened with no answer field")
    exercise = field.split("/")[1]
    app.click(field)
    for key in ("4", "2", "Return"):
        app.key(key)
    app.wait(lambda s: f"exercise/{exercise}/verdict" in s["widgets"], f"the verdict on exercise {exercise}")
    app.click("exercises")  # folded again, and the parameters unfolded, as the other checks found the column
    app.wait(lambda s: f"exercise/{exercise}/verdict" not in s["widgets"], "the exercises to fold")
    app.click("parameters")
    app.wait(lambda s: any(n.startswith("params/") for n in s["widgets"]), "the parameters to unfold")


def compare_two_runs(app):
    """Pins the lesson's last run, runs it again and turns on the comparison: both runs' badges appear over the view;
    then the comparison is turned off and the pin let go, as the later checks expect the window."""
    app.click("compare/pin")
    app.wait(lambda s: s["has_pinned_run"], "the run to be pinned")
    run_to_end(app)
    app.click_until("compare/toggle", lambda s: s["comparing"], "the comparison to turn on")
    app.wait(lambda s: "compare/badge_b" in s["widgets"], "both runs' badges over the view")
    app.click("compare/toggle")
    app.wait(lambda s: not s["comparing"], "the comparison to turn off")
    app.click("compare/unpin")
    app.wait(lambda s: not s["has_pinned_run"], "the pin to be let go")


def compare_by_keys(app):
    """In presentation mode, which has no Pin or Compare controls, the keys do it: P pins the run shown, R runs again,
    C compares the two and stops comparing; P pins the new run in place of the old, and P again lets go of it."""
    app.key("p")
    app.wait(lambda s: s["has_pinned_run"], "P to pin the run shown")
    def runs(s):
        return s["progress"]["lessons"][s["lesson"]]["runs_finished"]
    before = runs(app.state)
    app.key("r")
    app.wait(lambda s: runs(s) > before and not s["busy"], "the run started with R to finish", RUN_TIMEOUT_S)
    app.key("c")
    app.wait(lambda s: s["comparing"] and "compare/badge_b" in s["widgets"], "C to compare the two runs")
    app.key("c")
    app.wait(lambda s: not s["comparing"], "C again to stop comparing")
    app.key("p")
    app.settle()
    if not app.state["has_pinned_run"]:
        raise Failure("P on a run that is not the pinned one let go of the pin instead of pinning the run shown")
    app.key("p")
    app.wait(lambda s: not s["has_pinned_run"], "P on the pinned run to let go of it")


def run_to_end(app):
    app.click("run")
    app.wait(lambda s: not s["busy"] and (s["has_result"] or s["last_error"]), "the run to finish", RUN_TIMEOUT_S)
    if not app.state["has_result"] or app.state["last_error"]:
        raise Failure(f"run of {app.state['lesson']} failed: {app.state['last_error']}")


def new_file(app, before):
    """The file the last action wrote, checked to exist and be non-empty."""
    state = app.wait(lambda s: len(s["written_files"]) > before or s["message_is_error"], "a file to be written")
    if state["message_is_error"]:
        raise Failure(f"export failed: {state['message']}")
    path = state["written_files"][-1]
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        raise Failure(f"'{path}' is missing or empty")
    return path


def export_every_item(app):
    """Opens the export menu with the mouse and uses each item that writes a file."""
    app.click("export")
    app.rect("export/window_png")
    items = [name.split("/", 1)[1] for name in app.settle(2)["widgets"]
             if name.startswith("export/") and name not in ("export/figure_title", "export/figure_light",
                                                            "export/open_state", "export/open_run")]
    written = []
    for i, item in enumerate(items):
        before = len(app.state["written_files"])
        if i > 0:  # the menu closes after each item
            app.click("export")
        app.click(f"export/{item}")
        written.append(new_file(app, before))
    # Open the saved state through the file picker: typed path, then Open.
    app.click("export")
    app.click("export/open_state")
    app.click("picker/path")
    app.key("ctrl", "a")
    xdotool("type", "--delay", 20, [p for p in written if "-state-" in p][-1])
    app.click("picker/open")
    app.wait(lambda s: s["message"].startswith("opened"), "the state file to open")
    # Open the exported run the same way: the lesson shows it as its result.
    app.click("export")
    app.click("export/open_run")
    app.click("picker/path")
    app.key("ctrl", "a")
    xdotool("type", "--delay", 20, written[items.index("json")])
    app.click("picker/open")
    app.wait(lambda s: s["message"].startswith("opened the recorded run") and s["has_result"],
             "the recorded run to open")
    return written


def visible_part(state, plot):
    """The part of a plot inside the view's scrolled window, as [x0, y0, x1, y1]."""
    v = state["widgets"].get("view", [0, 0] + state["window"])
    r = plot["rect"]
    return [max(r[0], v[0]), max(r[1], v[1]), min(r[2], v[2]), min(r[3], v[3])]


def turn_wheel(app, index, view, wheel):
    """One notch of the mouse wheel over the view (5 scrolls down, 4 up); False when nothing moved (the end of the
    scroll range)."""
    rect = app.state["plots"][index]["rect"]
    xdotool("mousemove", "--window", app.window, int((view[0] + view[2]) / 2), int((view[1] + view[3]) / 2))
    xdotool("click", wheel)
    try:
        app.wait(lambda s: s["plots"][index]["rect"] != rect, "the view to scroll", 1.5)
        return True
    except Failure:
        return False


def scroll_into_view(app, index):
    """Scrolls the view with the mouse wheel, as a reader would, until most of plot `index` is visible (a notch moves
    several lines, so "all of it" may be out of reach)."""
    last_wheel = None
    for _ in range(40):
        state = app.stable()
        plot = state["plots"][index]
        vis = visible_part(state, plot)
        view = state["widgets"].get("view", [0, 0] + state["window"])
        taller_than_view = plot["rect"][3] - plot["rect"][1] > view[3] - view[1]
        if taller_than_view:
            # A reader starts at its top (the legend), so that is what must be on screen.
            if plot["rect"][1] >= view[1] - 1 and vis[3] - vis[1] >= (view[3] - view[1]) * 0.6:
                return plot, vis
            wheel = 4 if plot["rect"][1] < view[1] else 5
        else:
            if vis[3] - vis[1] >= (plot["rect"][3] - plot["rect"][1]) * 0.6:
                return plot, vis
            wheel = 5 if plot["rect"][1] > view[1] else 4
        if last_wheel is not None and wheel != last_wheel:
            # Overshot: no notch gives more. A tall plot whose top went out of sight gets that notch back.
            if taller_than_view and wheel == 4 and turn_wheel(app, index, view, wheel):
                state = app.stable()
                plot = state["plots"][index]
                vis = visible_part(state, plot)
            return plot, vis
        last_wheel = wheel
        if not turn_wheel(app, index, view, wheel):
            return plot, vis
    return plot, vis


def telling_color(plot):
    """The plot's first colour that is not a grey (theory lines are drawn in the text colour)."""
    for c in plot["colors"]:
        r, g, b = int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)
        if max(r, g, b) - min(r, g, b) > 40:
            return c
    return plot["colors"][0]


def check_plots(app, tag):
    """On every step that draws a plot, the plot's first colour is on screen inside the plot's own rectangle."""
    shots = 0
    for step in range(1, app.state["steps"] + 1):
        if app.state["step"] != step:
            app.click("step/next")
            app.wait(lambda s, want=step: s["step"] == want, f"step {step}")
        state = app.settle(4)
        indices = [i for i, p in enumerate(state["plots"]) if p["colors"]][:1]
        if not indices:
            continue
        for index in indices:
            plot, visible = scroll_into_view(app, index)
            x0, y0, x1, y1 = visible
            w, h = app.state["window"]
            if x1 - x0 < 40 or y1 - y0 < 40:
                raise Failure(f"{tag}: plot '{plot['title']}' of {state['lesson']} step {step} has no room "
                              f"(plot {plot['rect']}, view {app.state['widgets'].get('view')})")
            before = len(app.state["written_files"])
            app.key("F12")
            png = new_file(app, before)
            if app.stable()["plots"][index]["rect"] != plot["rect"]:
                raise Failure(f"{tag}: plot {plot['title']!r} moved from {plot['rect']} to {app.state['plots'][index]['rect']} while nothing was touched")
            region = f"{x0 / w:.4f},{y0 / h:.4f},{x1 / w:.4f},{y1 / h:.4f}"
            check = subprocess.run([PNG_CHECK, png, "--size", f"{w}x{h}", "--color", telling_color(plot), "--region",
                                    region, "--min-pixels", "30"], capture_output=True, text=True)
            if check.returncode != 0:
                raise Failure(f"{tag}: plot '{plot['title']}' of {state['lesson']} step {step} in {png}, region "
                              f"{visible}: {check.stderr.strip()}")
        shots += 1
    walk_back = app.state["step"] - 1
    for _ in range(walk_back):
        app.key("Left")
    return shots


def check_figure_rule(app, lessons, mode):
    """Every step of every lesson meets the figure rule (figure_rule.py) in the window as it is, walked with Right
    from step 1; the view's rectangles come from the frame the step was drawn in."""
    failures = []
    for lesson in lessons:
        choose_lesson(app, lesson)
        for _ in range(app.state["step"] - 1):
            app.key("Left")
        app.wait(lambda s: s["step"] == 1, f"step 1 of {lesson}")
        for step in range(1, app.state["steps"] + 1):
            if step > 1:
                app.key("Right")
                app.wait(lambda s, want=step: s["step"] == want, f"step {step} of {lesson}")
            problems, _ = figure_rule.problems_of(app.stable(), mode)
            failures += [f"{lesson} step {step} ({mode}): {p}" for p in problems]
        for _ in range(app.state["steps"] - 1):  # back to step 1, where the checks after this one start
            app.key("Left")
        app.wait(lambda s: s["step"] == 1, f"step 1 of {lesson} again")
    if failures:
        raise Failure("the figure rule fails in the real window:\n  " + "\n  ".join(failures))


def keys_next_lesson_and_reopen(lessons):
    """F1 lists the keys and Esc hides them; a lesson's last step leads on to the next lesson; a window that closes
    on a step opens there again when launched with nothing named."""
    app = App("reopen", ["--lesson", lessons[0]], (1280, 720))
    app.key("F1")
    app.wait(lambda s: "keys_help" in s["widgets"], "the keys window after F1")
    app.key("Escape")
    app.wait(lambda s: "keys_help" not in s["widgets"], "the keys window to close after Esc")
    for _ in range(app.state["steps"] - 1):
        app.key("Right")
    app.wait(lambda s: s["step"] == s["steps"], "the last step")
    app.click("step/next_lesson")
    app.wait(lambda s: s["lesson"] == lessons[1] and s["step"] == 1, f"step 1 of {lessons[1]} after Next lesson")
    app.key("Right")
    app.wait(lambda s: s["step"] == 2, f"step 2 of {lessons[1]}")
    app.quit()
    app = App("reopened", [], (1280, 720))
    if (app.state["lesson"], app.state["step"]) != (lessons[1], 2):
        raise Failure(f"launched with nothing named, the window opened on {app.state['lesson']} step "
                      f"{app.state['step']}, not where the last one closed ({lessons[1]} step 2)")
    app.quit()


def main():
    os.makedirs(OUT, exist_ok=True)
    # Every launch here starts from no remembered session (the window reopens where the last one closed).
    shutil.rmtree(os.path.join(OUT, "config"), ignore_errors=True)
    lessons = [line.split()[0] for line in subprocess.run([BIN, "list"], capture_output=True, text=True,
                                                            check=True).stdout.splitlines() if line.strip()]
    t0 = time.time()

    app = App("quick", ["--quick"], (1280, 720))
    if os.environ.get("DRIVE_FIGURE_RULE_ONLY"):  # for working on the layout: the figure rule on a few lessons
        chosen = os.environ["DRIVE_FIGURE_RULE_ONLY"].split(",")
        for lesson in chosen:
            choose_lesson(app, lesson)
            run_to_end(app)
        check_figure_rule(app, chosen, "desk")
        app.resize((1920, 1080))
        app.key("F5")
        app.wait(lambda s: s["presentation"], "presentation mode")
        check_figure_rule(app, chosen, "present")
        log(f"ok: the figure rule on {chosen} ({time.time() - t0:.0f} s)")
        return
    if os.environ.get("DRIVE_PLOTS_FIRST"):  # for working on the layout: straight to the plot checks
        for lesson in lessons:
            choose_lesson(app, lesson)
            run_to_end(app)
        app.key("ctrl", "equal")
        app.key("ctrl", "equal")
        app.key("ctrl", "equal")
        app.key("ctrl", "equal")
        app.settle()
        for lesson in lessons:
            choose_lesson(app, lesson)
            check_plots(app, "first")
    # 1. Every lesson's sidebar entry, clicked from two or three different lessons.
    walk = lesson_switch_walk(lessons)
    for lesson in walk:
        choose_lesson(app, lesson)
    log(f"ok: {len(walk) - 1} lesson switches from the sidebar, each lesson entered from two or three others "
        f"({time.time() - t0:.0f} s)")

    # 2. Every step with Next / Prev, then with the arrow keys. 3. Run each lesson with the mouse.
    for lesson in lessons:
        choose_lesson(app, lesson)
        walk_steps(app, with_keys=False)
        walk_steps(app, with_keys=True)
        run_to_end(app)
    log(f"ok: every step walked both ways with buttons and keys, every lesson run ({time.time() - t0:.0f} s)")
    # The figure rule after the quick runs, at 1280x720 with 1x text (in presentation mode at 1920x1080 below).
    check_figure_rule(app, lessons, "desk")
    log(f"ok: every step's main figure whole and at least 30 % of 1280x720 ({time.time() - t0:.0f} s)")

    # A key held down moves one step, not one per repeat; a quick tap moves one too.
    choose_lesson(app, lessons[0])
    hold_key_moves_one_step(app)
    quick_taps_move_one_step_each(app)
    # Changing a parameter after a run marks the result as measured with other parameters.
    change_a_parameter_marks_result_stale(app)
    log(f"ok: a held key and each quick tap move one step; a changed parameter marks the last result "
        f"({time.time() - t0:.0f} s)")
    answer_an_exercise(app)
    log(f"ok: a typed prediction gets the closed form's verdict ({time.time() - t0:.0f} s)")
    compare_two_runs(app)
    log(f"ok: a pinned run and a new one compared, both badges shown ({time.time() - t0:.0f} s)")

    # 5. The export menu in desk mode, every item, on a lesson with timelines and one without.
    for lesson in ("schedules", lessons[0]):
        if lesson in lessons:
            choose_lesson(app, lesson)
            for path in export_every_item(app):
                log(f"   wrote {os.path.basename(path)} ({os.path.getsize(path)} bytes)")
    log(f"ok: every export item writes a non-empty file ({time.time() - t0:.0f} s)")

    # 6. Plots keep their plot at 1280x720 at 1x and 2x text, and at 1920x1080 at 2x (a projector's window with text
    # read from the back of the room; 1x text in that window leaves every view more room than 1280x720 does).
    for size, text_scales in (((1280, 720), (1.0, 2.0)), ((1920, 1080), (2.0,))):
        app.resize(size)
        for text_scale in text_scales:
            while app.state["text_scale"] < text_scale:
                app.key("ctrl", "equal")
                app.settle()
            shots = 0
            for lesson in lessons:
                choose_lesson(app, lesson)
                shots += check_plots(app, f"{size[0]}x{size[1]} at {text_scale:g}x")
            log(f"ok: {shots} plot steps show their plot at {size[0]}x{size[1]}, text {text_scale:g}x "
                f"({time.time() - t0:.0f} s)")
        while app.state["text_scale"] > 1.0:
            app.key("ctrl", "minus")
            app.settle()

    # The figure rule in presentation mode at 1920x1080 (its own text size), after the same runs.
    app.key("F5")
    app.wait(lambda s: s["presentation"] and s["window"] == [1920, 1080], "presentation mode at 1920x1080")
    check_figure_rule(app, lessons, "present")
    log(f"ok: every step's main figure whole and at least 30 % in presentation at 1920x1080 ({time.time() - t0:.0f} s)")
    compare_by_keys(app)
    log(f"ok: in presentation mode P, R and C pin, run and compare two runs ({time.time() - t0:.0f} s)")
    app.key("F5")
    app.wait(lambda s: not s["presentation"], "desk mode again")

    # 4. F5, Ctrl+=, Ctrl+-; then every step at 2x text in presentation mode, with the mouse and the keys.
    app.click("mode")
    app.wait(lambda s: s["presentation"], "presentation mode")
    app.key("F5")
    app.wait(lambda s: not s["presentation"], "desk mode after F5")
    app.key("F5")
    app.wait(lambda s: s["presentation"], "presentation mode after F5")
    scale = app.state["text_scale"]
    app.key("ctrl", "equal")
    app.wait(lambda s: s["text_scale"] > scale, "a larger text after Ctrl+=")
    app.key("ctrl", "minus")
    app.wait(lambda s: s["text_scale"] == scale, "the text size back after Ctrl+-")
    while app.state["text_scale"] < 2.0:
        app.key("ctrl", "equal")
        app.settle()
    for lesson in lessons:  # forward with the Next button (in check_plots), back with the arrow keys
        choose_lesson(app, lesson)
        check_plots(app, "presentation at 2x")
    log(f"ok: presentation mode at 2x text, every step of every lesson ({time.time() - t0:.0f} s)")
    app.quit()

    # 3. Cancel with the mouse: a full-size run, stopped while it measures; the app stays usable.
    app = App("cancel", ["--lesson", lessons[0]], (1280, 720))
    app.click("run")
    app.wait(lambda s: s["busy"], "the run to start")
    # A plain click, as a person gives it: press and release at once, not held across frames as app.click holds it.
    x0, y0, x1, y1 = app.rect("cancel")
    xdotool("mousemove", "--window", app.window, int((x0 + x1) / 2), int((y0 + y1) / 2))
    app.settle(2)
    xdotool("click", 1)
    app.wait(lambda s: not s["busy"], "the run to stop after a plain click on Cancel", 30)
    if "cancelled" not in app.state["last_error"] or app.state["has_result"]:
        raise Failure(f"Cancel did not stop the run: {app.state['last_error']!r}")
    walk_steps(app, with_keys=True)
    app.quit()
    log(f"ok: a plain click on Cancel stops a run and the window stays usable ({time.time() - t0:.0f} s)")

    keys_next_lesson_and_reopen(lessons)
    log(f"ok: F1 lists the keys, Next lesson at the last step, the last step reopens ({time.time() - t0:.0f} s)")


def with_display(body=None):
    """Starts Xvfb on a free display number and runs `body` (main() unless told) against it."""
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24",
                             "-nolisten", "tcp"], pass_fds=[write_fd], stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        display = f.readline().strip()
    os.environ["DISPLAY"] = f":{display}"
    try:
        (body or main)()
    finally:
        xvfb.terminate()
        xvfb.wait()


if __name__ == "__main__":
    try:
        with_display()
    except (Failure, subprocess.CalledProcessError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
