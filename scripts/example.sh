#!/usr/bin/env bash
# Builds everything and runs the main example.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$QUABLA_ROOT/scripts/setup.sh"
cd "$QUABLA_ROOT"
if [ -f examples/pinn.py ] && [ -f python/pyproject.toml ]; then
  exec "$QUABLA_VENV/bin/python" examples/pinn.py
fi
# Until the Python PINN lands: a 2-layer MLP forward+backward written in the dialect, JIT-run.
exec target/debug/quabla-opt examples/mlp.mlir --pass-pipeline='builtin.module(quabla-inline,quabla-canonicalize)' --run --random-args=1
