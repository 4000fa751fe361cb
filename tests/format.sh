#!/usr/bin/env bash
# Every C++ and CUDA source is as the repository's own .clang-format lays it out. Pinned to clang-format 14 (Debian
# 12's): other versions break lines differently. Skipped (exit 77) where it is not installed.
set -u
root=${1:?usage: format.sh PROJECT_ROOT}
cd "$root" || exit 1
command -v clang-format-14 >/dev/null || { echo "clang-format-14 is not installed: formatting not checked"; exit 77; }
if [[ -d .git ]]; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
else
  mapfile -t files < <(find app engine kernels lessons tests \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \))
fi
if ! clang-format-14 --dry-run --Werror "${files[@]}"; then
  echo "run: clang-format-14 -i \$(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')"
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
