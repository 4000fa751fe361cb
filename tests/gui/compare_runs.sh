#!/usr/bin/env bash
# `compare A B -o FIGURE --json TABLE`: a run recorded on an H100 against one made here, drawn for both. The figure must
# carry both runs' badge colours (A and B) in its top band, where each run is named, and the figure the lesson's
# view draws (many colours); the table must name both files. Steps of both layouts: ddp's buckets (timelines side by
# side) and matmul's GFLOP/s (the second run overlaid on the first).
#   compare_runs.sh DLSYS_LAB PNG_CHECK OUT_DIR DATA_DIR
set -u
bin=$1 png_check=$2 out=$3 data=$4
mkdir -p "$out"
fail=0
# run_color in the dark theme (app/gui/theme.cpp): A and B.
run_a=6054d2 run_b=c43478
for spec in ddp:4 matmul:3; do
  lesson=${spec%%:*} step=${spec##*:}
  here=$out/$lesson-here.json png=$out/compare-$lesson.png table=$out/compare-$lesson.json
  if ! "$bin" run "$lesson" --quick --backend cpu --json "$here" >/dev/null ||
    ! "$bin" compare "$data/gpu/$lesson.json" "$here" --step "$step" -o "$png" --json "$table" >/dev/null; then
    echo "FAIL: $lesson: the run or the comparison failed"; fail=1; continue
  fi
  # Each badge is a line of text tall: a few thousand pixels of its colour in the top tenth of the figure.
  if "$png_check" "$png" --size 1600x1200 --min-colors 200 --color "$run_a" --region 0,0,1,0.1 --min-pixels 800 &&
    "$png_check" "$png" --size 1600x1200 --color "$run_b" --region 0,0,1,0.1 --min-pixels 800; then
    echo "ok:   $lesson step $step: both runs' colours in the compared figure"
  else
    echo "FAIL: $lesson step $step: $png lacks a run's colour"; fail=1
  fi
  if python3 - "$table" "$data/gpu/$lesson.json" "$here" <<'PY'; then
import json, sys
table = json.load(open(sys.argv[1]))
assert table["a"] == sys.argv[2] and table["b"] == sys.argv[3], (table["a"], table["b"])
assert any(row["name"] == "backend" and row["differs"] for row in table["params"])
assert table["measured"] and all("ratio_b_over_a" in row for row in table["measured"])
PY
    echo "ok:   $lesson: the table names both files, their backends differ"
  else
    echo "FAIL: $lesson: $table"; fail=1
  fi
done
# Presentation mode (the light theme) has its own pair of run colours.
png=$out/compare-matmul-present.png
if "$bin" compare "$data/gpu/matmul.json" "$out/matmul-here.json" --step 3 --present -o "$png" >/dev/null &&
  "$png_check" "$png" --size 1600x1200 --color 483cbe --region 0,0,1,0.1 --min-pixels 800 &&
  "$png_check" "$png" --size 1600x1200 --color b01e64 --region 0,0,1,0.1 --min-pixels 800; then
  echo "ok:   presentation mode: both runs' colours in the compared figure"
else
  echo "FAIL: presentation mode: $png lacks a run's colour"; fail=1
fi
exit $fail
