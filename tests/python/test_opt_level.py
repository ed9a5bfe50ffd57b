"""The CPU executor's LLVM level (runtime/src/cpu.rs `effective_opt_level`): tiny programs
compile at -O0 (first-call time), others at -O2 — counting the input elements of reductions
(a row sum of a large matrix has a small result) and loops (their bodies run many times)."""

import os
import subprocess
import sys

import pytest

PROGRAMS = {
    "tiny": ("qb.jit(lambda x: x * 2.0 + 1.0)(qb.ones(3))", 0),
    "row_sum": ("qb.jit(lambda x: qb.sum(x, axis=1))(qb.ones((512, 512)))", 2),
    "full_sum": ("qb.jit(qb.sum)(qb.ones((256, 256)))", 2),
    "scalar_loop": ("qb.jit(lambda x: qb.fori_loop(0, 1000, lambda i, c: c * 0.999 + 0.001, x))(qb.asarray(1.0))", 2),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_opt_level(name):
    code, level = PROGRAMS[name]
    env = dict(os.environ, QUABLA_LOG_COMPILES="1", QUABLA_CACHE="0")
    r = subprocess.run([sys.executable, "-c", f"import quabla as qb\nprint({code})"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    levels = {line.split("LLVM JIT (O")[1][0] for line in r.stderr.splitlines() if "LLVM JIT (O" in line}
    # Eager ops (qb.ones) compile too: the jitted program is the one at the expected level.
    assert str(level) in levels, r.stderr
    if level == 0:
        assert levels == {"0"}, r.stderr
