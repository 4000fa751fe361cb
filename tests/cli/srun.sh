#!/usr/bin/env bash
# Ranks as processes started by Slurm's srun instead of mpirun: `srun -n 2 --mpi=pmix` runs of the allreduce lesson
# (every row #wrong 0, the placement naming srun) and of the ddp lesson (replicas identical). Skipped (77) where no
# Slurm controller answers with an idle node, or srun cannot start a task within 20 s, or the build lacks MPI.
set -u
bin=$1
command -v srun >/dev/null && command -v sinfo >/dev/null || { echo "skipped: Slurm's srun not found"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 (for reading --json) not found"; exit 77; }
if ! timeout 5 sinfo -h -o %a 2>/dev/null | grep -q up; then echo "skipped: no Slurm controller answers"; exit 77; fi
if ! timeout 20 srun -n 1 true >/dev/null 2>&1; then echo "skipped: srun could not start a task within 20 s"; exit 77; fi
probe=$(env -u OMPI_COMM_WORLD_SIZE "$bin" run allreduce --set launcher=mpi --set sizes=4 --set bytes=4 2>&1)
if [[ "$probe" == *"this build has no MPI"* ]]; then echo "skipped: this build has no MPI"; exit 77; fi
plugin=$(srun --mpi=list 2>&1 | grep -o 'pmix' | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
launch() { timeout 180 srun -n 2 ${plugin:+--mpi=$plugin} "$bin" "$@"; }

if out=$(launch run allreduce --backend cpu --set launcher=mpi --quick --json "$tmp/allreduce.json" 2>&1); then
  python3 - "$tmp/allreduce.json" <<'PY' || fail=1
import json, sys
m = json.load(open(sys.argv[1]))["measured"]
bad = [r for r in m["rows"] if r["wrong"] != 0]
if m["world_size"] != 2 or "under srun" not in m["label"] or bad or not m["rows"]:
    print("FAIL: srun allreduce:", m["world_size"], m["label"], bad); sys.exit(1)
print(f"ok:   srun -n 2 run allreduce --set launcher=mpi: {len(m['rows'])} rows, #wrong 0, '{m['label']}'")
PY
else
  echo "FAIL: srun allreduce: ${out:0:800}"; fail=1
fi
if out=$(launch run ddp --backend cpu --set launcher=mpi --quick --json "$tmp/ddp.json" 2>&1); then
  python3 - "$tmp/ddp.json" <<'PY' || fail=1
import json, sys
m = json.load(open(sys.argv[1]))["measured"]
if not m["replicas_identical"] or "under srun" not in m["placement"]:
    print("FAIL: srun ddp:", m["replicas_identical"], m["placement"]); sys.exit(1)
print(f"ok:   srun -n 2 run ddp --set launcher=mpi: replicas identical, '{m['placement']}'")
PY
else
  echo "FAIL: srun ddp: ${out:0:800}"; fail=1
fi
exit $fail
