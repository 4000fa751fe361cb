#!/usr/bin/env bash
# The allreduce lesson with ranks as processes, under mpirun: the CPU path's rows (the lab's ring and MPI's own
# collectives) all with #wrong 0, its step-by-step record equal to the threads' ring's, at sizes whose element counts do not divide by N, for 2 and 3 ranks and every op;
# and the refusals: no launcher, one rank, n other than the world size, ranks given different parameters, bad input
# on one rank only. Skipped (77) without mpirun or without MPI in the build. Each run is bounded by `timeout`: a hang
# fails.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.sh" "$1" allreduce --set sizes=4 --set bytes=4

# Counts 1, 3, 1000003 and 250 elements: none divisible by 2 or 3 except by luck of one rank count.
small=(--set "sizes=4,12,1000,4000012" --set bytes=1000 --set repeats=1)
check_json() {  # check_json FILE WORLD OP
  python3 - "$@" <<'PY'
import json, sys
path, world, op = sys.argv[1], int(sys.argv[2]), sys.argv[3]
m = json.load(open(path))["measured"]
problems = []
if m["launcher"] != "mpi" or m["world_size"] != world: problems.append(f"launcher/world_size {m['launcher']}/{m['world_size']}")
for key in ("hosts", "mpi_library", "lab_ring_fraction_of_mpi_busbw", "label"):
    if key not in m: problems.append("missing key " + key)
rows = m["rows"]
steps_per_phase = world - 1
want_steps = 1 + (2 if op == "allreduce" else 1) * steps_per_phase
if not m.get("record_matches_threads") or m.get("record_steps") != want_steps:
    problems.append(f"step record: {m.get('record_steps')} rows (wanted {want_steps}), matches threads: {m.get('record_matches_threads')}")
for row in rows:
    if row["wrong"] != 0: problems.append(f"{row['collective']} / {row['implementation']} at {row['bytes']} B: {row['wrong']} wrong")
    if not row["busbw_gbps"] > 0 and row["bytes"] >= 4 * world: problems.append(f"no busbw in {row}")
impls = {(r["collective"], r["implementation"].split(" ")[0]) for r in rows}
for want in [(op, "lab"), ("allreduce", "MPI_Allreduce")]:
    if want not in impls: problems.append(f"no row {want}")
if not any(c == "reduce_scatter" and i.startswith("MPI_Reduce_scatter") for c, i in impls): problems.append("no MPI_Reduce_scatter row")
if not any(c == "all_gather" and i.startswith("MPI_Allgather") for c, i in impls): problems.append("no MPI_Allgather row")
if len(rows) != 4 * 4: problems.append(f"{len(rows)} rows, wanted 16 (4 sizes x 4 implementations)")
if problems:
    print("\n".join(problems)); sys.exit(1)
PY
}
run_ok() {  # run_ok RANKS OP
  local ranks=$1 op=$2
  local out
  out=$(mpi -np "$ranks" "$bin" run allreduce --set launcher=mpi --set "op=$op" "${small[@]}" --json "$tmp/run.json" 2>&1)
  local got=$?
  if [[ $got -ne 0 ]]; then echo "FAIL: -np $ranks op=$op -> exit $got: ${out:0:600}"; fail=1; return; fi
  if ! problems=$(check_json "$tmp/run.json" "$ranks" "$op"); then
    echo "FAIL: -np $ranks op=$op: $problems"; fail=1; return
  fi
  # Rank 0 alone reports: one table header, one benchmark line.
  if [[ $(grep -c "lab's ring over MPI point-to-point reaches" <<<"$out") -ne 1 ]]; then
    echo "FAIL: -np $ranks op=$op: wanted exactly one benchmark line (rank 0 only): ${out:0:600}"; fail=1; return
  fi
  echo "ok:   mpirun -np $ranks ... op=$op: every row #wrong 0, MPI peers present"
}
run_ok 2 allreduce
# The recorded run opens in the window's renderer (the measured step draws the processes' rows).
measured_step=$(grep -n '^## Step ' "$(dirname "$0")/../../assets/lessons/allreduce.md" | grep -n 'Step measured:' | cut -d: -f1)
shot_err=$("$bin" shot --open-run "$tmp/run.json" --step "${measured_step:-6}" -o "$tmp/processes.png" 2>&1 >/dev/null)
case $? in
  0) echo "ok:   shot --open-run of the mpirun recording draws its measured step" ;;
  *) if [[ "$shot_err" == *"this build has no GUI"* ]]; then echo "skip: shot (no GUI in this build)"
     else echo "FAIL: shot --open-run of the mpirun recording: $shot_err"; fail=1; fi ;;
