"""Smoke test of an installed wheel (run by tests/wheel/test_wheel.py in a fresh virtualenv,
with /usr/lib/llvm-22 hidden under an empty tmpfs): import, eager ops, jit, grad, vmap, the
StableHLO export, a program whose compiled code calls ``memrefCopy``, the persistent compile
cache across processes, and that no LLVM/MLIR shared library got mapped into the process.
Exits non-zero with a message on the first failure."""

import os
import subprocess
import sys
import tempfile

import numpy as np

import quabla as qb

REPO = os.environ.get("QUABLA_SMOKE_REPO", "")


def check(cond, what):
    if not cond:
        sys.exit(f"wheel smoke: FAILED: {what}")
    print(f"ok  {what}")


here = os.path.dirname(os.path.abspath(qb.__file__))
check("site-packages" in here and not (REPO and here.startswith(REPO)), f"quabla imported from the installed wheel ({here})")

# Eager ops against NumPy.
x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
got = qb.tanh(qb.array(x)) @ qb.array(x.T) + 1.0
check(np.allclose(np.asarray(got), np.tanh(x) @ x.T + 1.0), "eager ops")

# jit, grad, vmap.
f = qb.jit(lambda a, b: qb.sum(qb.sin(a) * b))
a, b = qb.array(x), qb.array(x[::-1].copy())
check(np.isclose(float(f(a, b)), np.sum(np.sin(x) * x[::-1])), "jit")
g = qb.grad(lambda a: qb.sum(qb.sin(a) ** 2))(a)
check(np.allclose(np.asarray(g), 2 * np.sin(x) * np.cos(x)), "grad")
v = qb.vmap(lambda r: qb.dot(r, r))(a)
check(np.allclose(np.asarray(v), np.sum(x * x, axis=1)), "vmap")

# Export to StableHLO.
text = qb.export(qb.grad(lambda a: qb.sum(a**2)), qb.ShapeDtype((3,), qb.float64))
check("stablehlo." in text and "@main" in text, "export to StableHLO")

# The compile cache, across processes; the program's code calls memrefCopy (a concatenation
# with a reversed slice copies between non-contiguous memrefs).
PROGRAM = r"""
import numpy as np, quabla as qb
w = np.arange(24.0).reshape(2, 3, 4)
f = qb.jit(lambda w: qb.concatenate([w, w[:, ::-1]], axis=1) * 2.0)
out = np.asarray(f(qb.array(w)))
assert np.array_equal(out, np.concatenate([w, w[:, ::-1]], axis=1) * 2.0), out
print("ok")
"""
with tempfile.TemporaryDirectory() as cache:
    env = dict(os.environ, QUABLA_CACHE_DIR=cache, QUABLA_LOG_COMPILES="1")
    env.pop("QUABLA_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300) for _ in range(2)]
    for r in runs:
        check(r.returncode == 0 and r.stdout.strip() == "ok", f"a jit program in a new process (stderr: {r.stderr.strip()[-2000:]})")
    check("with memrefCopy" in runs[0].stderr, "the compiled code calls memrefCopy")
    check("compile cache miss for @main" in runs[0].stderr, "the first process misses the compile cache")
    check("compile cache hit for @main" in runs[1].stderr and "LLVM JIT" not in runs[1].stderr, "the second process hits the compile cache")

# quabla-opt: the console script runs the driver inside the extension.
opt = os.path.join(os.path.dirname(sys.executable), "quabla-opt")
r = subprocess.run([opt, "--help"], capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and "usage: quabla-opt" in r.stdout, "quabla-opt --help")
mlir = 'func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n  %0 = "quabla.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n  return %0 : tensor<3x2xf32>\n}\n'
r = subprocess.run([opt, "--run", "--arg=dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>"], input=mlir, capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and r.stdout.strip() == "dense<[[1.0e0, 4.0e0], [2.0e0, 5.0e0], [3.0e0, 6.0e0]]> : tensor<3x2xf32>", f"quabla-opt --run (stdout {r.stdout!r}, stderr {r.stderr[-1000:]!r})")
# The command loads only the extension, not the package (NumPy and the API take seconds).
r = subprocess.run([sys.executable, "-c", "import sys, _quabla_opt; _quabla_opt._extension(); print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'quabla')))"], capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and r.stdout.strip() == "['quabla._quabla']", f"quabla-opt loads the extension alone (modules: {r.stdout.strip()}, {r.stderr[-500:]})")
r = subprocess.run([opt, "--no-such-option"], capture_output=True, text=True, timeout=60)
check(r.returncode == 1 and "unknown option" in r.stderr, "quabla-opt reports a bad option with exit code 1")

# Threads: a product large enough for the parallel path runs on the OpenMP runtime the wheel
# ships (quabla/libomp.so.5, found beside the extension before any system copy), and equals
# NumPy's.
a = np.random.default_rng(0).standard_normal((384, 384)).astype(np.float32)
mm = qb.jit(lambda a: a @ a)
check(np.allclose(np.asarray(mm(qb.array(a))), a @ a, rtol=1e-4, atol=1e-3), "a parallel matmul")
with open("/proc/self/maps") as fh:
    omp = {line.split()[-1] for line in fh if line.rstrip().endswith("libomp.so.5")}
if len(os.sched_getaffinity(0)) > 1:
    check(omp == {os.path.join(here, "libomp.so.5")}, f"compiled code's threads run on the wheel's libomp (mapped: {sorted(omp)})")
else:
    print("--  one core: compiled code is single-threaded and loads no libomp (not checked)")

# Nothing from the LLVM prefix (or any LLVM/MLIR shared library) is mapped.
with open("/proc/self/maps") as fh:
    maps = {line.split()[-1] for line in fh if "/" in line}
# (Not counting the perf jitdump file LLVM's JIT maps, /tmp/.debug/jit/llvm-IR-jit-*/jit-*.dump.)
libs = {p for p in maps if ".so" in os.path.basename(p)}
bad = sorted(p for p in maps if p.startswith("/usr/lib/llvm")) + sorted(p for p in libs if "llvm" in p.lower() or "mlir" in p.lower())
check(not bad, f"no LLVM/MLIR shared library loaded (mapped: {bad})")
if os.environ.get("QUABLA_SMOKE_HIDDEN") == "1":
    check(not os.listdir("/usr/lib/llvm-22"), "/usr/lib/llvm-22 is hidden (empty)")
print("wheel smoke: all checks passed")
