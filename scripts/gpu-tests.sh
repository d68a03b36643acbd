#!/usr/bin/env bash
# The CUDA target's end-to-end suites on a GPU machine that has no compiler
# (no LLVM, no MLIR): compiled here, run there.
#
#   scripts/gpu-tests.sh prepare [DIR]  here: builds tfm, compiles every
#       suite that runs through the harness (test/Integration/CPU and
#       test/Integration/GPU) for --target=cuda, once per architecture in
#       GPU_ARCHS (default "sm_80 sm_90a": mma.sync kernels, and on Hopper
#       warpgroup MMA, attention's in ping-pong with 128-key tiles) into DIR/ARCH (DIR default build/gpu-tests), with a
#       fingerprint of each suite's inputs: the GPU machine draws the same
#       inputs from the suites' seeds and computes the float64 references
#       itself, so DIR stays small (about 14 MB an architecture, within one
#       device call's carry). The attention suites and the models are also
#       compiled with each other form of the attention kernel (its other
#       row split, decode without split-KV, warpgroup MMA with and without the
#       softmax overlapping P·V, warpgroup MMA with tiles loaded by TMA,
#       by a producer warpgroup, taking turns, tiles of 128 keys; and
#       mma.sync, sm_80's kernel)
#       for sm_90a, and the projection suites and the models with the
#       projections' tiles loaded by TMA (by all the tile's threads, or a
#       producer warpgroup of their own, also in persistent blocks for 3
#       multiprocessors that walk every tile), and the norm suites and
#       the models with the norms computed by the few-rows projections
#       (not kernels of their own), into DIR/variants/NAME.
#   scripts/gpu-tests.sh pack [DIR]     here, after prepare (and bench/gpu.py
#       prepare build/gpu-bench, if wanted): DIR, build/gpu-bench and
#       build/lib/libtfm_runtime.so in one build/gpu-carry.tar.gz (about
#       19 MB where they are 65: a device call carries at most 64 MiB);
#       on the GPU machine `tar xzf build/gpu-carry.tar.gz` puts them back.
#   scripts/gpu-tests.sh check [DIR]    on the GPU machine, from the checkout
#       with DIR and build/lib/libtfm_runtime.so carried: runs every suite
#       of every architecture and variant prepared and compares; exits
#       non-zero if any case fails. DIR also holds tfm-run (which needs no LLVM) and the
#       libsentencepiece it links. GPU_TESTS_ONLY=REGEX runs only the
#       checks whose names match (sm_90a/GPU/projections,
#       variants/wgmma/CPU/attention, sm_80/models, ...), so that a run
#       can be split over device calls (each says how long it took).
#       Each check gets at most GPU_TESTS_TIMEOUT seconds (default 150): a
#       kernel that hangs fails its own check, not the device call. The
#       checks run GPU_TESTS_JOBS at a time (default 8; on an H200 machine
#       of 16 cores, 78 checks took 3 minutes 10 at a time); each says
#       when it is done, and their logs follow in order.
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
# The suites a kernel's other forms run again: the attention kernel's, and
# the projections'.
attention_suites=(CPU/attention GPU/flash_attention)
projection_suites=(CPU/projections GPU/projections CPU/blocks)
# And the norms' (computed by the few-rows projections, or not).
norm_suites=(CPU/layers CPU/blocks)
# Each other form, NAME:SUITES:FLAGS (SUITES: attention, projection or
# norm), for sm_90a, in DIR/variants/NAME with the models.
variants=(warp-rows-32:attention:--gpu-attention-warp-rows=32
          no-split-kv:attention:--gpu-attention-split-kv=false
          wgmma:attention:--gpu-attention-wgmma
          wgmma-overlap:attention:--gpu-attention-wgmma-overlap
          attention-tma:attention:--gpu-attention-tma
          "overlap-tma:attention:--gpu-attention-wgmma-overlap --gpu-attention-tma"
          attention-ws:attention:--gpu-attention-warp-specialized
          "overlap-ws:attention:--gpu-attention-wgmma-overlap --gpu-attention-warp-specialized"
          pingpong:attention:--gpu-attention-pingpong
          "overlap-keys128:attention:--gpu-attention-wgmma-overlap --gpu-attention-keys=128"
          mma-sync:attention:--gpu-attention-mma-sync
          matmul-tma:projection:--gpu-matmul-tma
          matmul-warp-specialized:projection:--gpu-matmul-warp-specialized
          "matmul-persistent:projection:--gpu-matmul-persistent --gpu-multiprocessors=3"
          norm-prologues:norm:--gpu-norm-prologues)

