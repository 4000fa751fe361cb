#!/usr/bin/env bash
# What a real machine throws at the binary: FIFOs, devices, full disks, deep or huge JSON, paths in other encodings,
# no address space for threads. Each must end in exit 2 or 3 with a message, never a crash, a hang or a false success.
set -u
bin=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# timeout: a hang is a failure too, reported as exit 124.
expect() {  # expect CODE "substring of stderr" args...
  local code=$1 text=$2; shift 2
  local err
  err=$(env -u DISPLAY -u WAYLAND_DISPLAY timeout 120 "$bin" "$@" 2>&1 >/dev/null); local got=$?
  if [[ $got -ne $code || "$err" != *"$text"* ]]; then
    echo "FAIL: dlsys-lab $* -> exit $got, stderr: ${err:0:400} (wanted exit $code and '$text')"; fail=1
  else
    echo "ok:   dlsys-lab ${*:1:6} -> exit $got"
  fi
}
small_matmul=(--set m=8 --set n=8 --set k=8 --set sizes=8 --set repeats=1)
config='{"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 64, "intermediate_size": 8, "vocab_size": 10}'

# Config and state files that are not small regular JSON files.
mkfifo "$tmp/fifo.json"
expect 2 "is a pipe (FIFO)" run kvcache --set "config=$tmp/fifo.json"
expect 2 "is a device" run kvcache --set config=/dev/zero
expect 2 "is a device" run kvcache --set config=/dev/urandom
expect 2 "is a folder" run kvcache --set "config=$tmp"
truncate -s 17M "$tmp/weights.bin"
expect 2 "at most 16777216 bytes (16 MiB)" run kvcache --set "config=$tmp/weights.bin"
expect 2 "is a pipe (FIFO)" --open "$tmp/fifo.json"
python3 -c "print('{\"num_hidden_layers\": ' + '[' * 100000 + ']' * 100000 + '}')" > "$tmp/deep.json"
expect 2 "nesting deeper than 100 levels" run kvcache --set "config=$tmp/deep.json"
python3 -c "print('{\"lesson\": \"matmul\", \"params\": {\"m\": ' + '[' * 100000 + ']' * 100000 + '}}')" \
  > "$tmp/deep_state.json"
expect 2 "nesting deeper than 100 levels" --open "$tmp/deep_state.json"
echo '{"num_hidden_layers": 1e400}' > "$tmp/huge.json"
expect 2 "too large for a double" run kvcache --set "config=$tmp/huge.json"
echo '{"lesson": "matmul", "step": 1e400}' > "$tmp/huge_state.json"
expect 2 "too large for a double" --open "$tmp/huge_state.json"
echo '{"lesson": "matmul", "step": 4294967297}' > "$tmp/wrap_state.json"
expect 2 "step 4294967297 is out of range" --open "$tmp/wrap_state.json"
echo '{"lesson": "matmul", "params": {"nosuch": "1"}}' > "$tmp/key_state.json"
expect 2 "key \"params\".\"nosuch\"" --open "$tmp/key_state.json"
echo "${config%\}}, \"sliding_window\": 8, \"use_sliding_window\": \"false\"}" > "$tmp/string_bool.json"
expect 2 "'use_sliding_window' must be true or false" run kvcache --set "config=$tmp/string_bool.json"

# The allreduce lesson's crossbar algorithms: all-reduce only, N up to 8 (CPU only: test_allreduce_cli.cpp).
expect 2 "one of: ring, naive, library, recursive_doubling, rabenseifner, direct" run allreduce --set algo=tree
expect 2 "parameter 'n': value '9' is not allowed with algo 'rabenseifner'" run allreduce --set algo=rabenseifner --set n=9
expect 2 "parameter 'op': value 'all_gather' is not allowed with algo 'direct'; allowed: allreduce" run allreduce \
  --set algo=direct --set op=all_gather

# Writes that fail are failures, and several outputs are all or nothing.
expect 3 "cannot write '/dev/full': No space left on device" run matmul "${small_matmul[@]}" --json /dev/full
expect 3 "cannot write '/dev/full': No space left on device" run matmul "${small_matmul[@]}" --csv /dev/full
expect 3 "cannot write '$tmp/no/such/folder.json'" run matmul "${small_matmul[@]}" --json "$tmp/no/such/folder.json"
err=$(timeout 120 "$bin" run matmul "${small_matmul[@]}" --json - 2>&1 >/dev/full); got=$?
if [[ $got -ne 3 || "$err" != *"cannot write to stdout"* ]]; then
  echo "FAIL: run --json - > /dev/full -> exit $got, stderr: $err"; fail=1
