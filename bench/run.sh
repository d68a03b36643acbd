#!/usr/bin/env bash
# Attention benchmark: tfm tiled and reference lowerings vs a naive OpenBLAS
# attention, with the machine's sgemm rate and STREAM triad bandwidth.
# Flags (bench/README.md): --only SUBSTR, --impls LIST, --quick, --threads N,
# --timeout S. Threads default to $BENCH_THREADS, else the number of cpus.
# `bench/run.sh model [...]`: the whole-model benchmark, tfm against PyTorch
# eager on a LLaMA-style model; `bench/run.sh projections [...]`: each of
# that model's projection shapes against PyTorch's linear at several row
# counts; `bench/run.sh decode [...]`: one generated
# token with KV caches, tfm's decode against a PyTorch decoder with an
# HF-style cache; `bench/run.sh window [--window W]`: RSS of a sliding-window
# model generating 4·W tokens against the same model causal.
set -euo pipefail

bench="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$bench")"
llvm=/usr/lib/llvm-22

if [[ ! -e /usr/lib/x86_64-linux-gnu/libopenblas.so ]]; then
  sudo=""
  [[ "$(id -u)" -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libopenblas-dev >/dev/null
fi

mkdir -p "$bench/.build"
# -mprefer-vector-width=512: clang tunes Intel's AVX-512 server cores for
# 256-bit vectors and would split the FMA peak's 64-byte chains into ymm
# halves, measuring half the peak.
"$llvm/bin/clang" -O3 -march=native -mprefer-vector-width=512 -fopenmp -Wall -Wextra \
  -o "$bench/.build/baselines" "$bench/baselines.c" \
  -L"$llvm/lib" -Wl,-rpath,"$llvm/lib" -lopenblas -lm

script=attention.py
if [[ "${1:-}" == model || "${1:-}" == projections || "${1:-}" == decode ||
      "${1:-}" == window ]]; then
  script="$1.py"
  shift
fi
echo "command: $0 ${script%.py} $*"
PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" \
  exec /usr/bin/python3 "$bench/$script" "$@"
