#!/usr/bin/env bash
# README command 2: installs what is missing, builds tfm and runs the whole
# lit suite. Ends with a line "N passed, N failed" taken from lit's totals.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

"$root/scripts/build.sh"
exec "$root/scripts/lit.sh"
