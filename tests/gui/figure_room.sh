#!/usr/bin/env bash
# Every step's figures read at a glance. A step's first figure is its main one (views draw the figure a step is about
# first). At 1280x720 with 1x text, and in presentation mode at 1920x1080, the main figure lies whole inside the view
# (no scrolling to see it, title and axes included) and its data area takes at least 30 % of the window's height;
# every other figure is no taller than the view. At 1280x720 with 2x text every figure is no taller than the view, so
# each can be seen whole at some scroll position of the view (the view itself lies inside the window). Each lesson runs once (--quick); its steps are drawn from that
# recorded run, every step of a lesson in one process per mode (`shot --every-step`), and `--widget-rects` says where
# the view and the figures were.
#   figure_room.sh DLSYS_LAB OUT_DIR [LESSON...]
set -u
bin=$1 out=$2
shift 2
mkdir -p "$out"
lessons=("$@")
[[ ${#lessons[@]} -gt 0 ]] || mapfile -t lessons < <("$bin" list | awk '{print $1}')
fail=0
rm -f "$out"/*-step*.json
for lesson in "${lessons[@]}"; do
  run=$out/$lesson-run.json
  if ! "$bin" run "$lesson" --quick --json "$run" >/dev/null; then
    echo "FAIL: $lesson: the quick run failed"
    fail=1
    continue
  fi
  for mode in desk present text2x; do
    case $mode in
      desk) size=1280x720 extra=() ;;
      present) size=1920x1080 extra=(--present) ;;
      text2x) size=1280x720 extra=(--text-scale 2) ;;
    esac
    if ! "$bin" shot --open-run "$run" --every-step --size "$size" "${extra[@]}" \
      --widget-rects "$out/$lesson-$mode.json" -o "$out/$lesson-$mode.png" >/dev/null; then
      echo "FAIL: $lesson ($mode): shot failed"
      fail=1
    fi
  done
done
# One pass over every step's rectangles: LESSON-MODE-stepN.json.
python3 - "$out" "${lessons[@]}" <<'PY' || fail=1
import glob, json, os, re, sys
out, lessons = sys.argv[1], sys.argv[2:]
sizes = {"desk": "1280x720", "present": "1920x1080", "text2x": "1280x720, 2x text"}
slack = 1.0  # points: rounding of the rectangles
failed = False

def height(r):
    return r[3] - r[1]

def problems_of(doc, mode):
    plots = doc["plots"]
    if not plots:
        return [], "a table, a diagram or text: nothing to measure"
    window_h = doc["window"][1]
    view = doc["widgets"]["view"]
    view_h = view[3] - view[1]
    problems = []
    if view[3] > window_h + slack:
        problems.append(f"the view reaches y {view[3]:.0f}, past the window's {window_h}: the page must scroll to it")
    for p in plots:
        if height(p["rect"]) <= 0:
            problems.append(f"'{p['title']}' has no room left for its data")
        if height(p["frame"]) > view_h + slack:
            problems.append(f"'{p['title']}' is {height(p['frame']):.0f} points tall, more than the view's "
                            f"{view_h:.0f}: it cannot be seen whole")
    if mode != "text2x":
        main = plots[0]
        top, bottom = main["frame"][1], main["frame"][3]
        if top < view[1] - slack or bottom > view[3] + slack:
            problems.append(f"the main figure '{main['title']}' is not whole in the view (y {top:.0f}..{bottom:.0f}, "
                            f"view y {view[1]:.0f}..{view[3]:.0f})")
        if height(main["rect"]) < 0.3 * window_h:
            problems.append(f"the main figure '{main['title']}' has {height(main['rect']):.0f} points of data area, "
                            f"under 30 % of the window's {window_h}")
    return problems, (f"{len(plots)} figure(s), the main one {100 * height(plots[0]['rect']) / window_h:.0f} % "
                      "of the window")

for lesson in lessons:
    for mode in sizes:
        paths = glob.glob(os.path.join(out, f"{lesson}-{mode}-step*.json"))
        if not paths:
            continue  # the shot failed, and said so
        for path in sorted(paths, key=lambda p: int(re.search(r"-step(\d+)\.json$", p).group(1))):
            doc = json.load(open(path))
            what = f"{lesson} step {doc['step']} ({mode}, {sizes[mode]})"
            problems, summary = problems_of(doc, mode)
            for problem in problems:
                print(f"FAIL: {what}: {problem}")
            if not problems:
                print(f"ok:   {what}: {summary}")
            failed = failed or bool(problems)
sys.exit(1 if failed else 0)
PY
exit $fail
