#!/usr/bin/env bash
# NCCL across processes: `mpirun -np 2 dlsys-lab run allreduce --backend cuda --set launcher=mpi --set algo=library`,
# one GPU per rank, every row #wrong 0. Skipped (77) without mpirun, MPI in the build, or two CUDA devices (NCCL
# refuses two ranks on one GPU).
set -u
bin=$1
command -v mpirun >/dev/null || { echo "skipped: mpirun not found (install openmpi-bin)"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 (for reading --json) not found"; exit 77; }
probe=$(env -u OMPI_COMM_WORLD_SIZE "$bin" run allreduce --set launcher=mpi --set sizes=4 --set bytes=4 2>&1)
if [[ "$probe" == *"this build has no MPI"* ]]; then echo "skipped: this build has no MPI"; exit 77; fi
devices=$("$bin" info | sed -n 's/^CUDA backend: available (\([0-9]*\) device.*/\1/p')
if [[ -z "$devices" || "$devices" -lt 2 ]]; then
  echo "skipped: NCCL across processes needs 2 CUDA devices, this machine has ${devices:-none}"; exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(timeout 300 mpirun -np 2 "$bin" run allreduce --backend cuda --set launcher=mpi --set algo=library \
  --set "sizes=4,12,4000012" --set bytes=1MiB --set repeats=2 --json "$tmp/run.json" 2>&1)
code=$?
if [[ $code -ne 0 ]]; then echo "FAIL: exit $code: ${out:0:1000}"; exit 1; fi
python3 - "$tmp/run.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["measured"]
rows = m["rows"]
bad = [r for r in rows if r["wrong"] != 0 or not r["implementation"].startswith("NCCL")]
if m["backend"] != "cuda" or len(rows) != 4 or bad:
    print("FAIL:", m["backend"], len(rows), bad); sys.exit(1)
print("ok:   NCCL across 2 processes: 4 sizes, every row #wrong 0")
PY
