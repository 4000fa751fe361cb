#!/usr/bin/env bash
# Everything the lab measures about its own kernels on a GPU, in one go: every kernel family's benchmark (each checks
# its variants against the CPU reference and prints its speed beside the vendor library's), PyTorch's kernels timed
# as peers on the same GPU where PyTorch is installed, and, with DLSYS_RECORD_DIR set, every lesson's default GPU run
# saved as the JSON `run --json` writes (the recordings tests/data/gpu/ holds). Exits 1 when a benchmark finds a wrong
# result or a recorded run fails, 77 when no GPU answers.
# Usage: bench/gpu-bench.sh                 (binaries from $DLSYS_BUILD_DIR, default build-gpu-check/)
#        DLSYS_APP=path/dlsys-lab DLSYS_BENCH_DIR=path/bench bench/gpu-bench.sh   (binaries built elsewhere)
#        DLSYS_BENCH_OUT=dir keeps the peers' JSON and each benchmark's log there.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DLSYS_BUILD_DIR:-$root/build-gpu-check}
app=${DLSYS_APP:-$build/app/dlsys-lab}
bench_dir=${DLSYS_BENCH_DIR:-$build/bench}
out=${DLSYS_BENCH_OUT:-$(mktemp -d)}
mkdir -p "$out"

if ! "$app" info | grep -q "^CUDA backend: available"; then
  echo "gpu-bench: no GPU answers on this machine; nothing to measure (exit 77)"
  exit 77
fi
"$app" info | grep -A2 "^CUDA backend"

failed=0
for program in "$bench_dir"/dlsys_*_bench; do
  [[ -x "$program" ]] || continue
  name=$(basename "$program")
  echo
  echo "== $name"
  if ! timeout 300 "$program" 2>&1 | tee "$out/$name.log"; then
    echo "gpu-bench: $name reported a failure"
    failed=1
  fi
done

echo
echo "== PyTorch on the same GPU (a peer, not part of the lab)"
rc=0
timeout 300 python3 "$root/bench/torch_peers.py" --json "$out/torch_peers.json" || rc=$?
if [[ $rc -ne 0 && $rc -ne 77 ]]; then echo "gpu-bench: the peers' script failed ($rc)"; fi

if [[ -n "${DLSYS_RECORD_DIR:-}" ]]; then
  echo
  echo "== every lesson's default run on --backend cuda, recorded in $DLSYS_RECORD_DIR"
  mkdir -p "$DLSYS_RECORD_DIR"
  for lesson in $("$app" list | cut -d" " -f1); do
    if "$app" list | grep -q "^$lesson .*CPU only)"; then continue; fi
    start_ms=$(($(date +%s%N) / 1000000))
    if timeout 300 "$app" run "$lesson" --backend cuda --json "$DLSYS_RECORD_DIR/$lesson.json" \
      >"$out/run-$lesson.txt" 2>&1; then
      printf '%-10s recorded in %6d ms\n' "$lesson" $(($(date +%s%N) / 1000000 - start_ms))
    else
      printf '%-10s FAILED: %s\n' "$lesson" "$(tail -n 1 "$out/run-$lesson.txt")"
      rm -f "$DLSYS_RECORD_DIR/$lesson.json"
      failed=1
    fi
  done
fi
exit $failed
