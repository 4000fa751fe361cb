#!/usr/bin/env bash
# Screenshot tests that look at pixels.
#   screenshots.sh shot BIN CHECK OUTDIR   - `shot` with no display at all, every step of every lesson
#   screenshots.sh gui  BIN CHECK OUTDIR   - the real window under Xvfb, a run on the worker thread, then a PNG
set -u
mode=$1 bin=$2 check=$3 out=$4
mkdir -p "$out"
fail=0
source "$(dirname "$0")/quick_run.sh"
# The first series colour of the dark theme (app/gui/theme.cpp, kOkabeItoOnDark[0]).
series0=56a0eb

if [[ $mode == shot ]]; then
  # Every step of a lesson from one quick run, in one process: LESSON.png becomes LESSON-step1.png, ...
  for lesson in $("$bin" list | awk '{print $1}'); do
    steps=$("$bin" list | awk -v l="$lesson" '$1 == l' | sed -E 's/.*\(([0-9]+) steps.*/\1/')
    rm -f "$out/$lesson"-step*.png
    if ! quick_run "$bin" "$lesson" "$out/$lesson-run.json" ||
      ! env -u DISPLAY -u WAYLAND_DISPLAY "$bin" shot --open-run "$out/$lesson-run.json" --every-step --size 1280x720 \
        -o "$out/$lesson.png"; then
      echo "FAIL: shot $lesson --every-step"; fail=1; continue
    fi
    for ((step = 1; step <= steps; step++)); do
      "$check" "$out/$lesson-step$step.png" --size 1280x720 --min-colors 40 || fail=1
    done
    [[ ! -e "$out/$lesson-step$((steps + 1)).png" ]] || { echo "FAIL: $lesson: a step past the last one"; fail=1; }
  done
  # A plot step must show the measured series in the plot area (right of the controls column).
  env -u DISPLAY "$bin" shot matmul --step 2 --quick --size 1280x720 -o "$out/matmul-plot.png" >/dev/null || fail=1
  "$check" "$out/matmul-plot.png" --size 1280x720 --min-colors 60 --color $series0 --region 0.45,0.15,1,0.85 --min-pixels 200 || fail=1
  # The kvcache live step plots the measured time per token (first series colour) in the plot area.
  env -u DISPLAY "$bin" shot --open-run "$out/kvcache-run.json" --step 6 --size 1280x720 -o "$out/kvcache-live.png" >/dev/null || fail=1
  "$check" "$out/kvcache-live.png" --size 1280x720 --min-colors 60 --color $series0 --region 0.45,0.25,1,0.75 --min-pixels 200 || fail=1
  # The pipeline timelines: forward blocks (span colour of F0, app/export/span_colors.cpp) in the view area.
  env -u DISPLAY "$bin" shot schedules --step 1 --quick --set p=4 --set m=8 --size 1280x720 -o "$out/schedules-timeline.png" >/dev/null || fail=1
  "$check" "$out/schedules-timeline.png" --size 1280x720 --min-colors 40 --color 0072b2 --region 0.45,0.15,1,0.9 --min-pixels 300 || fail=1
  env -u DISPLAY "$bin" shot --open-run "$out/bubble-run.json" --step 3 --size 1280x720 -o "$out/bubble-timeline.png" >/dev/null || fail=1
  "$check" "$out/bubble-timeline.png" --size 1280x720 --min-colors 40 --color 0072b2 --region 0.45,0.15,1,0.9 --min-pixels 300 || fail=1
  # The ddp buckets step: a measured step with backward (orange) and the bucket all-reduces (purple) on every rank.
  env -u DISPLAY "$bin" shot --open-run "$out/ddp-run.json" --step 4 --size 1280x720 -o "$out/ddp-timeline.png" >/dev/null || fail=1
  "$check" "$out/ddp-timeline.png" --size 1280x720 --min-colors 40 --color d55e00 --region 0.45,0.15,1,0.9 --min-pixels 300 || fail=1
  "$check" "$out/ddp-timeline.png" --size 1280x720 --min-colors 40 --color 8e44ad --region 0.45,0.15,1,0.9 --min-pixels 300 || fail=1
  # The ring step-through draws each rank's chunks striped in the ranks' colours (rank 0's is the first series colour).
  env -u DISPLAY "$bin" shot --open-run "$out/allreduce-run.json" --step 3 --size 1280x720 -o "$out/allreduce-ring.png" >/dev/null || fail=1
  "$check" "$out/allreduce-ring.png" --size 1280x720 --min-colors 60 --color $series0 --region 0.45,0.25,0.8,0.95 --min-pixels 1000 || fail=1
  # The serving Gantt chart: prefills of requests 0, 6, 12 in the first series colour across the batch slots.
  env -u DISPLAY "$bin" shot --open-run "$out/serving-run.json" --step 3 --size 1280x720 -o "$out/serving-gantt.png" >/dev/null || fail=1
  "$check" "$out/serving-gantt.png" --size 1280x720 --min-colors 40 --color $series0 --region 0.45,0.15,1,0.9 --min-pixels 200 || fail=1
  # The lora loss step: full fine-tuning's loss curve (first series colour) in the plot area.
  env -u DISPLAY "$bin" shot --open-run "$out/lora-run.json" --step 2 --size 1280x720 -o "$out/lora-loss.png" >/dev/null || fail=1
  "$check" "$out/lora-loss.png" --size 1280x720 --min-colors 40 --color $series0 --region 0.45,0.15,1,0.9 --min-pixels 200 || fail=1
  # The checkpointing stack: every layer's hidden layer (second series colour) in the keep-everything row; the memory
  # step's ledger points (first series colour) on the formula's curve.
  env -u DISPLAY "$bin" shot --open-run "$out/checkpointing-run.json" --step 1 --size 1280x720 -o "$out/checkpointing-stack.png" >/dev/null || fail=1
  "$check" "$out/checkpointing-stack.png" --size 1280x720 --min-colors 40 --color f07828 --region 0.45,0.2,1,0.5 --min-pixels 2000 || fail=1
  env -u DISPLAY "$bin" shot --open-run "$out/checkpointing-run.json" --step 2 --size 1280x720 -o "$out/checkpointing-memory.png" >/dev/null || fail=1
  "$check" "$out/checkpointing-memory.png" --size 1280x720 --min-colors 40 --color $series0 --region 0.45,0.35,1,0.9 --min-pixels 100 || fail=1
  # The moe router: the kept assignments per expert (first series colour) under the capacity line; the overlap step's
  # timelines: experts (compute, F's colour) and all-to-alls (the communication colour) on every rank.
  env -u DISPLAY "$bin" shot moe --step 1 --quick --size 1280x720 -o "$out/moe-router.png" >/dev/null || fail=1
  "$check" "$out/moe-router.png" --size 1280x720 --min-colors 40 --color $series0 --region 0.45,0.3,1,0.85 --min-pixels 5000 || fail=1
  env -u DISPLAY "$bin" shot moe --step 4 --quick --size 1280x720 -o "$out/moe-overlap.png" >/dev/null || fail=1
  "$check" "$out/moe-overlap.png" --size 1280x720 --min-colors 40 --color 0072b2 --region 0.45,0.3,1,0.95 --min-pixels 1000 || fail=1
  "$check" "$out/moe-overlap.png" --size 1280x720 --min-colors 40 --color cc79a7 --region 0.45,0.3,1,0.95 --min-pixels 1000 || fail=1
  # --scale 2 keeps the layout of --size and doubles the pixels: the plot sits where it sits at 1x.
  env -u DISPLAY "$bin" shot --open-run "$out/matmul-run.json" --step 2 --size 1600x900 --scale 2 -o "$out/matmul-2x.png" >/dev/null || fail=1
  "$check" "$out/matmul-2x.png" --size 3200x1800 --min-colors 60 --color $series0 --region 0.45,0.15,1,0.85 || fail=1
  # Twice the text in the same window still draws the plot (the view scrolls rather than squash it).
  env -u DISPLAY "$bin" shot --open-run "$out/matmul-run.json" --step 2 --size 1280x720 --text-scale 2 -o "$out/matmul-text2x.png" >/dev/null || fail=1
  "$check" "$out/matmul-text2x.png" --size 1280x720 --min-colors 40 --color $series0 --region 0,0.15,1,0.95 --min-pixels 200 || fail=1
  # Presentation mode: light background.
  env -u DISPLAY "$bin" shot --open-run "$out/matmul-run.json" --step 2 --present --size 1280x720 -o "$out/matmul-present.png" >/dev/null || fail=1
  "$check" "$out/matmul-present.png" --size 1280x720 --min-colors 40 --color ffffff --region 0,0,1,0.1 --min-pixels 20000 || fail=1
  # Bad input to shot: exit 2.
  env -u DISPLAY "$bin" shot matmul --step 9 -o "$out/x.png" 2>/dev/null; [[ $? -eq 2 ]] || { echo "FAIL: shot --step 9 should exit 2"; fail=1; }
  env -u DISPLAY "$bin" shot matmul --size 10x10 -o "$out/x.png" 2>/dev/null; [[ $? -eq 2 ]] || { echo "FAIL: shot --size 10x10 should exit 2"; fail=1; }
  env -u DISPLAY "$bin" shot matmul --every-step --step 2 -o "$out/x.png" 2>/dev/null; [[ $? -eq 2 ]] || { echo "FAIL: shot --every-step --step 2 should exit 2"; fail=1; }
