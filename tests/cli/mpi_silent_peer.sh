#!/usr/bin/env bash
# A silent peer ends a run over processes within the bound instead of leaving the other ranks waiting forever: a
# rank stopped with SIGSTOP once its heartbeats flow is named by rank 0 (exit 3); a job whose other program is not
# the lab (it never starts MPI, or starts it and leaves) ends in the MPI start-up guard (exit 3); a bound outside
# 0..86400 s is refused (exit 2). Skipped (77) without mpirun or without MPI in the build.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.sh" "$1" allreduce --set sizes=4 --set bytes=4
long=(run allreduce --set launcher=mpi --set sizes=4000012 --set bytes=4000012 --set repeats=100 --peer-silence-s 3)

# Rank 1 of two, stopped once its heartbeat thread is running (MPI started on every rank).
mpi -np 2 "$bin" "${long[@]}" >"$tmp/stopped.txt" 2>&1 &
job=$!
victim=""
for _ in $(seq 1 400); do
  for pid in $(pgrep -f -- "--peer-silence-s 3"); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" || continue
    grep -qx dlsys-heartbeat /proc/"$pid"/task/*/comm 2>/dev/null && victim=$pid
  done
  [[ -n $victim ]] && break
  sleep 0.05
done
if [[ -z $victim ]]; then
  echo "FAIL: rank 1's heartbeat thread never showed"; fail=1
else
  kill -STOP "$victim"
fi
wait "$job"; code=$?
[[ -n $victim ]] && kill -KILL "$victim" 2>/dev/null
if [[ $code -ne 3 ]] || ! grep -q "heard nothing from rank 1 for 3 s" "$tmp/stopped.txt"; then
  echo "FAIL: a stopped rank 1 -> exit $code: $(head -c 600 "$tmp/stopped.txt")"; fail=1
else
  echo "ok:   a stopped rank 1 is named and the job ends with exit 3"
fi

# The other program of the job never starts MPI (sleep), or starts it and leaves at once (true is not MPI at all; a
# program that is, but does not take part, ends the same way through the same guard).
expect 3 "MPI did not start on every rank within 3 s" mpi -np 1 "$bin" "${long[@]}" : -np 1 sleep 30
expect 2 "--peer-silence-s: value '-1' is not allowed (out of range); allowed: a number from 0 to 86400" mpi -np 1 "$bin" "${long[@]:0:6}" --peer-silence-s -1
exit $fail