generation_model="$root/test/Integration/GPU/generation-bf16.json"
# The same with LayerNorm (two row reductions and a bias a norm).
layer_norm_model="$root/test/Integration/GPU/generation-bf16-layer-norm.json"

# Compiles the model descriptions test/Integration/GPU/ops.test runs into
# DIR/model (f32, with its inputs) and DIR/generation (bf16, on the
# tensor-core kernels) with these flags.
prepare_model() {
  local model="$1/model" generation="$1/generation"
  shift
  mkdir -p "$model" "$generation"
  "$TFM_BUILD_DIR/bin/tfm-compile" "$root/test/Tools/Inputs/tiny-llama.json" \
    --target=cuda "$@" -o "$model/model.so"
  "$python" "$root/test/Tools/Inputs/make-run-inputs.py" \
    "$root/test/Tools/Inputs/tiny-llama.json" "$model"
  "$TFM_BUILD_DIR/bin/tfm-compile" "$generation_model" --target=cuda "$@" \
    -o "$generation/model.so"
}

# Checks the models prepare_model compiled: the f32 model's logits against
# the float64 reference, then tfm-run --device=cuda on it, generation
# included; then the bf16 models' generation (the LayerNorm one where
# prepared: for each architecture).
check_model() {
  local model="$1/model"
  python3 "$root/test/Integration/GPU/check-model.py" "$model" || return 1
  local run=(env LD_LIBRARY_PATH="$TFM_BUILD_DIR/lib:$dir/lib" "$dir/bin/tfm-run"
             "$model/model.so" --device=cuda
             --params "$model/params.safetensors")
  "${run[@]}" --input input_ids="$model/ids.npy" \
    --input position_ids="$model/pos.npy" \
    --check logits="$model/reference.npy" --bench 5 &&
    "${run[@]}" --generate 8 --prompt 1,5,7 --prompt 2,4 &&
    python3 "$root/test/Integration/GPU/check-generation.py" \
      "$1/generation/model.so" "$generation_model" &&
    { [ ! -f "$1/generation-layer-norm/model.so" ] ||
      python3 "$root/test/Integration/GPU/check-generation.py" \
        "$1/generation-layer-norm/model.so" "$layer_norm_model"; }
}

# Queues one check, NAME (ARCH/SUITE, variants/FORM/SUITE, or
# .../models) running COMMAND..., unless GPU_TESTS_ONLY (an extended
# regular expression) leaves it out.
queued_names=() queued_commands=()
check_one() {
  local name="$1"
  shift
  [[ -z "${GPU_TESTS_ONLY:-}" || "$name" =~ $GPU_TESTS_ONLY ]] || return 0
  queued_names+=("$name")
  queued_commands+=("$(printf '%q ' "$@")")
}

# Runs queued check INDEX into LOGS/INDEX.log and its exit status into
# LOGS/INDEX.status, and says when it is done. A check still running after
# GPU_TESTS_TIMEOUT seconds (a kernel that never finishes) is killed and
# fails.
run_queued() {
  local index="$1" name="${queued_names[$1]}" start=$SECONDS status=0
  {
    echo "== $name"
    eval "timeout --kill-after=10 ${GPU_TESTS_TIMEOUT:-150} ${queued_commands[$index]}" ||
      status=$?
    if ((status == 124 || status == 137)); then
      echo "== $name: timed out after ${GPU_TESTS_TIMEOUT:-150} s (a kernel that hangs?)"
    fi
    echo "== $name: $((SECONDS - start)) s"
  } > "$logs/$index.log" 2>&1
  echo "$status" > "$logs/$index.status"
  echo "done: $name (exit $status, $((SECONDS - start)) s)"
}