esac
run_ok 3 allreduce
run_ok 3 reduce_scatter
run_ok 2 all_gather

tiny=(--set sizes=4KiB --set bytes=4KiB --set repeats=1)
expect 2 "needs an MPI launcher" env -u OMPI_COMM_WORLD_SIZE "$bin" run allreduce --set launcher=mpi "${tiny[@]}"
expect 2 "needs at least 2 ranks" mpi -np 1 "$bin" run allreduce --set launcher=mpi "${tiny[@]}"
expect 2 "parameter 'n': value '3' is not allowed with launcher=mpi in a world of 2" \
  mpi -np 2 "$bin" run allreduce --set launcher=mpi --set n=3 "${tiny[@]}"
# Rank 1 alone is given another repeat count, then bad input of its own: every rank ends with 2, rank 0 says why.
cat > "$tmp/rank1_differs.sh" <<'SH'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$@" --set "$RANK1_SET"; fi
exec "$@"
SH
chmod +x "$tmp/rank1_differs.sh"
expect 2 "rank 1 of 2: parameter 'repeats' differs between ranks: rank 0 has '1', rank 1 has '2'" \
  mpi -np 2 -x RANK1_SET=repeats=2 "$tmp/rank1_differs.sh" "$bin" run allreduce --set launcher=mpi "${tiny[@]}"
# A rank given launcher=threads beside launcher=mpi ranks joins them to say so (it would run a whole threaded run
# alone while they wait for it); ranks all given threads, or a lesson of one process, would each run it whole.
expect 2 "rank 1 of 2: parameter 'launcher' differs between ranks: rank 0 has 'mpi', rank 1 has 'threads'" \
  mpi -np 2 -x RANK1_SET=launcher=threads "$tmp/rank1_differs.sh" "$bin" run allreduce --set launcher=mpi "${tiny[@]}"
expect 2 "parameter 'launcher': value 'threads' is not allowed when this process is one of 2" \
  mpi -np 2 "$bin" run allreduce "${tiny[@]}"
expect 2 "lesson 'matmul' runs in one process" mpi -np 2 "$bin" run matmul --quick
# Two lessons under one mpirun: said as such, not as the first parameter in which they differ.
cat > "$tmp/rank1_other_lesson.sh" <<'SH'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$1" run ddp --quick --set launcher=mpi; fi
exec "$1" run allreduce --set launcher=mpi --set sizes=4KiB --set bytes=4KiB --set repeats=1
SH
chmod +x "$tmp/rank1_other_lesson.sh"
expect 2 "the lesson differs between ranks: rank 0 runs 'allreduce', rank 1 runs 'ddp'" \
  mpi -np 2 "$tmp/rank1_other_lesson.sh" "$bin"
expect 2 "rank 1 of 2: parameter 'bytes': value '6' is not allowed" \
  mpi -np 2 -x RANK1_SET=bytes=6 "$tmp/rank1_differs.sh" "$bin" run allreduce --set launcher=mpi "${tiny[@]}"
expect 2 "parameter 'algo': value 'naive' is not allowed with launcher=mpi on cpu" \
  mpi -np 2 "$bin" run allreduce --set launcher=mpi --set algo=naive "${tiny[@]}"
exit $fail
