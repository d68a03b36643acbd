#!/usr/bin/env bash
# Runs the whole lit suite of the build in $TFM_BUILD_DIR (default build/)
# and ends with a line "N passed, N failed" taken from lit's totals.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
/usr/lib/llvm-22/bin/lit -sv "$build/test" 2>&1 | tee "$log" || status=$?

# lit prints totals such as "  Passed: 42 (100.00%)" and "  Failed: 1".
awk '
  /^ *(Passed|Expectedly Failed) *:/ { passed += $NF ~ /%/ ? $(NF-1) : $NF }
  /^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ {
    failed += $NF ~ /%/ ? $(NF-1) : $NF }
  /^ *Unsupported *:/ { skipped += $NF ~ /%/ ? $(NF-1) : $NF }
  END {
    line = sprintf("%d passed, %d failed", passed, failed)
    if (skipped) line = line sprintf(", %d skipped", skipped)
    print line
  }' "$log"
exit "$status"
