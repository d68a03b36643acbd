#!/usr/bin/env bash
# README command 1: installs what is missing, builds tfm, compiles the bundled
# example model description (examples/tiny_llama.json) to a shared library,
# and runs it with tfm-run on random weights: checked against the float64
# reference and timed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
model="${1:-$root/examples/tiny_llama.json}"
out="$build/example"

"$root/scripts/build.sh" >/dev/null
mkdir -p "$out"

echo "== tfm-compile $model"
"$build/bin/tfm-compile" "$model" -o "$out/model.so" --header="$out/model.h"
echo "   -> $out/model.so (entry points: $out/model.h)"

echo "== inputs: random parameters, token ids, float64 reference"
PYTHONPATH="$root/python" TFM_BUILD_DIR="$build" \
  /usr/bin/python3 "$root/examples/make_inputs.py" "$model" "$out"

echo "== tfm-run"
"$build/bin/tfm-run" "$out/model.so" --params "$out/params.safetensors" \
  --input input_ids="$out/input_ids.npy" --input position_ids="$out/position_ids.npy" \
  --check logits="$out/reference_logits.npy" --bench 5 --output-dir "$out"
