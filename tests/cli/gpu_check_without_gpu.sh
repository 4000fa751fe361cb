#!/usr/bin/env bash
# scripts/gpu-check.sh on a machine with no GPU: exit 77 at once, before it configures or builds anything.
# Usage: tests/cli/gpu_check_without_gpu.sh REPO_ROOT
set -u
root=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {  # check DESCRIPTION PATH-PREFIX: gpu-check.sh must exit 77 within 20 s and leave its build folder unmade
  local description=$1 path_prefix=$2 out got
  out=$(PATH="$path_prefix$PATH" DLSYS_BUILD_DIR="$tmp/build" timeout 20 bash "$root/scripts/gpu-check.sh" 2>&1); got=$?
  if [[ $got -ne 77 || -e "$tmp/build" || "$out" != *"nothing to check"* ]]; then
    echo "FAIL: gpu-check.sh $description -> exit $got, build folder $([[ -e $tmp/build ]] && echo made || echo absent): ${out:0:300}"
    fail=1
  else
    echo "ok:   gpu-check.sh $description -> exit 77 before building"
  fi
  rm -rf "$tmp/build"
}

# A driver that sees no GPU: nvidia-smi -L says so and exits non-zero.
mkdir -p "$tmp/no-gpu"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' > "$tmp/no-gpu/nvidia-smi"
chmod +x "$tmp/no-gpu/nvidia-smi"
check "where nvidia-smi -L lists no GPU" "$tmp/no-gpu:"
# No driver at all: no nvidia-smi and no device files (only where this machine has none).
if ! command -v nvidia-smi >/dev/null 2>&1 && ! compgen -G '/dev/nvidia[0-9]*' >/dev/null; then
  check "without a driver" ""
fi
exit $fail
