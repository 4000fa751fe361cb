#!/usr/bin/env bash
# The CUDA build opens its CUDA library (libdlsys_cuda.so) only when something asks for CUDA: the program itself
# needs neither the CUDA runtime, cuBLAS nor NCCL, so the CPU lessons run under an address-space limit that mapping
# them would exceed, and a missing library is a reason in `info` and a refused --backend cuda, never a crash.
# Usage: tests/cli/cuda_library_on_demand.sh DLSYS_LAB_BINARY HAVE_CUDA(ON/OFF)
set -u
bin=$1
have_cuda=$2
if [[ "$have_cuda" != "ON" ]]; then
  echo "skip: this build has no CUDA backend, so there is no CUDA library to load late"
  exit 77
fi
fail=0
ok() { echo "ok:   $1"; }
bad() { echo "FAIL: $1"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plugin="$(dirname "$bin")/libdlsys_cuda.so"

# The program's own list of libraries: none of CUDA's.
if ! command -v readelf >/dev/null; then
  bad "readelf is missing (binutils): the program's libraries cannot be checked"
else
  needed=$(readelf -d "$bin" | grep NEEDED)
  if grep -Eq 'libcudart|libcublas|libnccl|libcuda\.' <<<"$needed"; then
    bad "dlsys-lab needs CUDA libraries at start: $(grep -Eo 'lib(cudart|cublas|nccl|cuda)[^]]*' <<<"$needed" | tr '\n' ' ')"
  else
    ok "dlsys-lab needs no CUDA library at start"
  fi
  if [[ -f "$plugin" ]] && readelf -d "$plugin" | grep NEEDED | grep -q libcudart; then
    ok "libdlsys_cuda.so beside it carries the CUDA runtime"
  else
    bad "libdlsys_cuda.so is missing beside $bin, or does not link the CUDA runtime"
  fi
fi

# Under about 700 MB of address space (what mapping cuBLAS alone exceeds), the CPU lessons and info still work.
limited() { (ulimit -v 700000 && env -u DISPLAY -u WAYLAND_DISPLAY "$@"); }
if limited "$bin" run matmul --quick --backend cpu --json "$tmp/matmul.json" >"$tmp/out" 2>&1 && [[ -s "$tmp/matmul.json" ]]; then
  ok "run matmul --quick --backend cpu under ulimit -v 700000"
else
  bad "run matmul --quick --backend cpu under ulimit -v 700000 failed: $(tail -c 400 "$tmp/out")"
fi
if limited "$bin" info >"$tmp/out" 2>&1; then
  ok "info under ulimit -v 700000"
else
  bad "info under ulimit -v 700000 failed: $(tail -c 400 "$tmp/out")"
fi

# A library that is not there: info names the reason, a CUDA run is refused with it (exit 2), nothing crashes.
missing="$tmp/nowhere/libdlsys_cuda.so"
out=$(DLSYS_CUDA_PLUGIN="$missing" env -u DISPLAY -u WAYLAND_DISPLAY "$bin" info 2>&1); got=$?
if [[ $got -eq 0 && "$out" == *"could not be loaded"* ]]; then
  ok "info without the library says it could not be loaded"
else
  bad "info without the library -> exit $got: ${out:0:400}"
fi
out=$(DLSYS_CUDA_PLUGIN="$missing" env -u DISPLAY -u WAYLAND_DISPLAY "$bin" run matmul --quick --backend cuda 2>&1 >/dev/null)
got=$?
if [[ $got -eq 2 && "$out" == *"could not be loaded"* ]]; then
  ok "run --backend cuda without the library is refused with the reason (exit 2)"
else
  bad "run --backend cuda without the library -> exit $got: ${out:0:400}"
fi
# A file that is not a library at all: the same, with the loader's own words.
echo "not a library" >"$tmp/libdlsys_cuda.so"
out=$(DLSYS_CUDA_PLUGIN="$tmp/libdlsys_cuda.so" env -u DISPLAY -u WAYLAND_DISPLAY "$bin" info 2>&1); got=$?
if [[ $got -eq 0 && "$out" == *"could not be loaded"* ]]; then
  ok "info with a broken library file says it could not be loaded"
else
  bad "info with a broken library file -> exit $got: ${out:0:400}"
fi
exit $fail
