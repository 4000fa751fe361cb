#!/usr/bin/env bash
# The real binary, end to end: exit codes reach the shell, messages reach stderr, JSON reaches stdout.
set -u
bin=$1
fail=0
expect() {  # expect CODE "substring of stderr" args...
  local code=$1 text=$2; shift 2
  local err
  err=$(env -u DISPLAY -u WAYLAND_DISPLAY "$bin" "$@" 2>&1 >/dev/null); local got=$?
  if [[ $got -ne $code || "$err" != *"$text"* ]]; then
    echo "FAIL: dlsys-lab $* -> exit $got, stderr: $err (wanted exit $code and '$text')"; fail=1
  else
    echo "ok:   dlsys-lab $* -> exit $got"
  fi
}
expect 2 "unknown lesson 'nosuch'" run nosuch
expect 2 "parameter 'm': value '-3'" run matmul --set m=-3
expect 2 "not of the form key=value" run matmul --set m
# Saved lesson states: malformed files are refused before any window opens.
tmp=$(mktemp -d)
echo '{"lesson": "matmul", "step": 2, "params": {"m": "64"}' > "$tmp/truncated.json"
echo '{"lesson": "nosuch"}' > "$tmp/unknown.json"
echo '{"lesson": "matmul", "step": 7}' > "$tmp/step.json"
echo '{"lesson": "matmul", "params": {"m": "0"}}' > "$tmp/param.json"
expect 2 "not valid JSON" --open "$tmp/truncated.json"
expect 2 "unknown lesson 'nosuch'" --open "$tmp/unknown.json"
expect 2 "step 7 is out of range; lesson 'matmul' has steps 1 to 5" --open "$tmp/step.json"
expect 2 "parameter 'm': value '0'" --open "$tmp/param.json"
expect 2 "File does not exist" --open "$tmp/missing.json"
expect 2 "--set needs --lesson" --set m=3
expect 0 "" list
expect 0 "" info
out=$("$bin" run matmul --set m=8 --set n=8 --set k=8 --set sizes=8 --set repeats=1 --json - 2>/dev/null)
if [[ "$out" != *'"lesson": "matmul"'* ]]; then echo "FAIL: run --json - printed no JSON"; fail=1; else echo "ok:   run --json -"; fi
exit $fail
