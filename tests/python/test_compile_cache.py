"""The persistent compile cache (runtime/src/objcache.rs): a second process's compile of the
same program is a hit that skips MLIR and LLVM and gives the same results; concurrent writers,
damaged entries and QUABLA_CACHE=0 behave. Each case runs fresh interpreters."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = r"""
import numpy as np, quabla as qb
def loss(w1, w2, x, y):
    h = qb.tanh(x @ w1)
    return qb.mean((h @ qb.transpose(w2)[:, ::-1] - y) ** 2)
g = qb.jit(qb.value_and_grad(loss, argnums=(0, 1)))
rng = np.random.default_rng(0)
args = [qb.array(rng.normal(size=s).astype(np.float32)) for s in [(64, 128), (10, 128), (256, 64), (256, 10)]]
v, (a, b) = g(*args)
print(repr(float(v)), repr(float(qb.sum(a * a))), repr(float(qb.sum(b))))
"""


def _run(cache_dir, extra=None):
    env = dict(os.environ, QUABLA_CACHE_DIR=str(cache_dir), QUABLA_LOG_COMPILES="1")
    env.pop("QUABLA_CACHE", None)
    env.update(extra or {})
    r = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip(), r.stderr


def test_second_process_hits_and_agrees(tmp_path):
    out1, err1 = _run(tmp_path)
    assert "compile cache miss for @main" in err1 and "compile cache hit" not in err1, err1
    entries = list(tmp_path.glob("*.qobj"))
    assert entries, "nothing was cached"
    out2, err2 = _run(tmp_path)
    assert out2 == out1
    assert "compile cache hit for @main" in err2, err2
    # A hit runs neither the upstream MLIR pipeline nor LLVM.
    assert "LLVM JIT" not in err2 and "upstream pipeline" not in err2, err2
    assert sorted(tmp_path.glob("*.qobj")) == sorted(entries)
    # Cache off: compiles, writes nothing.
    off = tmp_path / "off"
    out3, err3 = _run(off, {"QUABLA_CACHE": "0"})
    assert out3 == out1 and "compile cache" not in err3 and not off.exists()


@pytest.mark.parametrize("threads", ["1", "2"])
def test_llvm_paths_agree_and_keep_apart(tmp_path, threads):
    # The LLVM compile path (runtime/src/llvm_compile.rs) and MLIR's ExecutionEngine
    # (QUABLA_LLVM_ENGINE=1) compute the same results, and their objects are keyed apart.
    t = {"QUABLA_NUM_THREADS": threads}
    out_new, err_new = _run(tmp_path, t)
    assert "LLVM JIT (O2" in err_new and "translate" in err_new and "codegen" in err_new, err_new
    out_old, err_old = _run(tmp_path, dict(t, QUABLA_LLVM_ENGINE="1"))
    assert "compile cache miss for @main" in err_old and "codegen + link" in err_old, err_old
    # Same within float reassociation (the unroll threshold may split reductions differently).
    assert [float(v) for v in out_old.split()] == pytest.approx([float(v) for v in out_new.split()], rel=1e-5)
    out_hit, err_hit = _run(tmp_path, t)
    assert out_hit == out_new and "compile cache hit for @main" in err_hit, err_hit


def test_concurrent_writers(tmp_path):
    env = dict(os.environ, QUABLA_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(out.strip())
    assert len(set(outs)) == 1
    assert not list(tmp_path.glob(".tmp-*")), "temporary files left behind"
    out, err = _run(tmp_path)
    assert out == outs[0] and "compile cache hit for @main" in err and "ignoring a damaged entry" not in err, err


def test_damaged_entries_are_rebuilt(tmp_path):
    out1, _ = _run(tmp_path)
    for p in tmp_path.glob("*.qobj"):
        b = bytearray(p.read_bytes())
        b[len(b) // 2] ^= 0xFF
        p.write_bytes(bytes(b))
    out2, err2 = _run(tmp_path)
    assert out2 == out1
    assert "ignoring a damaged entry" in err2, err2
    out3, err3 = _run(tmp_path)
    assert out3 == out1 and "compile cache hit for @main" in err3 and "ignoring a damaged entry" not in err3, err3


def test_foreign_files_are_ignored(tmp_path):
    out1, _ = _run(tmp_path)
    for p in tmp_path.glob("*.qobj"):
        p.write_bytes(b"\x7fELF" + b"\0" * 64)
    (tmp_path / "notes.txt").write_text("not an entry")
    out2, err2 = _run(tmp_path)
    assert out2 == out1 and "ignoring a damaged entry" in err2
    assert (tmp_path / "notes.txt").exists()


@pytest.mark.parametrize("bound", ["1"])
def test_size_bound_evicts(tmp_path, bound):
    # A 1-byte bound keeps nothing but never fails a compile.
    out1, _ = _run(tmp_path, {"QUABLA_CACHE_MAX_BYTES": bound})
    out2, err2 = _run(tmp_path, {"QUABLA_CACHE_MAX_BYTES": bound})
    assert out1 == out2 and not list(tmp_path.glob("*.qobj"))
