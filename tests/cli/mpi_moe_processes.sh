#!/usr/bin/env bash
# The moe lesson with ranks as processes, under mpirun: 2 and 4 ranks of `run moe --quick --set launcher=mpi` with
# --json, each with its output equal to the single-rank reference (wrong 0), the dispatch's bytes on the links equal to
# the routing's, the placement sentence in the notes, a timeline lane pair per rank, and the routing (wanted, kept,
# dropped, balance loss) and the dispatch's bytes per pair of ranks equal to those of a threads run with as many ranks
# and the same seeds; and the refusals: ranks other than the world size, experts that the processes do not divide.
# Every run names --backend cpu, as launcher=mpi is refused on a GPU (where "auto" would pick one).
# This is the tree's first test of RankGroup::all_to_all over MPI processes (MPI_Alltoallv carries the counts, the
# dispatch and the combine). Skipped (77) without mpirun or without MPI in the build. Each run is bounded by
# `timeout`: a hang fails.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.sh" "$1" moe --quick --backend cpu

check_json() {  # check_json PROCESSES_JSON THREADS_JSON WORLD
  python3 - "$@" <<'PY'
import json, sys
path, threads_path, world = sys.argv[1], sys.argv[2], int(sys.argv[3])
run, threads = json.load(open(path)), json.load(open(threads_path))
m, mt = run["measured"], threads["measured"]
problems = []
if run["params"].get("launcher") != "mpi": problems.append(f"launcher {run['params'].get('launcher')}")
if run["params"]["ranks"] not in (world, str(world)): problems.append(f"ranks {run['params']['ranks']}")
if m["wrong"] != 0: problems.append(f"wrong {m['wrong']}, max abs err {m['max_abs_err']}")
if m["bytes_match_routing"] != 1: problems.append("dispatch bytes on the links differ from the routing's")
if m["ranks"] != world: problems.append(f"measured ranks {m['ranks']}")
notes = run["backend"]["notes"]
if not any(n.startswith("ranks are processes under mpirun on ") for n in notes): problems.append(f"notes {notes}")
for key in ("wanted", "kept", "dropped", "dropped_share", "balance_loss", "dispatch_bytes", "wanted_untrained",
            "balance_loss_untrained", "balance_training",
            "dispatch_bytes_sent_per_rank", "dispatch_bytes_routed_per_rank"):
    if m[key] != mt[key]: problems.append(f"{key}: processes {m[key]}, threads {mt[key]}")
if run["timeline"]:
    lanes = run["timeline"][0]["lanes"]
    if len(lanes) != 2 * world: problems.append(f"{len(lanes)} timeline lanes, wanted {2 * world}")
    ranks = {s["lane"] // 2 for s in run["timeline"][1]["spans"]}
    if ranks != set(range(world)): problems.append(f"overlap spans from ranks {sorted(ranks)}")
elif not any("not run" in n for n in notes): problems.append("no timelines and no note saying why")
if problems:
    print("\n".join(problems)); sys.exit(1)
print(f"dropped {m['dropped']}, dispatch {m['dispatch_bytes_sent_per_rank']:.0f} B a rank, "
      f"max abs err {m['max_abs_err']:.2g}, {len(run['timeline'])} timelines")
PY
}
run_ok() {  # run_ok RANKS extra-sets...
  local ranks=$1; shift
  local out
  if ! out=$("$bin" run moe --quick --backend cpu --set "ranks=$ranks" "$@" --json "$tmp/threads.json" 2>&1); then
    echo "FAIL: threads run with ranks=$ranks: ${out:0:600}"; fail=1; return
  fi
  out=$(mpi -np "$ranks" "$bin" run moe --quick --backend cpu --set launcher=mpi "$@" --json "$tmp/run.json" 2>&1)
  local got=$?
  if [[ $got -ne 0 ]]; then echo "FAIL: -np $ranks -> exit $got: ${out:0:600}"; fail=1; return; fi
  local problems
  if ! problems=$(check_json "$tmp/run.json" "$tmp/threads.json" "$ranks"); then
    echo "FAIL: -np $ranks $*: $problems"; fail=1; return
  fi
  if [[ $(grep -c "^Measured ($ranks rank processes" <<<"$out") -ne 1 ]]; then
    echo "FAIL: -np $ranks: wanted exactly one report (rank 0 only): ${out:0:600}"; fail=1; return
  fi
  echo "ok:   mpirun -np $ranks run moe --quick --backend cpu --set launcher=mpi $*: $problems"
}
run_ok 2
run_ok 4
run_ok 2 --set aux_loss=on --set experts=6 --set top_k=3

expect 2 "parameter 'ranks': value '4' is not allowed with launcher=mpi in a world of 2 processes" \
  mpi -np 2 "$bin" run moe --quick --backend cpu --set launcher=mpi --set ranks=4
expect 2 "parameter 'experts': value '6' does not divide among the 4 processes" \
  mpi -np 4 "$bin" run moe --quick --backend cpu --set launcher=mpi --set experts=6
expect 2 "needs at least 2 ranks" mpi -np 1 "$bin" run moe --quick --backend cpu --set launcher=mpi
exit $fail
