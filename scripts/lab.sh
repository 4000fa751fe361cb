#!/usr/bin/env bash
# README command 1: install what is missing, build in Release, open the app.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
bin=${DLSYS_BUILD_DIR:-$root/build}/app/dlsys-lab
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  echo "No display here (DISPLAY is unset), so the window cannot open. The same lessons work headless:"
  echo "  $bin list                      # the lessons"
  echo "  $bin info                      # backends, devices, measured ceilings"
  echo "  $bin run matmul --json -       # run a lesson, print what it measured"
  echo "  $bin shot matmul --step 2 -o view.png   # render a lesson view to PNG"
  echo "or open the GUI on a virtual display: xvfb-run -a $bin"
  exit 0
fi
exec "$bin" "$@"
