#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang in their own folder and runs each for SECONDS (default 10).
# Usage: scripts/fuzz.sh [SECONDS]. Needs clang (Debian: apt-get install clang); the normal build never does.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
build=${DLSYS_FUZZ_BUILD_DIR:-build-fuzz}
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found; install it with: apt-get install -y clang" >&2
  exit 2
fi
source scripts/compiler_cache.sh "$PWD"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" -DDLSYS_FUZZ=ON -DDLSYS_WITH_CUDA=OFF -DDLSYS_WITH_GUI=OFF -DBUILD_TESTING=OFF >/dev/null
# The readers live in dlsys_lessons: building only these targets leaves the app, the GUI and the tests out.
targets=(fuzz_model_config fuzz_param_text fuzz_state_file fuzz_run_file fuzz_progress_file)
cmake --build "$build" --target "${targets[@]}" -- -j"${DLSYS_FUZZ_JOBS:-$(nproc)}"
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  mkdir -p "$corpus"
  seeds=(tests/fuzz/seeds)
  [[ $target == fuzz_run_file ]] && seeds+=(tests/data/gpu)  # every lesson's recorded run
  echo "fuzz.sh: $target for $seconds s"
  # Deep nesting and long inputs are what broke the readers before: allow inputs up to 256 KiB.
  set +e
  ASAN_OPTIONS=detect_leaks=0 "$build/tests/fuzz/$target" -max_total_time="$seconds" -max_len=262144 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$build/$target-" "$corpus" "${seeds[@]}" >"$build/$target.log" 2>&1
  status=$?
  set -e
  tail -n 4 "$build/$target.log"
  if [[ $status -ne 0 ]]; then
    tail -n 60 "$build/$target.log" >&2
    echo "fuzz.sh: $target found a failure; the input is saved as $build/$target-crash-* (or -timeout-*, -oom-*)" >&2
    exit 1
  fi
done
