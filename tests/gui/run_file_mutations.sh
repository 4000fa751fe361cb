#!/usr/bin/env bash
# Recorded runs as a damaged or hostile file holds them: a quick run of every lesson is recorded, then copies with one
# leaf changed (-1, 0, 1e308, -1e308, null, a huge index; an array emptied or cut to one element) are drawn with
# `shot --open-run`, every step. Each must end in exit 0 (drawn) or 2 (refused, naming the key), never in a crash, an
# abort or a hang. First the cases that once crashed the views, then leaves sampled by mutate_run_file.py.
#   run_file_mutations.sh DLSYS_LAB OUT_DIR [SAMPLES_PER_LESSON] [SEED]
set -u
bin=$1 out=$2 samples=${3:-3} seed=${4:-1}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
source "$here/quick_run.sh"
fail=0
drawn=0 refused=0

# draw FILE STEPS WHAT: every step of FILE; a file refused at step 1 is refused at every step (the file is read first).
draw() {
  local file=$1 steps=$2 what=$3 step got
  for ((step = 1; step <= steps; step++)); do
    timeout 60 "$bin" shot --open-run "$file" --step "$step" --size 800x450 -o "$out/mutated.png" \
      >/dev/null 2>"$out/stderr.txt"
    got=$?
    if [[ $got -eq 2 ]]; then
      if ! grep -q "run file '$file'" "$out/stderr.txt"; then
        echo "FAIL: $what: refused without naming the file: $(head -c 300 "$out/stderr.txt")"; fail=1
      fi
      refused=$((refused + 1)); return
    fi
    if [[ $got -ne 0 ]]; then
      echo "FAIL: $what: step $step -> exit $got (0 or 2 wanted): $(head -c 300 "$out/stderr.txt")"; fail=1; return
    fi
  done
  drawn=$((drawn + 1))
}

# edit LESSON NAME PYTHON-STATEMENT-ON-d: a copy of LESSON's run with one change.
edit() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $3; json.dump(d, open(sys.argv[2], 'w'))" \
    "$out/$1.json" "$out/$1-$2.json"
}

steps_of() { "$bin" list | awk -v lesson="$1" '$1 == lesson' | sed -E 's/.*\(([0-9]+) steps.*/\1/'; }

lessons=$("$bin" list | cut -d' ' -f1)
for lesson in $lessons; do
  if ! quick_run "$bin" "$lesson" "$out/$lesson.json" 2>"$out/stderr.txt"; then
    echo "FAIL: could not record a quick run of $lesson: $(head -c 300 "$out/stderr.txt")"; fail=1
  fi
done

# Each of these crashed a view, drew heap memory, aborted in ImGui or grew without bound before the reader checked
# them; every one must now be refused.
expect_refused() {  # expect_refused LESSON NAME PYTHON-STATEMENT "substring of the message"
  local lesson=$1 name=$2 change=$3 text=$4
  [[ -f "$out/$lesson.json" ]] || return
  edit "$lesson" "$name" "$change" || { echo "FAIL: cannot edit $lesson's run ($name)"; fail=1; return; }
  local err got
  err=$(timeout 60 "$bin" shot --open-run "$out/$lesson-$name.json" --size 800x450 -o "$out/mutated.png" 2>&1 >/dev/null)
  got=$?
  if [[ $got -ne 2 || "$err" != *"$text"* ]]; then
    echo "FAIL: $lesson $name -> exit $got, stderr: ${err:0:300} (wanted exit 2 and '$text')"; fail=1
  else
    echo "ok:   $lesson $name refused"
  fi
}
expect_refused allreduce no-algorithms "d['measured']['comparison']['algorithms'] = []" \
  "measured.comparison.algorithms: is empty"
expect_refused roofline ridge-index "d['measured']['sweep_nearest_ridge'] = 100000" \
  "measured.sweep_nearest_ridge: 100000 is not an index into sweep_points"
expect_refused quant no-sparse-sample "d['measured']['sparse_sample'] = []" "measured.sparse_sample: has 0 elements"
expect_refused quant sparse-rows "d['measured']['sparse_sample_rows'] = 1000" "measured.sparse_sample: has"
expect_refused serving span-start-null "d['timeline'][0]['spans'][0]['start'] = None" \
  "timeline[0].spans[0].start: expected a finite number, not null"
expect_refused serving span-start-far "d['timeline'][0]['spans'][0]['start'] = -1e308" \
  "timeline[0].spans[0].start: is negative"
expect_refused ddp params-edited "d['params']['n'] = '64'" "does not follow from the file's params"
expect_refused matmul backend-kind "d['backend']['kind'] = 'tpu'" "backend.kind: 'tpu' is not a backend"

# Sampled leaves of every lesson's run, every step drawn.
for lesson in $lessons; do
  [[ -f "$out/$lesson.json" ]] || continue
  steps=$(steps_of "$lesson")
  mkdir -p "$out/$lesson-mutants"
  while IFS=$'\t' read -r file path change; do
    draw "$file" "$steps" "$lesson: $path $change"
  done < <(python3 "$here/mutate_run_file.py" "$out/$lesson.json" "$out/$lesson-mutants" "$samples" "$seed")
done
echo "mutated run files: $drawn drawn, $refused refused"
exit $fail
