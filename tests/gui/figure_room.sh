#!/usr/bin/env bash
# Every step's figures read at a glance. A step's first figure is its main one (views draw the figure a step is about
# first). At 1280x720 with 1x text, and in presentation mode at 1920x1080, the main figure lies whole inside the view
# (no scrolling to see it, title and axes included) and its data area takes at least 30 % of the window's height;
# every other figure is no taller than the view. At 1280x720 with 2x text every figure is no taller than the view, so
# each can be seen whole at some scroll position. Each lesson runs once (--quick); its steps are drawn from that
# recorded run, and `shot --widget-rects` says where the view and the figures were.
#   figure_room.sh DLSYS_LAB OUT_DIR [LESSON...]
set -u
bin=$1 out=$2
shift 2
mkdir -p "$out"
lessons=("$@")
[[ ${#lessons[@]} -gt 0 ]] || mapfile -t lessons < <("$bin" list | awk '{print $1}')
fail=0
for lesson in "${lessons[@]}"; do
  steps=$("$bin" list | awk -v l="$lesson" '$1 == l' | sed -E 's/.*\(([0-9]+) steps.*/\1/')
  run=$out/$lesson-run.json
  if ! "$bin" run "$lesson" --quick --json "$run" >/dev/null; then
    echo "FAIL: $lesson: the quick run failed"
    fail=1
    continue
  fi
  for ((step = 1; step <= steps; step++)); do
    for mode in desk present text2x; do
      case $mode in
        desk) size=1280x720 extra=() ;;
        present) size=1920x1080 extra=(--present) ;;
        text2x) size=1280x720 extra=(--text-scale 2) ;;
      esac
      rects=$out/$lesson-$step-$mode.json png=$out/$lesson-$step-$mode.png
      if ! "$bin" shot --open-run "$run" --step "$step" --size "$size" "${extra[@]}" --widget-rects "$rects" \
        -o "$png" >/dev/null; then
        echo "FAIL: $lesson step $step ($mode): shot failed"
        fail=1
        continue
      fi
      python3 - "$rects" "$mode" "$lesson step $step ($mode, $size)" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
mode, what = sys.argv[2], sys.argv[3]
plots = doc["plots"]
if not plots:
    sys.exit(0)  # a table, a diagram or text: nothing to measure
window_h = doc["window"][1]
view = doc["widgets"]["view"]
view_h = view[3] - view[1]
slack = 1.0  # points: rounding of the rectangles
def height(r):
    return r[3] - r[1]
problems = []
for p in plots:
    if height(p["rect"]) <= 0:
        problems.append(f"'{p['title']}' has no room left for its data")
    if height(p["frame"]) > view_h + slack:
        problems.append(f"'{p['title']}' is {height(p['frame']):.0f} points tall, more than the view's {view_h:.0f}: "
                        "it cannot be seen whole")
if mode != "text2x":
    main = plots[0]
    top, bottom = main["frame"][1], main["frame"][3]
    if top < view[1] - slack or bottom > view[3] + slack:
        problems.append(f"the main figure '{main['title']}' is not whole in the view (y {top:.0f}..{bottom:.0f}, view "
                        f"y {view[1]:.0f}..{view[3]:.0f})")
    if height(main["rect"]) < 0.3 * window_h:
        problems.append(f"the main figure '{main['title']}' has {height(main['rect']):.0f} points of data area, under "
                        f"30 % of the window's {window_h}")
for problem in problems:
    print(f"FAIL: {what}: {problem}")
if not problems:
    print(f"ok:   {what}: {len(plots)} figure(s), the main one {100 * height(plots[0]['rect']) / window_h:.0f} % "
          "of the window")
sys.exit(1 if problems else 0)
PY
    done
  done
done
exit $fail
