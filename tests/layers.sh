#!/usr/bin/env bash
# The house's arrows point one way (DESIGN.md): app -> lessons -> kernels -> engine, and inside app the GUI may use
# the CLI and the exporters, never the reverse. CMake links the libraries that way; this checks the includes too, so
# a header-only shortcut cannot bend an arrow unnoticed.
set -u
root=${1:?usage: layers.sh PROJECT_ROOT}
cd "$root" || exit 1
status=0

forbid() {  # forbid FOLDER PATTERN WHY
  local hits
  hits=$(grep -rnE "#include \"($2)" "$1" --include='*.cpp' --include='*.h' --include='*.cu' --include='*.cuh' || true)
  if [[ -n $hits ]]; then
    echo "$1 must not include $2 ($3):"
    echo "$hits"
    status=1
  fi
}

forbid engine 'kernels/|lessons/|app/' 'the engine is the bottom layer'
forbid kernels 'lessons/|app/' 'kernels sit below lessons'
forbid lessons 'app/' 'lessons know nothing of the app'
forbid app/export 'app/cli/|app/gui/|app/views/' 'the exporters are shared by the CLI and the GUI'
forbid app/cli 'app/gui/|app/views/' 'the CLI library does not link the GUI'
# Lessons choose CPU or CUDA through the kernels' dispatch, never with the preprocessor.
hits=$(grep -rn 'DLSYS_HAVE_CUDA' lessons || true)
if [[ -n $hits ]]; then
  echo "lessons must not test DLSYS_HAVE_CUDA (kernels/<op>/dispatch.cpp makes that choice):"
  echo "$hits"
  status=1
fi
[[ $status == 0 ]] && echo "layers point one way"
exit $status