# Runs the queued checks, GPU_TESTS_JOBS at a time (default 8: the float64
# references are computed on the CPUs while other checks use the GPU),
# then prints their logs in order and counts the failures.
run_checks() {
  logs=$(mktemp -d)
  local index
  for index in "${!queued_names[@]}"; do
    while (($(jobs -rp | wc -l) >= ${GPU_TESTS_JOBS:-8})); do
      wait -n || true
    done
    run_queued "$index" &
  done
  wait
  failed=0 total=0
  for index in "${!queued_names[@]}"; do
    cat "$logs/$index.log"
    (($(cat "$logs/$index.status") == 0)) || failed=$((failed + 1))
    total=$((total + 1))
  done
  rm -rf "$logs"
}

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
      prepare_model "$dir/$arch" --gpu-arch="$arch"
      mkdir -p "$dir/$arch/generation-layer-norm"
      "$TFM_BUILD_DIR/bin/tfm-compile" "$layer_norm_model" --target=cuda \
        --gpu-arch="$arch" -o "$dir/$arch/generation-layer-norm/model.so"
    done
    for variant in "${variants[@]}"; do
      IFS=: read -r name kind variant_flags <<<"$variant"
      flags=(--gpu-arch=sm_90a $variant_flags)
      declare -n variant_suites="${kind}_suites"
      for suite in "${variant_suites[@]}"; do
        TFM_HARNESS=prepare "$python" "$root/test/Integration/$suite.py" \
          "$dir/variants/$name/$suite" --target=cuda "${flags[@]}"
      done
      prepare_model "$dir/variants/$name" "${flags[@]}"
    done
    mkdir -p "$dir/bin" "$dir/lib"
    cp "$TFM_BUILD_DIR/bin/tfm-run" "$dir/bin/"
    ldd "$TFM_BUILD_DIR/bin/tfm-run" | awk '/libsentencepiece/ { print $3 }' |
      xargs -r cp -L -t "$dir/lib"
    ;;
  pack)
    cd "$root"
    parts=("$(realpath --relative-to="$root" "$dir")" build/lib/libtfm_runtime.so)
    [ -d build/gpu-bench ] && parts+=(build/gpu-bench)
    tar -czf build/gpu-carry.tar.gz "${parts[@]}"
    echo "packed ${parts[*]} into build/gpu-carry.tar.gz" \
      "($(du -h build/gpu-carry.tar.gz | cut -f1))"
    ;;
  check)
    for arch_dir in "$dir"/sm_*; do
      [ -d "$arch_dir" ] || continue
      arch=$(basename "$arch_dir")
      for suite in "${suites[@]}"; do
        check_one "$arch/$suite" env TFM_HARNESS=check python3 \
          "$root/test/Integration/$suite.py" "$arch_dir/$suite"
      done
      check_one "$arch/models" "$root/scripts/gpu-tests.sh" check-models "$dir" "$arch_dir"
    done
    for variant_dir in "$dir"/variants/*; do
      [ -d "$variant_dir" ] || continue
      name="variants/$(basename "$variant_dir")"
      # The suites prepare compiled for this form.
      for suite in $(printf '%s\n' "${attention_suites[@]}" \
                       "${projection_suites[@]}" "${norm_suites[@]}" | sort -u); do
        [ -d "$variant_dir/$suite" ] || continue
        check_one "$name/$suite" env TFM_HARNESS=check python3 \
          "$root/test/Integration/$suite.py" "$variant_dir/$suite"
      done
      check_one "$name/models" "$root/scripts/gpu-tests.sh" check-models "$dir" "$variant_dir"
    done
    run_checks
    if [ "$total" -eq 0 ]; then
      echo "$dir holds no prepared suite${GPU_TESTS_ONLY:+ matching $GPU_TESTS_ONLY}" \
        "(run prepare first)" >&2
      exit 1
    fi
    echo "$(( total - failed )) of $total suites passed"
    exit $(( failed != 0 ))
    ;;
  check-models)
    # check's models of one architecture or variant, in a process of their
    # own that run_queued can time out: DIR, then the models' parent.
    check_model "$3"
    ;;
  *)
    echo "usage: $0 prepare|pack|check [DIR]" >&2
    exit 2
    ;;
esac
