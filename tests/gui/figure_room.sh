#!/usr/bin/env bash
# Every step's figures read at a glance: at 1280x720 with 1x text, and in presentation mode at 1920x1080, each plot
# and timeline a step draws lies whole inside the view (no scrolling to see it) and the tallest takes at least 30 %
# of the window's height. Each lesson runs once (--quick); its steps are drawn from that recorded run, and `shot
# --widget-rects` says where the view and the plot areas were.
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
    echo "FAIL: $lesson: the quick run failed"; fail=1; continue
  fi
  for ((step = 1; step <= steps; step++)); do
    for mode in desk present; do
      size=1280x720 extra=()
      [[ $mode == present ]] && size=1920x1080 extra=(--present)
      rects=$out/$lesson-$step-$mode.json png=$out/$lesson-$step-$mode.png
      if ! "$bin" shot --open-run "$run" --step "$step" --size "$size" "${extra[@]}" --widget-rects "$rects" \
        -o "$png" >/dev/null; then
        echo "FAIL: $lesson step $step ($mode): shot failed"; fail=1; continue
      fi
      python3 - "$rects" "$lesson step $step ($mode, $size)" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
what = sys.argv[2]
plots = doc["plots"]
if not plots:
    sys.exit(0)  # a table, a diagram or text: nothing to measure
window_h = doc["window"][1]
view = doc["widgets"]["view"]
slack = 1.0  # points: rounding of the rectangles
cut = [p for p in plots if p["rect"][1] < view[1] - slack or p["rect"][3] > view[3] + slack]
tallest = max(p["rect"][3] - p["rect"][1] for p in plots)
problems = []
for p in cut:
    problems.append(f"'{p['title']}' is not whole in the view (plot y {p['rect'][1]:.0f}..{p['rect'][3]:.0f}, "
                    f"view y {view[1]:.0f}..{view[3]:.0f})")
if tallest < 0.3 * window_h:
    problems.append(f"the tallest figure is {tallest:.0f} points, under 30 % of the window's {window_h}")
for problem in problems:
    print(f"FAIL: {what}: {problem}")
if not problems:
    print(f"ok:   {what}: {len(plots)} figure(s), tallest {100 * tallest / window_h:.0f} % of the window")
sys.exit(1 if problems else 0)
PY
    done
  done
done
exit $fail
