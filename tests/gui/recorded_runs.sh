#!/usr/bin/env bash
# A recorded run draws exactly as the live run it came from: `shot LESSON --quick --json FILE` renders a run and saves
# it, `shot --open-run FILE` renders the saved run again, and the two PNGs must be identical byte for byte. The second
# render leaves out the line saying where the run was recorded (--no-recorded-label): that line sits above the view
# and moves everything below it down, so with it no pixel below would line up, and a comparison that skipped the
# moved part would skip the view itself. A third render with the label checks the label is there, in its band.
# Then a run recorded on an H100 (tests/data, CUDA and its device name) opens here without a GPU and draws.
#   recorded_runs.sh DLSYS_LAB PNG_CHECK OUT_DIR DATA_DIR
set -u
bin=$1 png_check=$2 out=$3 data=$4
mkdir -p "$out"
fail=0
# The dark theme's note colour (info_color) in the label's band: one text line tall, and half the view's width when a
# run recorded on a busy machine shares the line with the busy-machine band (about 9000 pixels; alone about 19000).
# The band sits under the step's text, which runs to six lines on some steps (lora's fifth), so the region reaches
# down to 0.3 of the height.
info_band=(--color 22344e --region 0.41,0.08,1,0.3 --min-pixels 6000)

# One lesson per kind of view: plots (matmul), the ring's step record and busbw plots (allreduce), timelines
# (schedules), per-rank memory tables (zero).
for spec in matmul:2 allreduce:4 schedules:3 zero:3; do
  lesson=${spec%%:*} step=${spec##*:}
  live=$out/recorded-$lesson-live.png again=$out/recorded-$lesson-again.png labelled=$out/recorded-$lesson-label.png
  if ! "$bin" shot "$lesson" --quick --step "$step" --json "$out/recorded-$lesson.json" -o "$live" >/dev/null ||
    ! "$bin" shot --open-run "$out/recorded-$lesson.json" --step "$step" --no-recorded-label -o "$again" >/dev/null ||
    ! "$bin" shot --open-run "$out/recorded-$lesson.json" --step "$step" -o "$labelled" >/dev/null; then
    echo "FAIL: $lesson: a shot failed"; fail=1; continue
  fi
  if cmp -s "$live" "$again"; then
    echo "ok:   $lesson step $step: the recorded run renders the same pixels as the live run"
  else
    echo "FAIL: $lesson step $step: $again differs from $live"; fail=1
  fi
  "$png_check" "$labelled" --size 1600x900 "${info_band[@]}" || { echo "FAIL: $lesson: no recorded-run label"; fail=1; }
done

# A run made while other programs kept a core busy: its warning band stands above the steps that show what it
# measured, and not above a theory step, where nothing was measured. The run is a real one with its conditions
# rewritten to a busy machine's, so that the check does not depend on this machine's load.
# The dark theme's warning band (warning_color at 18 %): one text line across the view, about 19000 pixels.
busy_band=(--color 342627 --region 0.41,0.1,1,0.3)
if "$bin" run bubble --quick --json "$out/bubble-idle.json" >/dev/null &&
  python3 - "$out/bubble-idle.json" "$out/bubble-busy.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
run["backend"].update(other_busy_cores=1.0, disturbed=1)
json.dump(run, open(sys.argv[2], "w"))
PY
then
  for step_pixels in 1:--max-pixels=2000 5:--min-pixels=12000; do
    step=${step_pixels%%:*} limit=${step_pixels#*:}
    png=$out/busy-bubble-$step.png
    if "$bin" shot --open-run "$out/bubble-busy.json" --step "$step" --no-recorded-label -o "$png" >/dev/null &&
      "$png_check" "$png" --size 1600x900 "${busy_band[@]}" ${limit%%=*} ${limit#*=}; then
      echo "ok:   a busy machine's run: bubble step $step ${limit%%=*} ${limit#*=} of the warning band"
    else
      echo "FAIL: a busy machine's run: bubble step $step's warning band (${limit%%=*} ${limit#*=})"; fail=1
    fi
  done
else
  echo "FAIL: could not record a bubble run to mark as busy"; fail=1
fi

# Recorded on an H100 (CUDA, NVIDIA H100 80GB HBM3), opened on a machine with no GPU: ranks as threads, and ranks as
# two processes under mpirun (the lab's ring over CUDA IPC), whose measured step is 6.
for run_step in h100-allreduce-run:1 h100-allreduce-run:4 h100-allreduce-run:5 h100-allreduce-run:6 \
  h100-allreduce-processes-run:6; do
  run=${run_step%:*} step=${run_step#*:}
  png=$out/recorded-$run-$step.png
  if ! "$bin" shot --open-run "$data/$run.json" --step "$step" -o "$png" >/dev/null; then
    echo "FAIL: $run does not render step $step"; fail=1; continue
  fi
  "$png_check" "$png" --size 1600x900 --min-colors 200 "${info_band[@]}" ||
    { echo "FAIL: $run's step $step lacks its label"; fail=1; }
done
# Every lesson's default GPU run, recorded on an H100 (tests/data/gpu: `run LESSON --backend cuda --json` as the lab
# wrote it): every step of each opens here, without a GPU, and draws under its recorded-run label.
for run in "$data"/gpu/*.json; do
  [[ -f "$run" ]] || continue
  lesson=$(basename "$run" .json)
  steps=$("$bin" list | awk -v lesson="$lesson" '$1 == lesson' | sed -E 's/.*\(([0-9]+) steps.*/\1/')
  if [[ -z "$steps" ]]; then echo "FAIL: $run names no lesson of this build"; fail=1; continue; fi
  for ((step = 1; step <= steps; step++)); do
    png=$out/recorded-gpu-$lesson-$step.png
    if ! "$bin" shot --open-run "$run" --step "$step" -o "$png" >/dev/null; then
      echo "FAIL: $run does not render step $step"; fail=1; continue
    fi
    "$png_check" "$png" --size 1600x900 "${info_band[@]}" || { echo "FAIL: $run's step $step lacks its label"; fail=1; }
  done
  echo "ok:   the H100 recording of $lesson renders its $steps steps"
done
exit $fail
