#!/usr/bin/env bash
# Shared set-up for the README's two commands: install missing Debian packages, configure, build in Release.
# Usage: scripts/setup.sh [--with-test-tools]   (sourced by lab.sh and test.sh; safe to run on its own)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DLSYS_BUILD_DIR:-$root/build}

packages=(cmake ninja-build pkg-config g++ libimgui-dev libglfw3-dev libstb-dev libgl-dev libegl-dev libgl1-mesa-dri
          libegl-mesa0 libfreetype-dev doctest-dev nlohmann-json3-dev libcli11-dev libfmt-dev libmuparser-dev libopenblas-dev
          fonts-dejavu-core openmpi-bin libopenmpi-dev)
if [[ "${1:-}" == "--with-test-tools" ]]; then packages+=(xvfb xauth xdotool python3 clang-format-14); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  install_line="apt-get install -y --no-install-recommends ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then sudo_cmd=""
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo_cmd="sudo"
  else
    echo "dlsys-lab needs these Debian packages: ${missing[*]}"
    echo "Install them as root, then run this command again:"
    echo "  apt-get update && $install_line"
    exit 1
  fi
  echo "Installing missing packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd $install_line
fi

source "$root/scripts/compiler_cache.sh" "$root"

# Configure once; later runs only re-apply options they were given (a quick no-op when nothing changed).
if [[ ! -f "$build_dir/build.ninja" ]]; then
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" ${DLSYS_CMAKE_ARGS:-}
elif [[ -n "${DLSYS_CMAKE_ARGS:-}" ]]; then
  cmake -S "$root" -B "$build_dir" ${DLSYS_CMAKE_ARGS} >/dev/null
fi
cmake --build "$build_dir"
