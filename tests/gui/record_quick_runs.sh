#!/usr/bin/env bash
# Records every lesson's quick run once, for the screenshot tests that draw them (quick_run.sh).
#   record_quick_runs.sh BIN OUT_DIR
set -u
bin=$1 out=$2
mkdir -p "$out"
rm -f "$out"/*.json
fail=0
for lesson in $("$bin" list | awk '{print $1}'); do
  # Written whole or not at all: a failed run leaves no file, and its consumers record their own.
  if ! "$bin" run "$lesson" --quick --json "$out/$lesson.json.part" >/dev/null; then
    echo "FAIL: the quick run of $lesson"; fail=1; rm -f "$out/$lesson.json.part"; continue
  fi
  mv "$out/$lesson.json.part" "$out/$lesson.json"
done
exit $fail
