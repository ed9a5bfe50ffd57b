"""Runs a quabla program three ways and compares: quabla-opt --run (Quabla's CPU JIT), its
StableHLO export (quabla-opt --emit=stablehlo) on XLA CPU through jaxlib, and the same export
on IREE's llvm-cpu backend. The export must also parse and verify with jaxlib's StableHLO
dialects. Inputs are passed to quabla-opt as --arg literals and the printed outputs parsed.

Tolerances: integers and bools exactly; floats within rtol relative to max(|expected|, 1)
(f64: 1e-12, f32: 1e-5), NaN where NaN is expected, infinities and the signs of zeros exactly.
"""
import os
import re
import subprocess
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
QOPT = os.environ.get("QUABLA_OPT", os.path.join(ROOT, "target", os.environ.get("QUABLA_PROFILE", "debug"), "quabla-opt"))

DTYPES = {"f32": np.float32, "f64": np.float64, "i1": np.bool_, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui32": np.uint32}
RTOL = {"f32": 1e-5, "f64": 1e-12}
# f64 needs no demotion; f64 transcendental functions link against the host's libm.
IREE_FLAGS = ["--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false", "--iree-llvmcpu-link-embedded=false"]


def mlir_dtype(a):
    for k, v in DTYPES.items():
        if a.dtype == v:
            return k
    raise TypeError(f"unsupported dtype {a.dtype}")


def tensor_type(shape, dt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dt + ">"


def type_of(a):
    return tensor_type(a.shape, mlir_dtype(a))


def _elem(x, dt):
    if dt == "i1":
        return "true" if x else "false"
    if dt in ("i32", "i64", "ui8", "ui32"):
        return str(int(x))
    if not np.isfinite(x):
        bits = np.array(x, DTYPES[dt]).view(np.uint32 if dt == "f32" else np.uint64)
        return f"0x{int(bits):0{8 if dt == 'f32' else 16}X}"
    # %.17e round-trips every double, hence every float32 value (converted exactly to f64).
    return "%.17e" % float(x)


def literal(a):
    """`dense<...> : tensor<...>` for a NumPy array (no splat shorthand)."""
    dt = mlir_dtype(a)

    def nest(x):
        if x.ndim == 0:
            return _elem(x[()], dt)
        return "[" + ", ".join(nest(x[i]) for i in range(x.shape[0])) + "]"

    return f"dense<{nest(a)}> : {type_of(a)}"


def parse_literal(line):
    """The NumPy array of a printed `dense<...> : tensor<...>` literal (splats included)."""
    body, ty = line.strip().rsplit(" : ", 1)
    m = re.fullmatch(r"tensor<((?:\d+x)*)(f32|f64|i1|i32|i64|ui8|ui32)>", ty.strip())
    assert m, f"cannot parse type {ty!r}"
    shape = tuple(int(d) for d in m.group(1).split("x") if d)
    dt = m.group(2)
    inner = body.strip()[len("dense<"):-1]
    toks = [t.strip() for t in inner.replace("[", " ").replace("]", " ").split(",") if t.strip()]

    def conv(t):
        if t in ("true", "false"):
            return t == "true"
        if t.startswith("0x"):
            bits = int(t, 16)
            return np.array(bits, np.uint32 if dt == "f32" else np.uint64).view(DTYPES[dt])[()]
        return float(t) if dt in RTOL else int(t)

    vals = [conv(t) for t in toks]
    n = int(np.prod(shape)) if shape else 1
    if len(vals) == 1 and n != 1:
        vals = vals * n
    assert len(vals) == n, f"{line!r}: {len(vals)} elements for shape {shape}"
    return np.array(vals, dtype=DTYPES[dt]).reshape(shape)


def _qopt(args, text):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        r = subprocess.run([QOPT, path, *args], capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(path)
    return r


def export(text, pipeline=None):
    """The StableHLO text of a quabla program: `--emit=stablehlo` (the standard pipeline), or
    an explicit pipeline ending in convert-quabla-to-stablehlo."""
    args = ["--emit=stablehlo"] if pipeline is None else [f"--pass-pipeline=builtin.module({pipeline})"]
    r = _qopt(args, text)
    assert r.returncode == 0, f"quabla-opt {' '.join(args)} failed:\n{r.stderr}\n{text}"
    return r.stdout


def quabla_run(text, inputs, pipeline=None):
    """Outputs of `quabla-opt --run` (the CPU JIT; QUABLA_REF=interpret selects the reference
    interpreter) on the given inputs."""
    mode = "--interpret" if os.environ.get("QUABLA_REF") == "interpret" else "--run"
    args = [mode] + [f"--arg={literal(a)}" for a in inputs]
    if pipeline:
        args.append(f"--pass-pipeline=builtin.module({pipeline})")
    r = _qopt(args, text)
    assert r.returncode == 0, f"quabla-opt --run failed:\n{r.stderr}\n{text}"
    return [parse_literal(l) for l in r.stdout.splitlines() if l.startswith("dense<")]


_XLA = {}


def _xla():
    if not _XLA:
        import jax
        import jax.extend.backend

        jax.config.update("jax_enable_x64", True)
        from jax._src.lib import xla_client as xc
        from jaxlib.mlir import ir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import chlo, stablehlo

        reg = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(reg)
        ctx = ir.Context()
        ctx.append_dialect_registry(reg)
        ctx.load_all_available_dialects()
        stablehlo.register_dialect(ctx)
        chlo.register_dialect(ctx)
        _XLA.update(jax=jax, xc=xc, ir=ir, ctx=ctx, be=jax.extend.backend.get_backend("cpu"))
    return _XLA


def verify(text):
    """Parses and verifies `text` with jaxlib's StableHLO/CHLO dialects (raises MLIRError)."""
    x = _xla()
    with x["ctx"]:
        m = x["ir"].Module.parse(text)
        assert m.operation.verify()
    return m


def xla_run(text, inputs):
    x = _xla()
    be, xc, jax = x["be"], x["xc"], x["jax"]
    exe = be.compile_and_load(text, xc.DeviceList(tuple(be.devices()[:1])), xc.CompileOptions())
    dev = exe.local_devices()[0]
    return [np.asarray(o) for o in exe.execute([jax.device_put(a, dev) for a in inputs])]


def iree_run(text, inputs):
    import iree.compiler as ireec
    import iree.runtime as ireert

    vmfb = ireec.compile_str(text, target_backends=["llvm-cpu"], input_type="stablehlo", extra_args=IREE_FLAGS)
    mod = ireert.load_vm_flatbuffer(vmfb, driver="local-task")
    res = mod.main(*inputs)
    if not isinstance(res, (tuple, list)):
        res = [res]
    return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in res]


def assert_same(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    dt = mlir_dtype(want)
    if dt not in RTOL:
        bad = np.flatnonzero(got.ravel() != want.ravel())
        assert bad.size == 0, f"{what}: {bad.size} elements differ, first at {bad[0]}: got {got.ravel()[bad[0]]}, want {want.ravel()[bad[0]]}"
        return
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    nan = np.isnan(w)
    assert np.array_equal(np.isnan(g), nan), f"{what}: NaN positions differ: got {got}, want {want}"
    inf = np.isinf(w)
    assert np.array_equal(g[inf], w[inf]), f"{what}: infinities differ: got {got}, want {want}"
    zero = w == 0
    assert np.array_equal(np.signbit(g[zero]), np.signbit(w[zero])), f"{what}: signs of zeros differ: got {got}, want {want}"
    fin = ~nan & ~inf
    err = np.abs(g[fin] - w[fin]) / np.maximum(np.abs(w[fin]), 1.0)
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err[worst] <= RTOL[dt], f"{what}: relative error {err[worst]:.3g} > {RTOL[dt]} (got {g[fin][worst]!r}, want {w[fin][worst]!r})"


def check(text, inputs, labels=None, pipeline=None, run_pipeline=None, iree=True):
    """Exports `text`, verifies the export with jaxlib, runs it on XLA and IREE and compares
    every output with `quabla-opt --run`. Returns the StableHLO text."""
    shlo = export(text, pipeline)
    verify(shlo)
    want = quabla_run(text, inputs, run_pipeline)
    labels = labels or [f"output {i}" for i in range(len(want))]
    assert len(labels) == len(want), (labels, len(want))
    got = xla_run(shlo, inputs)
    assert len(got) == len(want)
    for g, w, l in zip(got, want, labels):
        assert_same(g, w, f"XLA, {l}")
    if iree:
        got = iree_run(shlo, inputs)
        assert len(got) == len(want)
        for g, w, l in zip(got, want, labels):
            assert_same(g, w, f"IREE, {l}")
    return shlo


class Program:
    """Builds a quabla `@main` in generic form: parameters from NumPy inputs, ops, labelled
    outputs. `op` returns (SSA name, type) pairs to chain."""

    def __init__(self):
        self.params, self.inputs, self.body, self.outs, self.labels = [], [], [], [], []

    def arg(self, a):
        a = np.asarray(a)
        name = f"%a{len(self.params)}"
        self.params.append((name, type_of(a)))
        self.inputs.append(a)
        return (name, type_of(a))

    def op(self, name, args, rtype, attrs="", nres=None):
        r = f"%r{len(self.body)}"
        a = f" {{{attrs}}}" if attrs else ""
        self.body.append(f'{r} = "quabla.{name}"({", ".join(x[0] for x in args)}){a} : ({", ".join(x[1] for x in args)}) -> {rtype}')
        return (r, rtype)

    def out(self, v, label):
        self.outs.append(v)
        self.labels.append(label)

    def text(self):
        ps = ", ".join(f"{n}: {t}" for n, t in self.params)
        rs = ", ".join(t for _, t in self.outs)
        body = "\n".join("    " + l for l in self.body)
        ret = ", ".join(n for n, _ in self.outs)
        return f"module {{\n  func.func @main({ps}) -> ({rs}) {{\n{body}\n    return {ret} : {rs}\n  }}\n}}\n"

    def check(self, **kw):
        return check(self.text(), self.inputs, self.labels, **kw)


def check_fn(fun, *args, iree=True, eager=False, compare=None):
    """Exports the Python function `fun` at `args` with `qb.export`, verifies the export with
    jaxlib, runs it on XLA (and IREE) and compares every output leaf with Quabla's `qb.jit(fun)`
    (`eager=True`: with the plain call) using `compare(got, want, what)` (default
    `assert_same`). Returns the StableHLO text."""
    import quabla as qb

    compare = compare or assert_same
    text = qb.export(fun, *args)
    verify(text)
    want = [np.asarray(w) for w in qb.tree.leaves((fun if eager else qb.jit(fun))(*args))]
    inputs = [np.asarray(a) for a in args]
    for run in [xla_run] + ([iree_run] if iree else []):
        got = run(text, inputs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            compare(np.asarray(g), w, run.__name__)
    return text
