#!/usr/bin/env bash
# Installs what Quabla needs on Debian 12 (LLVM/MLIR 22 packages, a virtualenv with the
# Python tools) and builds the workspace and the Python extension. Idempotent.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$QUABLA_ROOT"

# libomp-22-dev: the OpenMP runtime that multi-threaded compiled code calls (loaded at run time).
PKGS="llvm-22-dev libmlir-22-dev mlir-22-tools libclang-22-dev clang-22 libpolly-22-dev libzstd-dev libz3-dev libxml2-dev zlib1g-dev patchelf libomp-22-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

if [ ! -x "$QUABLA_VENV/bin/python" ]; then
  python3 -m venv "$QUABLA_VENV"
fi
"$QUABLA_VENV/bin/pip" install -q --disable-pip-version-check -r "$QUABLA_ROOT/requirements-dev.txt"

EXCLUDE=""
if grep -q '"python"' Cargo.toml; then EXCLUDE="--exclude quabla-python"; fi
cargo build --workspace $EXCLUDE
if [ -f python/pyproject.toml ]; then
  (cd python && VIRTUAL_ENV="$QUABLA_VENV" PATH="$QUABLA_VENV/bin:$PATH" maturin develop -q)
fi
