#!/usr/bin/env bash
# Builds everything and runs every test: Rust unit and cross-crate tests, the golden
# quabla-opt tests (lit + FileCheck), and the Python suite.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$QUABLA_ROOT/scripts/setup.sh"
cd "$QUABLA_ROOT"
echo "== cargo test"
cargo test --workspace -q 2>&1 | grep -v "^$" | grep -E "test result|FAILED|panicked|error" || true
cargo test --workspace -q >/dev/null 2>&1 || { cargo test --workspace 2>&1 | tail -60; exit 1; }
echo "== lit (golden quabla-opt tests)"
lit -sv tests/lit
if [ -d tests/python ] && [ -f python/pyproject.toml ]; then
  echo "== pytest"
  "$QUABLA_VENV/bin/python" -m pytest -q tests/python
fi
echo "== all tests passed"
