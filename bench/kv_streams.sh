#!/usr/bin/env bash
# K/V access patterns of a decode step (bench/kv_streams.c). Arguments: the
# prefetch distance in tiles (default 0: none), then "small" for 4 KiB pages
# (default: 2 MiB pages, as NumPy's arrays). Threads: $OMP_NUM_THREADS, else
# the number of cpus.
set -euo pipefail
bench="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$bench/.build"
/usr/lib/llvm-22/bin/clang -O2 -march=native -fopenmp -Wall -Wextra \
  -o "$bench/.build/kv_streams" "$bench/kv_streams.c"
OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}" exec "$bench/.build/kv_streams" "$@"
