#!/usr/bin/env bash
# What anyone handed a GPU machine runs first: builds with CUDA, runs the CUDA test suite and every lesson with
# --backend cuda at its quick sizes, and prints one table (lesson, errors against the CPU references, wall time,
# verdict). Exits 1 when anything fails, 77 when no GPU answers (nothing to prove here).
# Usage: scripts/gpu-check.sh            (builds in build-gpu-check/ unless DLSYS_BUILD_DIR says otherwise)
#        DLSYS_APP=path/dlsys-lab DLSYS_CUDA_TESTS=path/dlsys_cuda_tests scripts/gpu-check.sh
#                                        (binaries built elsewhere, on a GPU machine with no build tools)
#        DLSYS_CHECK_OUT=dir keeps every lesson's JSON and text report there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
  # Every *max_rel_err / *max_abs_err in the measured values (their largest), and every "wrong" flag that is set.
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
    elif key.endswith("max_rel_err") or key.endswith("max_abs_err"):
        if isinstance(value, (int, float)): errors.append(value)
    elif key == "wrong" or key.endswith("_wrong"):
        if value not in (0, False): wrong.append(key)
walk(result.get("measured", {}))
ok = result.get("backend", {}).get("kind") == "cuda" and not wrong
worst = f"{max(errors):.3g}" if errors else "-"
print(f"{lesson:<10} {0:<6} {worst:>12} {len(wrong):>12} {result['backend'].get('wall_s', 0):8.2f}  "
      + ("pass" if ok else "FAIL: " + (", ".join(wrong) or "ran on " + result["backend"].get("kind", "?"))))
sys.exit(0 if ok else 1)
PY
done
exit $failed
