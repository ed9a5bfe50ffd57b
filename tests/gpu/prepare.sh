#!/usr/bin/env bash
# Prepares tests/gpu/run.sh for a lent GPU machine that has no Rust, LLVM or network (the
# H200 of this workplace: Python 3.12 with numpy, a CUDA toolkit under /usr/local/cuda, the
# driver). Run HERE, on the build machine: it builds the wheel (MLIR and LLVM linked into the
# extension; --dev: about 2 minutes from target/debug, release: about 23) into .gpu/, which
# .git/info/exclude keeps out of git, and prints how to run the check there:
#
#   bash tests/gpu/prepare.sh [--release]
#   device run: command "bash tests/gpu/run.sh", carry [".gpu"]   (the wheel must fit 64 MiB)
set -euo pipefail
cd "$(dirname "$0")/../.."
EXC="$(git rev-parse --git-path info/exclude)"; mkdir -p "$(dirname "$EXC")"; grep -qx "/.gpu/" "$EXC" 2>/dev/null || echo "/.gpu/" >> "$EXC"
rm -rf .gpu && mkdir -p .gpu
if [ "${1:-}" = "--release" ]; then bash scripts/wheel.sh .gpu/dist; else bash scripts/wheel.sh --dev .gpu/dist; fi
mv .gpu/dist/quabla-*.whl .gpu/ && rm -rf .gpu/dist
ls -la .gpu/
echo "carry .gpu (must be under 64 MiB with the working tree) and run: bash tests/gpu/run.sh"
