#!/usr/bin/env bash
# Installs missing dependencies, configures (once) and builds tfm.
# The build directory is $TFM_BUILD_DIR, by default build/ in the checkout.
# With --sanitize: the ASan + UBSan build with the libFuzzer targets, in
# $TFM_SANITIZE_BUILD_DIR, by default build-sanitize/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
llvm=/usr/lib/llvm-22
build="${TFM_BUILD_DIR:-$root/build}"
flags=(-DCMAKE_BUILD_TYPE=Release)
if [[ "${1:-}" == --sanitize ]]; then
  build="${TFM_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
  # -O1 with line tables: readable reports at a fraction of -O0's run time.
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
         -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only"
         -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only"
         -DTFM_SANITIZE=ON -DTFM_BUILD_FUZZERS=ON)
fi

"$root/scripts/setup.sh"

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja "${flags[@]}" \
    -DCMAKE_C_COMPILER="$llvm/bin/clang" \
    -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" >/dev/null
fi
cmake --build "$build"
