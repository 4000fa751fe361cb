# Sourced by the screenshot tests: a lesson's quick run as a run file. The tests that only draw a quick run share
# one recording of each (the `quick_runs` fixture, its folder in DLSYS_QUICK_RUNS) instead of each measuring again.
#   quick_run BIN LESSON FILE   - FILE holds LESSON's quick run; exit status of the run when it had to be recorded
quick_run() {
  local bin=$1 lesson=$2 file=$3
  if [[ -n "${DLSYS_QUICK_RUNS:-}" && -s "$DLSYS_QUICK_RUNS/$lesson.json" ]]; then
    cp "$DLSYS_QUICK_RUNS/$lesson.json" "$file"
  else
    "$bin" run "$lesson" --quick --json "$file" >/dev/null
  fi
}