else echo "ok:   run --json - > /dev/full -> exit 3"; fi
err=$(timeout 120 "$bin" run matmul "${small_matmul[@]}" 2>&1 >/dev/full); got=$?
if [[ $got -ne 3 ]]; then echo "FAIL: run > /dev/full -> exit $got, stderr: $err"; fail=1
else echo "ok:   run > /dev/full -> exit 3"; fi
expect 3 "none of the requested files was written" export schedules --svg "$tmp/ok.svg" --trace /dev/full
if [[ -e "$tmp/ok.svg" ]]; then echo "FAIL: export left $tmp/ok.svg behind after the trace failed"; fail=1; fi
[[ -c /dev/full ]] || { echo "FAIL: /dev/full is no longer a device"; fail=1; }

# Outputs through symbolic links: the file linked to is replaced whole (not overwritten in place, leaving the tail of
# a longer file), and the link stays a link; a link to a missing file creates that file.
head -c 200000 /dev/zero | tr '\0' x > "$tmp/long_target.json"
ln -s long_target.json "$tmp/link.json"
ln -s "$tmp/made_by_link.json" "$tmp/dangling.json"
if timeout 120 "$bin" run matmul "${small_matmul[@]}" --json "$tmp/link.json" >/dev/null &&
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/long_target.json" 2>/dev/null && [[ -L "$tmp/link.json" ]]; then
  echo "ok:   --json through a link replaces the longer file it points to"
else echo "FAIL: --json through a link left $tmp/long_target.json corrupt or the link replaced"; fail=1; fi
if timeout 120 "$bin" run matmul "${small_matmul[@]}" --json "$tmp/dangling.json" >/dev/null &&
  [[ -L "$tmp/dangling.json" && -s "$tmp/made_by_link.json" ]]; then
  echo "ok:   --json through a link to a missing file creates that file"
else echo "FAIL: --json through a dangling link"; fail=1; fi
if ls "$tmp" | grep -q partial; then echo "FAIL: staged files left behind: $(ls "$tmp")"; fail=1; fi
# The same file named twice would be written twice, the second replacing the first: refused before any work.
expect 2 "are the same file" run matmul "${small_matmul[@]}" --json "$tmp/same.out" --csv "$tmp/same.out"
expect 2 "are the same file" run matmul "${small_matmul[@]}" --json "$tmp/link.json" --csv "$tmp/long_target.json"
expect 2 "are the same file" run matmul "${small_matmul[@]}" --json "$tmp/x.json" --csv "$tmp/../$(basename "$tmp")/x.json"
expect 2 "are the same file" export schedules --svg "$tmp/same.out" --trace "$tmp/same.out"
expect 2 "are the same file" shot matmul "${small_matmul[@]}" --json "$tmp/same.png" -o "$tmp/same.png"
[[ -e "$tmp/same.out" || -e "$tmp/x.json" ]] && { echo "FAIL: a refused command wrote a file"; fail=1; }
# shot's PNG and its run file are one result: a PNG that cannot be written leaves no run file behind.
expect 3 "cannot write '/dev/full'" shot matmul "${small_matmul[@]}" --json "$tmp/shot_run.json" -o /dev/full
if [[ -e "$tmp/shot_run.json" ]]; then echo "FAIL: shot left $tmp/shot_run.json behind after the PNG failed"; fail=1; fi

# A file parameter is checked whenever it is given, even where the other parameters leave it unused.
expect 2 "parameter 'config': cannot open '/nonexistent/config.json'" run zero --quick --set config=/nonexistent/config.json
expect 2 "parameter 'config': cannot open" shot zero --quick --set config=/nonexistent/config.json -o "$tmp/x.png"
expect 2 "parameter 'config': cannot open '/nonexistent/config.json'" run lora --quick --set config=/nonexistent/config.json
expect 2 "is a device" run lora --quick --set config=/dev/zero
printf '{"num_hidden_layers": ' > "$tmp/cut_config.json"
expect 2 "not valid JSON" run zero --quick --set "config=$tmp/cut_config.json"
expect 2 "not valid JSON" run lora --quick --set "config=$tmp/cut_config.json"
expect 2 "parameter 'r': value '65' is above min(d, k) = 64" run lora --quick --set r=65
expect 2 "parameter 'model'" run lora --quick --set model=mixtral-8x7b
expect 2 "parameter 'serve_width': value '8' is not allowed (out of range); allowed: an integer from 16" \
  run lora --quick --set serve_width=8
