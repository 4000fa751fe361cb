#!/usr/bin/env bash
# README command 2: install what is missing (with Xvfb for the GUI tests), build in Release, run every test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DLSYS_CMAKE_ARGS="${DLSYS_CMAKE_ARGS:--DDLSYS_WERROR=ON}" "$root/scripts/setup.sh" --with-test-tools
cd "${DLSYS_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j2 "$@"
