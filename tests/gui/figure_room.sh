#!/usr/bin/env bash
# Every step's figures read at a glance (the rule is stated and checked in figure_rule.py). Each lesson runs once
# (--quick); its steps are drawn from that recorded run, every step of a lesson in one process per mode
# (`shot --every-step`), and `--widget-rects` says where the view and the figures were.
#   figure_room.sh DLSYS_LAB OUT_DIR [LESSON...]
set -u
bin=$1 out=$2
shift 2
mkdir -p "$out"
lessons=("$@")
[[ ${#lessons[@]} -gt 0 ]] || mapfile -t lessons < <("$bin" list | awk '{print $1}')
fail=0
source "$(dirname "$0")/quick_run.sh"
rm -f "$out"/*-step*.json
for lesson in "${lessons[@]}"; do
  run=$out/$lesson-run.json
  if ! quick_run "$bin" "$lesson" "$run"; then
    echo "FAIL: $lesson: the quick run failed"
    fail=1
    continue
  fi
  for mode in desk present present720 text2x; do
    case $mode in
      desk) size=1280x720 extra=() ;;
      present) size=1920x1080 extra=(--present) ;;
      present720) size=1280x720 extra=(--present) ;;
      text2x) size=1280x720 extra=(--text-scale 2) ;;
    esac
    if ! "$bin" shot --open-run "$run" --every-step --size "$size" "${extra[@]}" \
      --widget-rects "$out/$lesson-$mode.json" -o "$out/$lesson-$mode.png" >/dev/null; then
      echo "FAIL: $lesson ($mode): shot failed"
      fail=1
    fi
  done
done
# One pass over every step's rectangles (LESSON-MODE-stepN.json), with the checker the real-window test uses too.
python3 "$(dirname "$0")/figure_rule.py" "$out" "${lessons[@]}" || fail=1
# Large text in presentation mode in a 1280x720 window: two plots that would keep a sliver of data side by side
# (quant's step 2) lie one under the other.
if [[ -f $out/quant-run.json ]]; then
  "$bin" shot --open-run "$out/quant-run.json" --step 2 --size 1280x720 --present --text-scale 1.75 \
    --widget-rects "$out/quant-large-text.json" -o "$out/quant-large-text.png" >/dev/null || fail=1
  python3 - "$out/quant-large-text.json" <<'PAIR' || fail=1
import json, sys
plots = json.load(open(sys.argv[1]))["plots"]
first, second = plots[0]["rect"], plots[1]["rect"]
if second[1] < first[3]:
    sys.exit("FAIL: quant step 2 with 1.75x text in presentation mode at 1280x720: its two plots are side by side")
PAIR
fi
exit $fail