expect 2 "inference on 16384 tokens through 16384 x 16384" run lora --set serve_width=16384 --set serve_tokens=16384
expect 2 "parameter 'd'" run lora --quick --set d=4096
expect 2 "parameter 'noise'" run lora --quick --set noise=-1
expect 2 "parameter 'lr'" run lora --quick --set lr=nan
expect 2 "parameter 'targets'" run lora --quick --set targets=mlp
printf '{"model_type": "mixtral", "num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 64, "intermediate_size": 8, "vocab_size": 10, "num_local_experts": 4, "num_experts_per_tok": 2}' >"$tmp/moe_config.json"
expect 2 "parameter 'config': moe_config.json is a mixture of experts" run lora --quick --set "config=$tmp/moe_config.json"
expect 2 "more than max_minutes" run lora --set d=512 --set k=512 --set steps=20000 --set max_minutes=0.1
# A recorded run whose config file is not on this machine: its steps cannot be drawn, and shot says so rather than
# drawing the message as the figure.
echo "$config" > "$tmp/zero_config.json"
if timeout 120 "$bin" run zero --quick --set "config=$tmp/zero_config.json" --json "$tmp/zero_run.json" >/dev/null; then
  rm "$tmp/zero_config.json"
  expect 2 "the steps cannot be drawn" shot --open-run "$tmp/zero_run.json" --step 2 -o "$tmp/x.png"
else echo "FAIL: could not record a zero run with a config file"; fail=1; fi
# Files of /proc and /sys look regular but are made up as they are read; /proc/kmsg blocks forever. Refused unread.
for kernel_file in /proc/self/status /sys/kernel/mm/transparent_hugepage/enabled /proc/kmsg; do
  [[ -e "$kernel_file" ]] || continue
  for args in "run kvcache --set config=$kernel_file" "run zero --quick --set config=$kernel_file" \
    "--open $kernel_file" "--open-run $kernel_file" "shot --open-run $kernel_file -o $tmp/x.png"; do
    # shellcheck disable=SC2086  # the arguments are split on purpose
    err=$(env -u DISPLAY -u WAYLAND_DISPLAY timeout 20 "$bin" $args 2>&1 >/dev/null); got=$?
    if [[ $got -ne 2 || "$err" != *"whose files the kernel makes up"* ]]; then
      echo "FAIL: dlsys-lab $args -> exit $got, stderr: ${err:0:300}"; fail=1
    else echo "ok:   dlsys-lab $args -> exit 2"; fi
  done
done

# Output that cannot be written is a failure for every command, the listings and the help included.
for args in list info --help "run --help" "run matmul --help"; do
  # shellcheck disable=SC2086
  timeout 120 "$bin" $args >/dev/full 2>/dev/null; got=$?
  if [[ $got -eq 0 ]]; then echo "FAIL: dlsys-lab $args > /dev/full -> exit 0"; fail=1
  else echo "ok:   dlsys-lab $args > /dev/full -> exit $got"; fi
done

