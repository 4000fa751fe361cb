# Sourced by the build scripts. Where ccache is installed, building the same sources again (another clone, another
# build folder) is mostly cache hits: paths are hashed relative to the checkout, and the build folder is left out of
# the hash of debug builds. Without ccache the build is the same, only slower.
# Sets `launcher`: the CMake arguments that put ccache in front of the compilers (empty without ccache).
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$1" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
