#!/usr/bin/env bash
# Ranks as processes on GPUs, under mpirun with --backend cuda: the lab's ring over CUDA IPC for 2 and 3 ranks (on one
# GPU its ranks share it, labelled emulated), beside NCCL's all-reduce when every rank has a GPU of its own; element
# counts that do not divide by N; every row #wrong 0. NCCL alone (algo=library): runs with a GPU per rank, else
# refused with exit 2. The ddp lesson's processes on the GPUs (2 and 3 ranks): replicas equal to rank 0's, weights
# within rounding of single-rank training, the ring's bytes equal to the closed form. Skipped (77) without mpirun,
# MPI in the build or a CUDA device.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.sh" "$1" allreduce --set sizes=4 --set bytes=4
devices=$("$bin" info | sed -n 's/^CUDA backend: available (\([0-9]*\) device.*/\1/p')
if [[ -z "$devices" ]]; then echo "skipped: no CUDA device answers here"; exit 77; fi
mpi() { timeout 300 mpirun --oversubscribe "$@"; }

gpu_run=(run allreduce --backend cuda --set launcher=mpi --set "sizes=4,12,4000012" --set bytes=1MiB --set repeats=2)
check_rows() {  # check_rows FILE WORLD WANT_LAB WANT_NCCL
  python3 - "$@" <<'PY'
import json, sys
path, world, want_lab, want_nccl = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4] == "1"
m = json.load(open(path))["measured"]
rows = m["rows"]
lab = [r for r in rows if r["implementation"].startswith("lab ring")]
nccl = [r for r in rows if r["implementation"].startswith("NCCL")]
problems = [f"{r['implementation']} at {r['bytes']} B: {r['wrong']} wrong" for r in rows if r["wrong"] != 0]
if m["backend"] != "cuda" or m["world_size"] != world: problems.append(f"backend/world {m['backend']}/{m['world_size']}")
# Between two GPUs without peer access the lab's ring steps aside, saying why.
if want_lab and not lab and any(c.startswith("the lab's ring did not run") for c in m["caveats"]): want_lab = False
if len(lab) != (4 if want_lab else 0): problems.append(f"{len(lab)} lab ring rows")
if len(nccl) != (4 if want_nccl else 0): problems.append(f"{len(nccl)} NCCL rows")
if want_lab and want_nccl and m.get("lab_ring_fraction_of_mpi_busbw") is None: problems.append("no fraction of NCCL's busbw")
if want_lab and not want_nccl and not any(c.startswith("emulated") for c in m["caveats"]): problems.append("not labelled emulated")
if problems:
    print("; ".join(problems)); sys.exit(1)
for r in rows: print(f"      {r['implementation']:40} {r['bytes']:>10.0f} B {r['busbw_gbps']:9.3f} GB/s busbw  #wrong {r['wrong']}")
PY
}
own_gpus=0
run_ok() {  # run_ok RANKS ALGO
  local ranks=$1 algo=$2 out got want_lab=0 want_nccl=0
  [[ $devices -ge $ranks ]] && want_nccl=1
  [[ $algo == ring ]] && want_lab=1
  out=$(mpi -np "$ranks" "$bin" "${gpu_run[@]}" --set "algo=$algo" --json "$tmp/run.json" 2>&1)
  got=$?
  if [[ $got -ne 0 ]]; then echo "FAIL: -np $ranks algo=$algo -> exit $got: ${out:0:1000}"; fail=1; return; fi
  if ! report=$(check_rows "$tmp/run.json" "$ranks" "$want_lab" "$want_nccl"); then
    echo "FAIL: -np $ranks algo=$algo: $report"; fail=1; return
  fi
  echo "ok:   mpirun -np $ranks on $devices GPU(s), algo=$algo: every row #wrong 0"
  echo "$report"
}
run_ok 2 ring
run_ok 3 ring
if [[ $devices -ge 2 ]]; then
  run_ok 2 library
else
  expect 2 "needs one GPU per rank" mpi -np 2 "$bin" "${gpu_run[@]}" --set algo=library
fi
check_ddp() {  # check_ddp FILE WORLD
  python3 - "$@" <<'PY'
import json, sys
path, world = sys.argv[1], int(sys.argv[2])
run = json.load(open(path))
m, t = run["measured"], run["theory"]
problems = []
if run["backend"]["kind"] != "cuda" or m["launcher"] != "mpi": problems.append(f"backend {run['backend']['kind']}, launcher {m['launcher']}")
if not m["replicas_identical"]: problems.append("replicas differ from rank 0's")
if not m["max_rel_err_vs_single"] <= 1e-4: problems.append(f"max rel err {m['max_rel_err_vs_single']}")
if m["comm_bytes"] != t["bytes_per_rank_per_step"]: problems.append(f"bytes {m['comm_bytes']} != {t['bytes_per_rank_per_step']}")
lanes = run["timeline"][0]["lanes"]
if len(lanes) != 2 * world: problems.append(f"{len(lanes)} timeline lanes, wanted {2 * world}")
if problems:
    print("; ".join(problems)); sys.exit(1)
print(f"overlap {m['overlap_fraction']:.2f}, step {m['step_us']:.0f} us, bytes {m['comm_bytes']}, err {m['max_rel_err_vs_single']:.2g}")
PY
}
ddp_ok() {  # ddp_ok RANKS extra-sets...
  local ranks=$1 out got report; shift
  out=$(mpi -np "$ranks" "$bin" run ddp --backend cuda --quick --set launcher=mpi "$@" --json "$tmp/ddp.json" 2>&1)
  got=$?
  if [[ $got -ne 0 ]]; then echo "FAIL: ddp -np $ranks -> exit $got: ${out:0:1000}"; fail=1; return; fi
  if ! report=$(check_ddp "$tmp/ddp.json" "$ranks"); then echo "FAIL: ddp -np $ranks: $report"; fail=1; return; fi
  echo "ok:   mpirun -np $ranks run ddp --backend cuda --quick --set launcher=mpi: $report"
}
ddp_ok 2
ddp_ok 3 --set batch=48
exit $fail