# Numbers and options: one rule, no wrap-around, no silent defaults.
# ddp: impossible splits, empty buckets and sizes that cannot fit are refused before anything is allocated.
expect 2 "parameter 'n': value '0' is not allowed" run ddp --set n=0
expect 2 "parameter 'bucket': value '0' is not allowed" run ddp --set bucket=0
expect 2 "parameter 'accumulate': value '0' is not allowed" run ddp --set accumulate=0
expect 2 "one of: fp32, bf16, fp16" run ddp --set grad_dtype=fp8
expect 2 "one of: ddp, dataparallel" run ddp --set mode=allgather
expect 2 "allowed: n dividing batch / accumulate" run ddp --set n=3 --set batch=64
expect 2 "of host memory is available" run ddp --set layers=512 --set width=16384 --set n=64 --set batch=64 --set bucket=1GiB
expect 2 "at most 8192 buckets" run ddp --set layers=1 --set width=8192 --set bucket=8B --set batch=2
expect 2 "not a number" run matmul --set m=0x10
expect 2 "not a number" run matmul --set "m= 5"
expect 2 "not a number" run matmul --set m=+5
expect 2 "not a number" run matmul --set "m=5 "
expect 2 "--frames" --frames -5 --screenshot "$tmp/x.png"
expect 2 "--step needs --lesson" --step 99
expect 2 "an empty file name is not allowed" run matmul "${small_matmul[@]}" --json ""
expect 2 "value '' is not allowed" shot matmul --scale '' -o "$tmp/x.png"
# Serving: rates, batches and lengths must be positive, the prompt must fit the context, the draft the target.
expect 2 "parameter 'rate': value '0' is not allowed" run serving --set rate=0
expect 2 "parameter 'rate': value '-3' is not allowed" run serving --set rate=-3
expect 2 "not a number" run serving --set rate=inf
expect 2 "parameter 'max_batch': value '0' is not allowed" run serving --set max_batch=0
expect 2 "parameter 'max_output': value '-1' is not allowed" run serving --set max_output=-1
expect 2 "parameter 'requests': value '0' is not allowed" run serving --set requests=0
expect 2 "shorter than the model's context of 512 tokens" run serving --set prompt=512
expect 2 "the draft must be smaller than the target" run serving --set layers=2 --set draft_layers=3
expect 2 "of host memory is available" run serving --set d_model=2048 --set layers=64 --set context=65536
long=$(head -c 10000 /dev/zero | tr '\0' 7)
msg=$("$bin" run matmul --set "m=$long" 2>&1 >/dev/null)
if (( ${#msg} > 600 )); then echo "FAIL: a 10,000-character value was echoed whole (${#msg} characters)"; fail=1
else echo "ok:   a 10,000-character value is clipped in the message"; fi
for args in "run $long" "run matmul --backend $long" "run matmul --set config=$long" "--open $tmp/$long" \
  "--open-run /$long" "shot --open-run /$long -o $tmp/x.png" "run matmul --json /no/$long" "list $long" \
  "shot matmul --size $long -o $tmp/x.png"; do
  # shellcheck disable=SC2086
  msg=$(env -u DISPLAY timeout 120 "$bin" $args 2>&1 >/dev/null); got=$?
  if [[ $got -ne 2 && $got -ne 3 ]] || ((${#msg} > 1000)); then
    echo "FAIL: dlsys-lab ${args:0:40}... -> exit $got, a message of ${#msg} characters"; fail=1
  else echo "ok:   dlsys-lab ${args:0:40}... -> exit $got, the value clipped"; fi
done

# A config path that is not UTF-8 still gives valid JSON (the bad bytes replaced).
bad_name="$tmp/$(printf 'model-\xff\xfe').json"
echo "$config" > "$bad_name"
out=$(timeout 120 "$bin" run kvcache --quick --set "config=$bad_name" --json - 2>"$tmp/err.txt"); got=$?
if [[ $got -ne 0 ]] || ! python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$out"; then
  echo "FAIL: run kvcache with a non-UTF-8 config path -> exit $got, $(head -c 400 "$tmp/err.txt")"; fail=1
else echo "ok:   non-UTF-8 config path with --json -"; fi

# The zero lesson: ranks, stages and sizes outside what it allows; config files that are not configs.
expect 2 "parameter 'n': value '0' is not allowed" run zero --set n=0
expect 2 "parameter 'n': value '-3' is not allowed" run zero --set mode=theory --set n=-3
expect 2 "parameter 'stage': value '4' is not allowed" run zero --set stage=4
expect 2 "parameter 'stage': value '-1' is not allowed" run zero --set mode=theory --set stage=-1
expect 2 "parameter 'params': value '0' is not allowed" run zero --set mode=theory --set params=0
expect 2 "parameter 'params': value 'nan' is not allowed" run zero --set mode=theory --set params=nan
expect 2 "parameter 'params': value '1e400' is not allowed" run zero --set mode=theory --set params=1e400
expect 2 "parameter 'model': value 'gpt-9' is not allowed" run zero --set mode=theory --set model=gpt-9
expect 2 "does not divide a layer's 2 w^2" run zero --set n=3 --set layers=2 --set width=32
expect 2 "of host memory is available" run zero --set layers=256 --set width=4096 --set n=64
expect 2 "is a pipe (FIFO)" run zero --set mode=theory --set "config=$tmp/fifo.json"
expect 2 "is a device" run zero --set mode=theory --set config=/dev/zero
printf '%s' '{"num_hidden_layers": 2, "num_attention_heads":' > "$tmp/zero_cut.json"
expect 2 "not valid JSON" run zero --set mode=theory --set "config=$tmp/zero_cut.json"

# The checkpointing lesson: k outside 1..L or not dividing L, sizes out of range, a model that cannot be sized.
expect 2 "parameter 'k': value '0' is not allowed" run checkpointing --set k=0
expect 2 "parameter 'k': value '7' is more layers than the stack has (L = 6)" run checkpointing --set layers=6 --set k=7
expect 2 "parameter 'k': value '5' does not divide L = 48, so the segments would differ in length; allowed: 1, 2, 3, 4, 6, 8, 12, 16, 24, 48" run checkpointing --set k=5
expect 2 "parameter 'layers': value '97' is not allowed" run checkpointing --set layers=97
expect 2 "parameter 'expansion': value '0' is not allowed" run checkpointing --set expansion=0
expect 2 "parameter 'rows': value '-1' is not allowed" run checkpointing --set rows=-1
expect 2 "parameter 'seq': value '0' is not allowed" run checkpointing --set seq=0
expect 2 "parameter 'model': value 'gpt-9' is not allowed" run checkpointing --set model=gpt-9
expect 2 "is a device" run checkpointing --set config=/dev/zero
expect 2 "not valid JSON" run checkpointing --set "config=$tmp/zero_cut.json"
echo '{"num_hidden_layers": 2, "num_attention_heads": 2, "head_dim": 32}' > "$tmp/no_hidden.json"
expect 2 "parameter 'config': no_hidden.json does not give hidden_size" run checkpointing --set "config=$tmp/no_hidden.json"
expect 2 "of host memory is available" run checkpointing --set layers=96 --set width=2048 --set rows=4096 --set expansion=8
expect 2 "more than max_minutes" run checkpointing --set layers=96 --set width=1024 --set rows=1024 --set max_minutes=0.1
# The mesh lesson: more than eight ranks, a mesh that does not divide the model or the batch, sizes out of range.
expect 2 "parameters 'dp', 'tp', 'pp': 4 x 2 x 2 = 16 ranks; allowed: at most 8" run mesh --set dp=4
expect 2 "parameter 'dp': value '9' is not allowed" run mesh --set dp=9
expect 2 "parameter 'tp': value '0' is not allowed" run mesh --set tp=0
expect 2 "parameter 'layers': value '7' is not a multiple of pp = 2" run mesh --set layers=7
expect 2 "parameter 'hidden': value '66' is not a multiple of tp = 4" run mesh --set hidden=66 --set tp=4 --set dp=1
expect 2 "parameter 'batch': value '30' is not a multiple of dp x micro_batches = 2 x 4" run mesh --set batch=30
expect 2 "parameter 'micro_batches': value '0' is not allowed" run mesh --set micro_batches=0
expect 2 "parameter 'steps': value '51' is not allowed" run mesh --set steps=51
expect 2 "of host memory is available" run mesh --set hidden=2048 --set layers=64 --set batch=4096
expect 2 "parameter 'gpus': value '12' is not whole nodes of gpus_per_node = 8" run mesh --set gpus=12
expect 2 "parameter 'model': value 'gpt-9' is not allowed" run mesh --set model=gpt-9
expect 2 "is a device" run mesh --set config=/dev/zero
expect 2 "parameter 'seq': value '0' is not allowed" run mesh --set seq=0
expect 2 "more than max_minutes" run mesh --set hidden=512 --set layers=64 --set batch=4096 --set steps=50 \
  --set max_minutes=0.1
# The moe lesson: ranks that do not divide the experts, k above E, values out of range, a run longer than the limit.
expect 2 "parameter 'ranks': value '3' does not divide E = 8 experts" run moe --set ranks=3
expect 2 "parameter 'ranks': value '9' is not allowed" run moe --set ranks=9
expect 2 "parameter 'top_k': value '3' is more experts than there are (E = 2)" run moe --set experts=2 --set top_k=3
expect 2 "parameter 'experts': value '65' is not allowed" run moe --set experts=65
expect 2 "parameter 'capacity_factor': value 'nan' is not allowed" run moe --set capacity_factor=nan
expect 2 "parameter 'skew': value '5' is not allowed" run moe --set skew=5
expect 2 "parameter 'tokens': value '0' is not allowed" run moe --set tokens=0
expect 2 "parameter 'link_gbps': value '-1' is not allowed" run moe --set link_gbps=-1
expect 2 "parameter 'aux_loss': value 'yes' is not allowed" run moe --set aux_loss=yes
expect 2 "more than max_minutes" run moe --set tokens=2048 --set hidden=1024 --set ffn=4096 --set max_minutes=0.1
# The hardware lesson: sweeps outside what it allows, a sweep that does not go up, runs longer than the limit.
expect 2 "parameter 'min_working_set': value '1KiB' is not allowed" run hardware --set min_working_set=1KiB
expect 2 "parameter 'max_working_set': value '3GiB' is not allowed" run hardware --set max_working_set=3GiB
expect 2 "parameter 'points_per_octave': value '0' is not allowed" run hardware --set points_per_octave=0
expect 2 "parameter 'points_per_octave': value '5' is not allowed" run hardware --set points_per_octave=5
expect 2 "parameter 'chase_steps': value '-1' is not allowed" run hardware --set chase_steps=-1
expect 2 "parameter 'working_set': value 'nan' is not allowed" run hardware --set working_set=nan
expect 2 "parameter 'stream_bytes': value '1MiB' is not allowed" run hardware --set stream_bytes=1MiB
expect 2 "parameter 'threads': value '0' is not allowed" run hardware --set threads=0
expect 2 "parameters 'min_working_set' and 'max_working_set'" run hardware --set min_working_set=64MiB \
  --set max_working_set=32MiB
expect 2 "parameters 'threads' and 'min_working_set'" run hardware --set threads=256 --set min_working_set=8KiB
expect 2 "more than max_minutes" run hardware --set chase_steps=268435456 --set repeats=100 --set max_minutes=1

# Recorded runs opened again (--open-run, shot --open-run): only run files of this build's format, every key there.
"$bin" run matmul "${small_matmul[@]}" --json "$tmp/run.json" >/dev/null
edit_run() {  # edit_run OUT PYTHON-STATEMENT-ON-d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d, open(sys.argv[3], 'w'))" \
    "$tmp/run.json" "" "$1"
}
edit_run "$tmp/run_future.json" "d['recorded']['format_version'] = 99"
edit_run "$tmp/run_unrecorded.json" "del d['recorded']"
edit_run "$tmp/run_missing.json" "del d['measured']['wrong']"
edit_run "$tmp/run_kind.json" "d['series'][0]['points'][0][1] = 'fast'"
edit_run "$tmp/run_lesson.json" "d['lesson'] = 'teleport'"
edit_run "$tmp/run_param.json" "d['params']['m'] = '-5'"
echo '{"lesson": "matmul", "step": 2, "params": {}}' > "$tmp/state.json"
expect 2 "format version 99 is not understood by this build" --open-run "$tmp/run_future.json"
expect 2 "understood: 1" shot --open-run "$tmp/run_future.json" -o "$tmp/x.png"
expect 2 "is not a recorded run" --open-run "$tmp/run_unrecorded.json"
expect 2 "is not a recorded run" --open-run "$tmp/state.json"
expect 2 "measured.wrong: missing" --open-run "$tmp/run_missing.json"
expect 2 "series[0].points[0][1]: expected a number" shot --open-run "$tmp/run_kind.json" -o "$tmp/x.png"
expect 2 "unknown lesson 'teleport'" --open-run "$tmp/run_lesson.json"
expect 2 "run file '$tmp/run_param.json'" --open-run "$tmp/run_param.json"
expect 2 "is a pipe (FIFO)" --open-run "$tmp/fifo.json"
expect 2 "nesting deeper than 100 levels" --open-run "$tmp/deep_state.json"
expect 2 "cannot be combined with --open, --lesson or --set" --open-run "$tmp/run.json" --lesson matmul
expect 2 "--set, --quick and --backend do not apply" shot --open-run "$tmp/run.json" --set m=4 -o "$tmp/x.png"
expect 2 "is a run of lesson 'matmul'" shot zero --open-run "$tmp/run.json" -o "$tmp/x.png"
expect 2 "shot needs a LESSON to run, or --open-run FILE" shot -o "$tmp/x.png"
expect 2 "no display" --open-run "$tmp/run.json"  # a good file: refused only for want of a display here

# `compare A B`: two run files of one lesson and this build's format, each read as --open-run reads it; a refusal
# names the file and what is allowed, and nothing is written.
"$bin" run fusion --quick --json "$tmp/other_lesson.json" >/dev/null
expect 2 "run file '$tmp/other_lesson.json' is a run of lesson 'fusion', but run file '$tmp/run.json' is a run of lesson 'matmul'; allowed: two runs of the same lesson" \
  compare "$tmp/run.json" "$tmp/other_lesson.json" --json "$tmp/table.json"
expect 2 "run file '$tmp/run_future.json': run file format version 99 is not understood by this build" \
  compare "$tmp/run.json" "$tmp/run_future.json" -o "$tmp/compare.png"
expect 2 "understood: 1" compare "$tmp/run_future.json" "$tmp/run.json"
expect 2 "run file '$tmp/run_missing.json': lesson 'matmul': measured.wrong: missing" \
  compare "$tmp/run.json" "$tmp/run_missing.json" --json -
expect 2 "is not a recorded run" compare "$tmp/state.json" "$tmp/run.json"
expect 2 "series[0].points[0][1]: expected a number" compare "$tmp/run.json" "$tmp/run_kind.json"
expect 2 "is a pipe (FIFO)" compare "$tmp/run.json" "$tmp/fifo.json"
expect 2 "--step 9 is out of range; lesson 'matmul' has steps 1 to 5" compare "$tmp/run.json" "$tmp/run.json" --step 9
expect 2 "are the same file; allowed: a different file for each output" compare "$tmp/run.json" "$tmp/run.json" -o "$tmp/same" --json "$tmp/same"
for out in compare.png table.json; do
  [[ -e "$tmp/$out" ]] && { echo "FAIL: a refused compare left $out behind"; fail=1; }
done
# The figure and the table are one result: a table that cannot be written leaves no figure behind.
expect 3 "cannot write '$tmp/no/such/table.json'" compare "$tmp/run.json" "$tmp/run.json" -o "$tmp/compare.png" \
  --json "$tmp/no/such/table.json"
[[ -e "$tmp/compare.png" ]] && { echo "FAIL: compare wrote its figure without its table"; fail=1; }
# The window's --compare-run pins a run of the lesson opened, and refuses another lesson's before any window opens.
expect 2 "--compare-run: run file '$tmp/other_lesson.json' is a run of lesson 'fusion'; allowed: a run of lesson 'matmul'" \
  --open-run "$tmp/run.json" --compare-run "$tmp/other_lesson.json"
expect 2 "format version 99 is not understood" --open-run "$tmp/run.json" --compare-run "$tmp/run_future.json"
expect 2 "no display" --open-run "$tmp/run.json" --compare-run "$tmp/run.json"  # good files

# No address space for more thread stacks: a run failure with the reason, not an abort, and no hang at exit.
# The limit is what the process needs to start (large with the CUDA libraries mapped, small without them) plus
# 200 MB: 63 rank threads with 8 MiB stacks do not fit in that.
starts_within() { (ulimit -v "$1"; "$bin" list >/dev/null 2>&1); }
start_kb=0 below_kb=0
for kb in 400000 800000 1600000 3200000 6400000 12800000; do
  if starts_within $kb; then start_kb=$kb; break; fi
  below_kb=$kb
done
while ((start_kb > 0 && start_kb - below_kb > 25000)); do  # narrow it down to 25 MB
  mid=$(((start_kb + below_kb) / 2))
  if starts_within $mid; then start_kb=$mid; else below_kb=$mid; fi
done
if [[ $start_kb -eq 0 ]]; then
  echo "FAIL: dlsys-lab does not start under 12.8 GB of address space"; fail=1
else
  err=$( (ulimit -v $((start_kb + 200000)); OPENBLAS_NUM_THREADS=1 timeout 120 "$bin" run allreduce --set n=64 \
    --set bytes=4KiB --set sizes=4KiB --set repeats=1 --set segment=4KiB) 2>&1 >/dev/null); got=$?
  if [[ $got -ne 3 || "$err" != *"could not start thread"* ]]; then
    echo "FAIL: rank threads under ulimit -v $((start_kb + 200000)) -> exit $got, stderr: ${err:0:400}"; fail=1
  else echo "ok:   rank threads under ulimit -v -> exit 3"; fi
  # OpenBLAS maps a 128 MiB buffer for each of its threads and retries a failed mmap forever: with room for less than
  # its two threads' buffers, a lesson that calls it ends at once with exit 3 naming the limit, instead of hanging.
  for lesson in matmul kvcache bubble precision quant lora; do
    err=$( (ulimit -v $((start_kb + 150000)); OPENBLAS_NUM_THREADS=2 timeout 60 "$bin" run $lesson --quick \
      --backend cpu) 2>&1 >/dev/null); got=$?
    if [[ $got -ne 3 || "$err" != *"address-space limit (ulimit -v)"* ]]; then
      echo "FAIL: run $lesson under ulimit -v $((start_kb + 150000)) -> exit $got, stderr: ${err:0:400}"; fail=1
    else echo "ok:   run $lesson under ulimit -v -> exit 3 naming the limit"; fi
  done
fi

# A rank thread that cannot start (injected, as ulimit -u does not bind root): the ranks already started wait for it
# at a barrier, so they must be released, and the run ends with exit 3 and the reason, in both of ddp's modes.
for mode in ddp dataparallel; do
  err=$(DLSYS_FAIL_THREAD_START="rank threads of the data-parallel run" timeout 60 "$bin" run ddp --quick \
    --set n=4 --set mode=$mode 2>&1 >/dev/null); got=$?
  if [[ $got -ne 3 || "$err" != *"could not start thread 4 of 4 for rank threads of the data-parallel run"* ]]; then
    echo "FAIL: ddp mode=$mode with a rank thread that cannot start -> exit $got, stderr: ${err:0:400}"; fail=1
  else echo "ok:   ddp mode=$mode with a rank thread that cannot start -> exit 3"; fi
done
for lesson in zero tensor allreduce bubble serving; do
  err=$(DLSYS_FAIL_THREAD_START=thread timeout 60 "$bin" run $lesson --quick --backend cpu 2>&1 >/dev/null); got=$?
  if [[ $got -ne 3 || "$err" != *"could not start thread"* ]]; then
    echo "FAIL: $lesson with a thread that cannot start -> exit $got, stderr: ${err:0:400}"; fail=1
  else echo "ok:   $lesson with a thread that cannot start -> exit 3"; fi
done

# A real thread limit (ulimit -u binds only users other than root, so the runs drop to `nobody`): every lesson that
# calls OpenBLAS, which starts its own threads, either runs with the threads it got or ends with exit 3 and the
# reason, within seconds, never waiting for a thread that was not started.
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
  setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$bin"; then
  for limit in 2 3; do
    for lesson in matmul kvcache bubble precision quant roofline serving lora; do
      err=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c \
        "ulimit -u $limit; OPENBLAS_NUM_THREADS=4 exec \"$bin\" run $lesson --quick --backend cpu" 2>&1 >/dev/null)
      got=$?
      if [[ $got -eq 0 || ($got -eq 3 && "$err" == *"could not start thread"*) ]]; then
        echo "ok:   run $lesson under ulimit -u $limit -> exit $got"
      else
        echo "FAIL: run $lesson under ulimit -u $limit -> exit $got, stderr: ${err:0:400}"; fail=1
      fi
    done
  done
else
  echo "skip: thread limits (needs root, setpriv and a user nobody who can run $bin)"
fi

# Exercises: an unknown exercise, a prediction that is not a number or not a choice, a run file of another lesson.
expect 2 "allowed: ring_bytes, ring_steps, busbw_factor" exercises allreduce --answer nope=3
expect 2 "expected ID=VALUE" exercises allreduce --answer ring_bytes
expect 2 "answer to ring_bytes" exercises allreduce --answer ring_bytes=lots
expect 2 "not one of its choices; allowed: no, yes" exercises quant --answer int4_faster=maybe
expect 2 "no lesson named" exercises
recorded_ddp="$(dirname "$0")/../data/gpu/ddp.json"
expect 2 "not allowed with --set" exercises --run-file "$recorded_ddp" --set n=2
expect 2 "is a run of lesson 'ddp', not 'zero'" exercises zero --run-file "$recorded_ddp"

# Ranks as processes asked for where no MPI launcher started the process (or the build has no MPI): refused, and the
# message says how to start it.
expect 2 "parameter 'launcher': value 'mpi'" run allreduce --set launcher=mpi --set sizes=4 --set bytes=4
expect 2 "parameter 'launcher': value 'process' is not allowed" run allreduce --set launcher=process
expect 2 "parameter 'launcher': value 'mpi'" run ddp --quick --set launcher=mpi
expect 2 "parameter 'launcher': value 'mpi'" run ddp --quick --set launcher=mpi --set mode=dataparallel
expect 2 "parameter 'launcher': value 'process' is not allowed" run ddp --set launcher=process
expect 2 "parameter 'launcher': value 'mpi'" run moe --quick --set launcher=mpi
expect 2 "parameter 'launcher': value 'process' is not allowed" run moe --set launcher=process
exit $fail