elif [[ $mode == gui ]]; then
  png="$out/gui-matmul.png"
    xvfb-run -a -s '-screen 0 1600x900x24' "$bin" --lesson matmul --step 2 --quick --run --frames 5 \
    --screenshot "$png" --figure "$out/gui-figure.png" --figure-scale 2 --size 1600x900 2>&1 | tee "$out/gui.log" || fail=1
  "$check" "$png" --size 1600x900 --min-colors 60 --color $series0 --region 0.45,0.15,1,0.85 --min-pixels 200 || fail=1
  # The figure export renders only the view, offscreen, at twice the view's size in points.
  "$check" "$out/gui-figure.png" --min-colors 60 --color $series0 --min-pixels 400 || fail=1
  grep -q "first frame after" "$out/gui.log" || { echo "FAIL: no first-frame report"; fail=1; }
  # From desk mode (dark window) a figure can be exported in the light theme: a white ground in the figure.
  xvfb-run -a -s '-screen 0 1600x900x24' "$bin" --lesson matmul --step 2 --quick --run --frames 5 \
    --screenshot "$out/gui-desk.png" --figure "$out/gui-figure-light.png" --figure-light --size 1600x900 >/dev/null 2>&1 || fail=1
  "$check" "$out/gui-figure-light.png" --color ffffff --min-pixels 20000 || { echo "FAIL: no light figure from desk mode"; fail=1; }
  "$check" "$out/gui-figure.png" --color ffffff --max-pixels 200000 || { echo "FAIL: the desk figure is not dark"; fail=1; }
  # Without --size the window fills the monitor's work area: here the whole of a 1280x720 virtual screen.
  xvfb-run -a -s '-screen 0 1280x720x24' "$bin" --lesson matmul --quick --frames 3 \
    --screenshot "$out/gui-work-area.png" >/dev/null 2>&1 || fail=1
  "$check" "$out/gui-work-area.png" --size 1280x720 --min-colors 40 ||
    { echo "FAIL: without --size the window does not fill the screen's work area"; fail=1; }
  # Without a display the GUI explains itself and exits 2 instead of crashing.
  env -u DISPLAY -u WAYLAND_DISPLAY "$bin" 2>"$out/nodisplay.txt"; code=$?
  [[ $code -eq 2 ]] && grep -q "Headless commands" "$out/nodisplay.txt" || { echo "FAIL: no-display message (exit $code)"; fail=1; }
fi
exit $fail
