#!/usr/bin/env bash
# Runs the libFuzzer targets of the sanitizer build (scripts/build.sh
# --sanitize) for SECONDS each (default 60), seeded from the test suite
# (scripts/fuzz-seeds.py). Targets: manifest (the runtime's manifest
# reader), mlir (parse, verify, every tfm pass), model (model descriptions),
# npy, safetensors, tokenizer (tokenizer.json); default all.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# A crash, leak, hang (over 60 s for one input) or sanitizer report fails the
# run; libFuzzer keeps the input under build-sanitize/fuzz/ and names it.
# New inputs that reach new code accumulate in build-sanitize/fuzz/corpus/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFM_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
seconds="${1:-60}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(manifest mlir model npy safetensors tokenizer)

TFM_SANITIZE_BUILD_DIR="$build" "$root/scripts/build.sh" --sanitize >/dev/null
work="$build/fuzz"
rm -rf "$work/seeds"
PYTHONPATH="$root/python" /usr/bin/python3 "$root/scripts/fuzz-seeds.py" "$work/seeds"

declare -A max_len=([manifest]=4096 [mlir]=16384 [model]=4096 [npy]=4096 [safetensors]=8192 [tokenizer]=16384)
for target in "${targets[@]}"; do
  corpus="$work/corpus/$target"
  mkdir -p "$corpus"
  log="$work/$target.log"
  status=0
  "$build/bin/tfm-$target-fuzzer" -max_total_time="$seconds" \
    -max_len="${max_len[$target]}" -timeout=60 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$work/$target-" \
    "$corpus" "$work/seeds/$target" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if ((status)); then
    grep -E "ERROR|SUMMARY|Test unit written|artifact" "$log" | head -20 >&2
    echo "fuzz $target: FAILED after ${runs:-?} executions (log: $log)" >&2
    exit 1
  fi
  echo "fuzz $target: ${runs} executions in ${seconds} s, no crash," \
       "hang or sanitizer report ($(ls "$corpus" | wc -l) inputs in $corpus)"
done
