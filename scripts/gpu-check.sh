#!/usr/bin/env bash
# What anyone handed a GPU machine runs first: builds with CUDA, runs the CUDA test suite and every lesson with
# --backend cuda at its quick sizes, and prints one table (lesson, errors against the CPU references, wall time,
# verdict), then the allreduce lesson with ranks as processes on the GPUs under mpirun where Open MPI is installed
# (tests/cli/mpi_gpu.sh: the lab's ring over CUDA IPC, and NCCL with a GPU per rank). Exits 1 when anything fails,
# 77 when no GPU answers (nothing to prove here), at once when the driver lists none, before anything is built.
# Usage: scripts/gpu-check.sh            (builds in build-gpu-check/ unless DLSYS_BUILD_DIR says otherwise)
#        DLSYS_APP=path/dlsys-lab DLSYS_CUDA_TESTS=path/dlsys_cuda_tests scripts/gpu-check.sh
#                                        (binaries built elsewhere, on a GPU machine with no build tools)
#                                        (the CUDA code is libdlsys_cuda.so: copy it beside both
#                                        binaries, or point DLSYS_CUDA_PLUGIN at it)
#        DLSYS_CHECK_OUT=dir keeps every lesson's JSON and text report there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Before building anything (twenty minutes on a busy 2-core machine): does this machine have an NVIDIA GPU at all?
# nvidia-smi lists the GPUs the driver sees; without nvidia-smi, the driver's device files stand in for it.
gpu_present() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -q '^GPU '
  else
    compgen -G '/dev/nvidia[0-9]*' >/dev/null
  fi
}
if ! gpu_present; then
  echo "gpu-check: no NVIDIA GPU on this machine (nvidia-smi -L lists none, or no driver is installed); nothing to check (exit 77)"
  exit 77
fi

export DLSYS_BUILD_DIR=${DLSYS_BUILD_DIR:-$root/build-gpu-check}
if [[ -z "${DLSYS_APP:-}" ]]; then
  DLSYS_CMAKE_ARGS="-DDLSYS_WITH_CUDA=ON ${DLSYS_CMAKE_ARGS:-}" "$root/scripts/setup.sh" >/dev/null
fi
app=${DLSYS_APP:-$DLSYS_BUILD_DIR/app/dlsys-lab}
cuda_tests=${DLSYS_CUDA_TESTS:-$DLSYS_BUILD_DIR/tests/dlsys_cuda_tests}

if ! "$app" info | grep -q "^CUDA backend: available"; then
  "$app" info | grep -A1 "^CUDA backend" || true
  echo "gpu-check: no GPU answers on this machine; nothing to check (exit 77)"
  exit 77
fi

failed=0
echo "== CUDA test suite"
if ! "$cuda_tests"; then failed=1; fi

echo
echo "== every lesson on --backend cuda, quick sizes"
if [[ -n "${DLSYS_CHECK_OUT:-}" ]]; then
  out=$DLSYS_CHECK_OUT
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
printf '%-10s %-6s %12s %12s %8s  %s\n' lesson exit max_error wrong wall_s verdict
for lesson in $("$app" list | cut -d" " -f1); do
  if "$app" list | grep -q "^$lesson .*CPU only)"; then
    printf '%-10s %-6s %12s %12s %8s  %s\n' "$lesson" - - - - "skipped: this lesson runs on the CPU only"
    continue
  fi
  rc=0
  timeout 300 "$app" run "$lesson" --backend cuda --quick --json "$out/$lesson.json" >"$out/$lesson.txt" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]]; then
    printf '%-10s %-6s %12s %12s %8s  %s\n' "$lesson" "$rc" - - - "FAIL: $(tail -n 1 "$out/$lesson.txt")"
    failed=1
    continue
  fi
  # The largest value whose key holds max_rel_err or max_abs_err, and every "wrong" flag that is set.
  python3 - "$lesson" "$out/$lesson.json" <<'PY' || failed=1
import json, sys
lesson, path = sys.argv[1], sys.argv[2]
result = json.load(open(path))
errors, wrong = [], []
def walk(value, key=""):
    if isinstance(value, dict):
        for k, v in value.items(): walk(v, k)
    elif isinstance(value, list):
        for v in value: walk(v, key)
    elif "max_rel_err" in key or "max_abs_err" in key:
        if isinstance(value, (int, float)): errors.append(value)
    elif key == "wrong" or key.endswith("_wrong"):
        if value not in (0, False): wrong.append(key)
walk(result.get("measured", {}))
backend = result.get("backend", {})
# A lesson may keep part of its work on the CPU on purpose; it says so in a note, and that is not a failure.
on_cpu_by_design = [n for n in backend.get("notes", []) if "runs on the CPU" in n]
ok = (backend.get("kind") == "cuda" or bool(on_cpu_by_design)) and not wrong
worst = f"{max(errors):.3g}" if errors else "-"
print(f"{lesson:<10} {0:<6} {worst:>12} {len(wrong):>12} {result['backend'].get('wall_s', 0):8.2f}  "
      + ("pass" + (f" ({on_cpu_by_design[0]})" if backend.get("kind") != "cuda" else "") if ok
         else "FAIL: " + (", ".join(wrong) or "ran on " + backend.get("kind", "?"))))
sys.exit(0 if ok else 1)
PY
done

echo
echo "== ranks as processes on the GPUs (mpirun)"
rc=0
bash "$root/tests/cli/mpi_gpu.sh" "$app" || rc=$?
if [[ $rc -ne 0 && $rc -ne 77 ]]; then failed=1; fi
exit $failed
