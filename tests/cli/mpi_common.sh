# Sourced by the mpirun tests: skips (exit 77) without mpirun, without MPI in the build or without python3, lets Open
# MPI run as root and oversubscribe (a 2-core machine runs 3 ranks), makes $tmp (removed on exit) and mpi(), one
# mpirun bounded by `timeout` so that a hang fails, and expect(), which checks a command's exit code and message.
# Usage: source mpi_common.sh BIN LESSON [--set k=v]...
bin=$1
if ! command -v mpirun >/dev/null; then echo "skipped: mpirun not found (install openmpi-bin)"; exit 77; fi
probe=$(env -u OMPI_COMM_WORLD_SIZE "$bin" run "${@:2}" --set launcher=mpi 2>&1)
if [[ "$probe" == *"this build has no MPI"* ]]; then echo "skipped: this build has no MPI"; exit 77; fi
command -v python3 >/dev/null || { echo "skipped: python3 (for reading --json) not found"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mpi() { timeout 60 mpirun --oversubscribe "$@"; }
# expect CODE "substring of the output" command...: the command must exit CODE and say the substring.
expect() {  # expect CODE "substring of the output" command...
  local code=$1 text=$2; shift 2
  local out
  out=$("$@" 2>&1); local got=$?
  if [[ $got -ne $code || "$out" != *"$text"* ]]; then
    echo "FAIL: ${*:1:8} -> exit $got: ${out:0:600} (wanted exit $code and '$text')"; fail=1
  else
    echo "ok:   ${*:1:5} ... -> exit $got"
  fi
}
