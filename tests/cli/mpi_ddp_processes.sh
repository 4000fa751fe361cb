#!/usr/bin/env bash
# The ddp lesson with ranks as processes, under mpirun: 2 and 3 ranks of `run ddp --quick --set launcher=mpi` with
# --json, each with every replica equal to rank 0's, rank 0's weights within the lesson's tolerance of single-rank
# training, and rank 0's counted bytes equal to the ring's closed form; the recording opens with shot --open-run; and
# the refusals: no launcher, one rank, ranks given different parameters, mode=dataparallel, 16-bit wires. Skipped
# (77) without mpirun or without MPI in the build. Each run is bounded by `timeout`: a hang fails.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.sh" "$1" ddp --quick

check_json() {  # check_json FILE WORLD
  python3 - "$@" <<'PY'
import json, sys
path, world = sys.argv[1], int(sys.argv[2])
run = json.load(open(path))
m, t = run["measured"], run["theory"]
problems = []
if m["launcher"] != "mpi": problems.append(f"launcher {m['launcher']}")
if not m["placement"].startswith("ranks are processes under mpirun on "): problems.append(f"placement {m['placement']!r}")
if m["mpi_thread_level"] not in ("MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"): problems.append(m["mpi_thread_level"])
if not m["replicas_identical"]: problems.append("replicas differ from rank 0's")
if not m["max_rel_err_vs_single"] <= 1e-5: problems.append(f"max rel err {m['max_rel_err_vs_single']}")
# Counted by the ring against the closed form bucket by bucket (2 (N-1)/N x a bucket's bytes when N divides it).
if m["comm_bytes"] != t["bytes_per_rank_per_step"]: problems.append(f"bytes {m['comm_bytes']} != {t['bytes_per_rank_per_step']}")
if not m["comm_bytes_match_theory"]: problems.append("comm_bytes_match_theory false")
if world == 2 and m["comm_bytes"] != t["ring_closed_form_bytes"]: problems.append("2 ranks: not 2 (N-1)/N x gradient")
if run["params"]["n"] not in (world, str(world)): problems.append(f"n {run['params']['n']}")
lanes = run["timeline"][0]["lanes"]
if len(lanes) != 2 * world: problems.append(f"{len(lanes)} timeline lanes, wanted {2 * world}")
ranks = {s["lane"] // 2 for s in run["timeline"][0]["spans"]}
if ranks != set(range(world)): problems.append(f"spans from ranks {sorted(ranks)}")
if not 0 <= m["overlap_fraction"] <= 1: problems.append(f"overlap {m['overlap_fraction']}")
if problems:
    print("\n".join(problems)); sys.exit(1)
print(f"overlap {m['overlap_fraction']:.2f}, step {m['step_us']:.0f} us, bytes {m['comm_bytes']}, err {m['max_rel_err_vs_single']:.2g}")
PY
}
run_ok() {  # run_ok RANKS extra-sets...
  local ranks=$1; shift
  local out
  out=$(mpi -np "$ranks" "$bin" run ddp --quick --set launcher=mpi "$@" --json "$tmp/run.json" 2>&1)
  local got=$?
  if [[ $got -ne 0 ]]; then echo "FAIL: -np $ranks -> exit $got: ${out:0:600}"; fail=1; return; fi
  local problems
  if ! problems=$(check_json "$tmp/run.json" "$ranks"); then echo "FAIL: -np $ranks: $problems"; fail=1; return; fi
  if [[ $(grep -c "^The chosen run (ranks are processes" <<<"$out") -ne 1 ]]; then
    echo "FAIL: -np $ranks: wanted exactly one report (rank 0 only): ${out:0:600}"; fail=1; return
  fi
  echo "ok:   mpirun -np $ranks run ddp --quick --set launcher=mpi: $problems"
}
run_ok 2
buckets_step=$(grep '^## Step ' "$(dirname "$0")/../../assets/lessons/ddp.md" | grep -n 'Step buckets:' | cut -d: -f1)
shot_err=$("$bin" shot --open-run "$tmp/run.json" --step "${buckets_step:-4}" -o "$tmp/ddp.png" 2>&1 >/dev/null)
case $? in
  0) echo "ok:   shot --open-run of the mpirun recording draws its buckets step" ;;
  *) if [[ "$shot_err" == *"this build has no GUI"* ]]; then echo "skip: shot (no GUI in this build)"
     else echo "FAIL: shot --open-run of the mpirun recording: $shot_err"; fail=1; fi ;;
esac
run_ok 3 --set batch=48

expect 2 "needs an MPI launcher" env -u OMPI_COMM_WORLD_SIZE "$bin" run ddp --quick --set launcher=mpi
expect 2 "needs at least 2 ranks" mpi -np 1 "$bin" run ddp --quick --set launcher=mpi
expect 2 "parameter 'mode': value 'dataparallel' is not allowed with launcher=mpi" \
  mpi -np 2 "$bin" run ddp --quick --set launcher=mpi --set mode=dataparallel
expect 2 "parameter 'grad_dtype': value 'bf16' is not allowed with launcher=mpi" \
  mpi -np 2 "$bin" run ddp --quick --set launcher=mpi --set grad_dtype=bf16
cat > "$tmp/rank1_differs.sh" <<'SH'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$@" --set "$RANK1_SET"; fi
exec "$@"
SH
chmod +x "$tmp/rank1_differs.sh"
expect 2 "rank 1 of 2: parameter 'bucket' differs between ranks" \
  mpi -np 2 -x RANK1_SET=bucket=64KiB "$tmp/rank1_differs.sh" "$bin" run ddp --quick --set launcher=mpi
exit $fail
