#!/usr/bin/env bash
# Builds the lab with ThreadSanitizer (clang, -O1 -g, no GUI, no CUDA) in its own folder and runs the unit tests and
# every lesson's quick run under it. Any report fails the script; the only ones suppressed are inside
# OpenBLAS's own thread pool, which is not instrumented (tests/tsan.supp).
# Usage: scripts/tsan.sh. Needs clang (Debian: apt-get install clang). Build folder: DLSYS_TSAN_BUILD_DIR
# (default build-tsan); parallel jobs: DLSYS_TSAN_JOBS (default: every core). About 5 min on 2 cores from clean.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${DLSYS_TSAN_BUILD_DIR:-build-tsan}
if ! command -v clang++ >/dev/null; then
  echo "tsan.sh: clang++ not found; install it with: apt-get install -y clang" >&2
  exit 2
fi
# Debug's own flags are only -g, so -O1 holds for every file but the CPU kernels, which ask for -O3 themselves.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1 -g" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
  -DDLSYS_WITH_GUI=OFF -DDLSYS_WITH_CUDA=OFF >/dev/null
cmake --build "$build" --target dlsys_tests dlsys-lab -- -j"${DLSYS_TSAN_JOBS:-$(nproc)}"

export TSAN_OPTIONS="suppressions=$root/tests/tsan.supp halt_on_error=0 second_deadlock_stack=1"
status=0
check() {  # check NAME COMMAND...: runs the command, keeps its output in the build folder, notes a failure
  local log="$build/tsan-$1.log" code=0
  echo "tsan.sh: $1"
  "${@:2}" >"$log" 2>&1 || code=$?
  # The log, not the exit code, says whether TSan reported: dlsys-lab ends with _Exit (app/main.cpp), which skips
  # the exit handler where TSan would turn its reports into a failing exit code.
  if [[ $code != 0 ]] || grep -q 'ThreadSanitizer' "$log"; then
    echo "tsan.sh: $1 failed (exit $code); ThreadSanitizer's reports and the output are in $log" >&2
    grep -A12 '^WARNING: ThreadSanitizer' "$log" | head -60 >&2 || true
    status=1
  fi
}
check unit-tests "$build/tests/dlsys_tests"
# Every lesson the build lists: a new lesson is checked without being added here.
for lesson in $("$build/app/dlsys-lab" list | awk 'NF { print $1 }'); do
  check "run-$lesson" "$build/app/dlsys-lab" run "$lesson" --quick --backend cpu
done
[[ $status == 0 ]] && echo "tsan.sh: no reports outside OpenBLAS's thread pool"
exit $status
