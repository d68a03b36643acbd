#!/usr/bin/env bash
# Installs missing dependencies, configures (once) and builds tfm.
# The build directory is $TFM_BUILD_DIR, by default build/ in the checkout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
llvm=/usr/lib/llvm-22

"$root/scripts/setup.sh"

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$llvm/bin/clang" \
    -DCMAKE_CXX_COMPILER="$llvm/bin/clang++" \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" >/dev/null
fi
cmake --build "$build"
