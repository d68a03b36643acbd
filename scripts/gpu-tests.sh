#!/usr/bin/env bash
# The CUDA target's end-to-end suites on a GPU machine that has no compiler
# (no LLVM, no MLIR): compiled here, run there.
#
#   scripts/gpu-tests.sh prepare [DIR]  here: builds tfm, compiles every
#       suite that runs through the harness (test/Integration/CPU and
#       test/Integration/GPU) for --target=cuda, once per architecture in
#       GPU_ARCHS (default "sm_80 sm_90a": mma.sync kernels, and warpgroup
#       MMA on Hopper) into DIR/ARCH (DIR default build/gpu-tests), with a
#       fingerprint of each suite's inputs: the GPU machine draws the same
#       inputs from the suites' seeds and computes the float64 references
#       itself, so DIR stays small (about 14 MB an architecture, within one
#       device call's carry). The attention suites are also compiled with
#       the attention kernel's other row split, into DIR/variants.
#   scripts/gpu-tests.sh check [DIR]    on the GPU machine, from the checkout
#       with DIR and build/lib/libtfm_runtime.so carried: runs every suite
#       of every architecture and variant prepared and compares; exits
#       non-zero if any case fails. DIR also holds tfm-run (which needs no LLVM) and the
#       libsentencepiece it links.
#
# Where the GPU machine has the compiler too, lit runs test/Integration/GPU.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-}"
dir="$(realpath -m "${2:-$root/build/gpu-tests}")"
# Suites of test/Integration/CPU run for the CUDA target, and the GPU
# kernels' own suites in test/Integration/GPU.
suites=(CPU/attention CPU/blocks CPU/layers CPU/masks CPU/projections
        GPU/flash_attention GPU/projections)
# The attention suites again with the attention kernel's other row split
# (--gpu-attention-warp-rows=32), for sm_90a, in DIR/variants.
variant_suites=(CPU/attention GPU/flash_attention)
variant_flags=(--gpu-arch=sm_90a --gpu-attention-warp-rows=32)

export PYTHONPATH="$root/python:$root/test/Integration"
export TFM_BUILD_DIR="${TFM_BUILD_DIR:-$root/build}"
case "$mode" in
  prepare)
    "$root/scripts/build.sh" >/dev/null
    python=/usr/bin/python3 # Debian's, with NumPy
    rm -rf "$dir"
    for arch in ${GPU_ARCHS:-sm_80 sm_90a}; do
      for suite in "${suites[@]}"; do
        TFM_HARNESS=prepare "$python" "$root/test/Integration/$suite.py" \
          "$dir/$arch/$suite" --target=cuda --gpu-arch="$arch"
      done
      # A whole model description, as test/Integration/GPU/ops.test runs it.
      mkdir -p "$dir/$arch/model"
      "$TFM_BUILD_DIR/bin/tfm-compile" \
        "$root/test/Tools/Inputs/tiny-llama.json" --target=cuda \
        --gpu-arch="$arch" -o "$dir/$arch/model/model.so"
      "$python" "$root/test/Tools/Inputs/make-run-inputs.py" \
        "$root/test/Tools/Inputs/tiny-llama.json" "$dir/$arch/model"
    done
    for suite in "${variant_suites[@]}"; do
      TFM_HARNESS=prepare "$python" "$root/test/Integration/$suite.py" \
        "$dir/variants/warp-rows-32/$suite" --target=cuda "${variant_flags[@]}"
    done
    mkdir -p "$dir/bin" "$dir/lib"
    cp "$TFM_BUILD_DIR/bin/tfm-run" "$dir/bin/"
    ldd "$TFM_BUILD_DIR/bin/tfm-run" | awk '/libsentencepiece/ { print $3 }' |
      xargs -r cp -L -t "$dir/lib"
    ;;
  check)
    failed=0 total=0
    for arch_dir in "$dir"/sm_*; do
      arch=$(basename "$arch_dir")
      for suite in "${suites[@]}"; do
        echo "== $arch $suite"
        TFM_HARNESS=check python3 "$root/test/Integration/$suite.py" \
          "$arch_dir/$suite" || failed=$((failed + 1))
      done
      echo "== $arch model"
      python3 "$root/test/Integration/GPU/check-model.py" "$arch_dir/model" ||
        failed=$((failed + 1))
      echo "== $arch tfm-run --device=cuda"
      model="$arch_dir/model"
      run=(env LD_LIBRARY_PATH="$TFM_BUILD_DIR/lib:$dir/lib" "$dir/bin/tfm-run"
           "$model/model.so" --device=cuda
           --params "$model/params.safetensors")
      { "${run[@]}" --input input_ids="$model/ids.npy" \
          --input position_ids="$model/pos.npy" \
          --check logits="$model/reference.npy" --bench 5 &&
        "${run[@]}" --generate 8 --prompt 1,5,7 --prompt 2,4; } ||
        failed=$((failed + 1))
      total=$(( total + ${#suites[@]} + 2 ))
    done
    for variant_dir in "$dir"/variants/*; do
      [ -d "$variant_dir" ] || continue
      for suite in "${variant_suites[@]}"; do
        echo "== $(basename "$variant_dir") $suite"
        TFM_HARNESS=check python3 "$root/test/Integration/$suite.py" \
          "$variant_dir/$suite" || failed=$((failed + 1))
        total=$(( total + 1 ))
      done
    done
    if [ "$total" -eq 0 ]; then
      echo "$dir holds no prepared architecture (run prepare first)" >&2
      exit 1
    fi
    echo "$(( total - failed )) of $total suites passed"
    exit $(( failed != 0 ))
    ;;
  *)
    echo "usage: $0 prepare|check [DIR]" >&2
    exit 2
    ;;
esac
