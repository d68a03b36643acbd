#!/usr/bin/env bash
# README command 1: installs what is missing, builds tfm, and lowers the
# bundled example model (a LLaMA-style decoder block) to primitive tfm ops
# with tfm-opt, printing the result.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
example="${1:-$root/examples/llama_block.mlir}"

"$root/scripts/build.sh" >/dev/null

echo "== $example: tfm-decompose, canonicalize, cse =="
"$build/bin/tfm-opt" "$example" --tfm-decompose --canonicalize --cse
