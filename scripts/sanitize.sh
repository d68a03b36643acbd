#!/usr/bin/env bash
# The sanitizer build: tfm with AddressSanitizer + UndefinedBehaviorSanitizer
# (scripts/build.sh --sanitize), every fuzz target for FUZZ_SECONDS seconds
# (default 30; 0 skips them), then the whole lit suite on it. Installs what
# it needs. Fails on any sanitizer report, including one from a tool that a
# test expects to fail (`not tfm-run ...`): reports go to files, not only to
# the tests' output.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFM_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
seconds="${FUZZ_SECONDS:-30}"

TFM_SANITIZE_BUILD_DIR="$build" "$root/scripts/build.sh" --sanitize
if [[ "$seconds" != 0 ]]; then
  TFM_SANITIZE_BUILD_DIR="$build" "$root/scripts/fuzz.sh" "$seconds"
fi

echo "== the lit suite on the ASan + UBSan build"
reports="$build/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
status=0
ASAN_OPTIONS="log_path=$reports/asan" UBSAN_OPTIONS="log_path=$reports/ubsan" \
  TFM_BUILD_DIR="$build" "$root/scripts/lit.sh" || status=$?
if compgen -G "$reports/*" >/dev/null; then
  cat "$reports"/* >&2
  echo "sanitize: the reports above came from the lit suite" >&2
  exit 1
fi
exit "$status"
