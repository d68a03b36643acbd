#!/usr/bin/env bash
# Installs what tfm needs to build and test, from Debian's packages only.
# Idempotent: installs nothing when everything is already there.
set -euo pipefail

packages=(
  cmake ninja-build ccache
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libomp-22-dev libclang-rt-22-dev
  python3-numpy python3-torch
  libsentencepiece-dev sentencepiece
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo=""
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null || {
    echo "setup: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
