#!/usr/bin/env bash
# Builds everything and runs every test: Rust unit and cross-crate tests, the golden
# quabla-opt tests (lit + FileCheck), the Python suite when the Python package exists, and the
# StableHLO export on XLA and IREE.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$QUABLA_ROOT/scripts/setup.sh"
cd "$QUABLA_ROOT"
EXCLUDE=""
# The pyo3 extension crate is tested through pytest, not cargo (it links against Python).
if grep -q '"python"' Cargo.toml; then EXCLUDE="--exclude quabla-python"; fi
echo "== cargo test"
cargo test --workspace $EXCLUDE 2>&1 | tee /tmp/quabla-cargo-test.log | grep -E "^test result|FAILED|panicked" || true
if grep -qE "FAILED|panicked|error(\[|:)" /tmp/quabla-cargo-test.log; then
  tail -80 /tmp/quabla-cargo-test.log
  exit 1
fi
echo "== lit (golden quabla-opt tests)"
lit -sv tests/lit
if [ -d tests/python ] && [ -f python/pyproject.toml ]; then
  echo "== pytest"
  "$QUABLA_VENV/bin/python" -m pytest -q tests/python
fi
# The StableHLO export, run on XLA (jaxlib) and IREE against quabla-opt --run.
echo "== pytest (StableHLO export on XLA and IREE)"
"$QUABLA_VENV/bin/python" -m pytest -q tests/stablehlo
echo "== all tests passed"
