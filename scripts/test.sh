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
# The fuzz slice: quabla-opt over mutated/generated programs, random API calls against NumPy,
# hostile calls of every public function (tests/fuzz/test_fuzz.py; long run documented there).
echo "== pytest (fuzz slice)"
"$QUABLA_VENV/bin/python" -m pytest -q -p no:cacheprovider tests/fuzz
# The StableHLO export, run on XLA (jaxlib) and IREE against quabla-opt --run.
echo "== pytest (StableHLO export on XLA and IREE)"
"$QUABLA_VENV/bin/python" -m pytest -q tests/stablehlo
# The wheel (built from target/debug, installed in a fresh venv, run with the LLVM prefix
# hidden) and the type stubs (stubtest, mypy on examples/).
echo "== pytest (wheel and type stubs)"
"$QUABLA_VENV/bin/python" -m pytest -q -p no:cacheprovider tests/wheel
echo "== all tests passed"
