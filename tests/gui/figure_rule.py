"""The figure rule, one checker for the screenshots' rectangles (figure_room.sh) and the real window's
(drive_window.py). A step's first figure is its main one. At 1280x720 with 1x text ("desk") and in presentation mode
at 1920x1080 ("present") and at 1280x720 ("present720", a projector's size) the main figure lies whole inside the view (no scrolling to see it, title and axes included)
and its data area takes at least 30 % of the window's height; every figure is no taller than the view. With 2x text
("text2x") only the second holds: each figure can be seen whole at some scroll position; and there, where the window is
short of room, what stands around the view folds to one line each (the caption, the result's marks, a view's warning
band) and the run's notes join the marks' line above the view, so the figures get the height; a diagram built of rows
of text draws its text no smaller than the 1x text (it takes a flatter layout instead). A diagram built of rows of
text (text_rows) is held to it too: where it would be taller than the view it draws its text smaller (the views'
begin_fitted_figure), so a tall one fails like a plot.

As a program: figure_rule.py OUT_DIR LESSON... checks OUT_DIR/LESSON-MODE-stepN.json (shot --every-step).
"""
import glob
import json
import os
import re
import sys

SIZES = {"desk": "1280x720", "present": "1920x1080", "present720": "1280x720, presentation", "text2x": "1280x720, 2x text"}
SLACK = 1.0  # points: rounding of the rectangles
LEAST_SHARE = 0.3
LEAST_TEXT_SCALE = 0.99  # rounding


def height(r):
    return r[3] - r[1]


def folding_problems(widgets):
    """Where the window is short of room (2x text at 1280x720) the caption and the bands take one line each."""
    line = height(widgets["step/prev"])  # a button: one line of text and its padding
    problems = []
    if "caption" not in widgets:
        problems.append("the caption is not folded to one line")
    for name, r in widgets.items():
        folds = name in ("caption", "run_notes") or name.startswith("mark/") or name.startswith("warning_band")
        if folds and height(r) > 1.5 * line:
            problems.append(f"'{name}' is {height(r):.0f} points tall, more than one line ({line:.0f})")
    if "run_notes" in widgets and widgets["run_notes"][1] > widgets["view"][1]:
        problems.append("the run's notes are under the view, not on the marks' line above it")
    return problems


def problems_of(doc, mode):
    """The rule's failures for one step's rectangles, and a summary line."""
    plots = doc["plots"]
    problems = folding_problems(doc["widgets"]) if mode == "text2x" else []
    if not plots:
        return problems, "a table or text: nothing to measure"
    window_h = doc["window"][1]
    view = doc["widgets"]["view"]
    view_h = view[3] - view[1]
    if view[3] > window_h + SLACK:
        problems.append(f"the view reaches y {view[3]:.0f}, past the window's {window_h}: the page must scroll to it")
    for p in plots:
        if height(p["rect"]) <= 0:
            problems.append(f"'{p['title']}' has no room left for its data")
        if height(p["frame"]) > view_h + SLACK:
            problems.append(f"'{p['title']}' is {height(p['frame']):.0f} points tall, more than the view's "
                            f"{view_h:.0f}: it cannot be seen whole")
    if mode == "text2x":
        for p in plots:
            if p["text_rows"] and p.get("text_scale", 1) < LEAST_TEXT_SCALE:
                problems.append(f"'{p['title']}' draws its text at {p['text_scale']:.2f} of the 1x text's size")
    else:
        main = plots[0]
        top, bottom = main["frame"][1], main["frame"][3]
        if top < view[1] - SLACK or bottom > view[3] + SLACK:
            problems.append(f"the main figure '{main['title']}' is not whole in the view (y {top:.0f}..{bottom:.0f}, "
                            f"view y {view[1]:.0f}..{view[3]:.0f})")
        if height(main["rect"]) < LEAST_SHARE * window_h:
            problems.append(f"the main figure '{main['title']}' has {height(main['rect']):.0f} points of data area, "
                            f"under 30 % of the window's {window_h}")
    summary = f"{len(plots)} figure(s), the main one {100 * height(plots[0]['rect']) / window_h:.0f} % of the window"
    return problems, summary


def check_files(out, lessons):
    failed = False
    for lesson in lessons:
        for mode in SIZES:
            paths = glob.glob(os.path.join(out, f"{lesson}-{mode}-step*.json"))
            for path in sorted(paths, key=lambda p: int(re.search(r"-step(\d+)\.json$", p).group(1))):
                with open(path) as f:
                    doc = json.load(f)
                what = f"{lesson} step {doc['step']} ({mode}, {SIZES[mode]})"
                problems, summary = problems_of(doc, mode)
                for problem in problems:
                    print(f"FAIL: {what}: {problem}")
                if not problems:
                    print(f"ok:   {what}: {summary}")
                failed = failed or bool(problems)
    return not failed


if __name__ == "__main__":
    sys.exit(0 if check_files(sys.argv[1], sys.argv[2:]) else 1)
