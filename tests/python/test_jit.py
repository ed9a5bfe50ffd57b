"""jit: caching by signature, pytrees, static arguments, closed-over tensors, lowering to
MLIR text (checked by stock mlir-opt when it is installed), tree utilities."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import quabla as qb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_cache_hits_and_keys():
    calls = []

    def f(x):
        calls.append(1)
        return x * 2

    g = qb.jit(f)
    a = qb.array([1.0, 2.0])
    assert g(a).tolist() == [2.0, 4.0]
    assert g(qb.array([3.0, 4.0])).tolist() == [6.0, 8.0]
    assert len(calls) == 1  # same shape and dtype: no retrace
    g(qb.array([1.0, 2.0], dtype=qb.float32))
    g(qb.array([1.0, 2.0, 3.0]))
    assert len(calls) == 3  # dtype and shape are part of the key
    g(np.array([1.0, 2.0]))  # NumPy leaves share the Tensor key
    assert len(calls) == 3
    assert g._fast_size() == 3


def test_pytrees_in_and_out():
    @qb.jit
    def f(params, xs):
        y = params["w"] * xs[0] + params["b"]
        return {"y": y, "pair": (y.sum(), None), "list": [xs[1]]}

    p = {"w": qb.array([2.0]), "b": qb.array([1.0])}
    out = f(p, [qb.array([3.0]), qb.array([5.0])])
    assert out["y"].tolist() == [7.0]
    assert out["pair"][0].item() == 7.0 and out["pair"][1] is None
    assert out["list"][0].tolist() == [5.0]


def test_fast_path_serves_pytrees_and_static_values():
    """Pytree arguments (tuples, lists, str-keyed dicts, None) and static values are served by
    the Rust fast path (python/src/callkey.rs) from the second call on, with the leaves in
    qb.tree order whatever the dict's insertion order; whatever it cannot key (NumPy leaves,
    Python numbers in dynamic positions) still gives the right result on the Python path."""
    calls = []

    def f(p, xs, mode, none):
        calls.append(mode)
        y = p["w"] * xs[0] - p["b"]
        return {"y": y * 2 if mode == "double" else y, "n": [xs[1] + 1]}

    g = qb.jit(f, static_argnums=(2, 3))
    x1, x2 = qb.array([3.0]), qb.array([5.0, 6.0])
    for p in ({"w": qb.array([2.0]), "b": qb.array([1.0])}, {"b": qb.array([1.0]), "w": qb.array([2.0])}):
        out = g(p, [x1, x2], "double", None)
        assert out["y"].tolist() == [10.0] and out["n"][0].tolist() == [6.0, 7.0]
    assert g._fast_size() == 1 and len(calls) == 1
    out = g({"w": qb.array([2.0]), "b": qb.array([1.0])}, [x1, x2], "plain", None)
    assert out["y"].tolist() == [5.0] and len(calls) == 2 and g._fast_size() == 2
    # A new leaf shape retraces instead of hitting the old entry.
    out = g({"w": qb.array([2.0, 1.0]), "b": qb.array([1.0, 1.0])}, [x1, x2], "plain", None)
    assert out["y"].tolist() == [5.0, 2.0] and len(calls) == 3
    # Static values by kind and bits: 0.0 and -0.0, 1 and 1.5, a tuple.
    h = qb.jit(lambda x, s: x * s[0] if isinstance(s, tuple) else x + s, static_argnums=1)
    one = qb.array([1.0])
    for s, want in ((0.0, 1.0), (-0.0, 1.0), (1, 2.0), (1.5, 2.5), ((3.0,), 3.0), ((4.0,), 4.0)):
        for _ in range(2):
            assert h(one, s).tolist() == [want]
    assert h._fast_size() == 6
    # Python numbers in a dynamic position are leaves, never keyed by value; NumPy arrays are
    # keyed by the type of the Tensor they become.
    k = qb.jit(lambda xs: xs[0] * xs[1])
    for v in (2.0, 3.0, 4.0):
        assert k([qb.array([1.5]), v]).tolist() == [1.5 * v]
    assert k._fast_size() == 0
    for v in (2.0, 3.0, 4.0):
        assert k((np.array([2.0]), qb.array([v]))).tolist() == [2.0 * v]
    assert k._fast_size() == 1


def test_fast_path_serves_numpy_arguments_as_the_python_path_imports_them():
    """NumPy array leaves are served by the Rust fast path from the second call on as the
    Tensors the Python path makes of them (a copy, python/src/tensor.rs `ndarray_type`): each
    call reads the array's current values, and an array mutated after a call does not change
    an earlier result. Arrays the Python path treats otherwise (uint8 widened to int32, 0-d,
    non-contiguous views) give the same results as there."""
    traces = []

    def f(x, y):
        traces.append(1)
        return x * 2 + y

    g = qb.jit(f)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = qb.ones((3, 4), dtype=qb.float32)
    first = g(x, y)
    assert g._fast_size() == 1 and len(traces) == 1
    x[0, 0] = 100.0
    second = g(x, y)
    assert first.tolist()[0][0] == 1.0 and second.tolist()[0][0] == 201.0 and len(traces) == 1
    # A Tensor of the same type hits the same entry.
    assert np.array_equal(np.asarray(g(qb.asarray(x), y)), np.asarray(second)) and len(traces) == 1
    for a, want in (
        (np.arange(12, dtype=np.float64).reshape(3, 4), "float64"),
        (np.arange(12, dtype=np.int64).reshape(3, 4), "int64"),
        (np.ones((3, 4), dtype=bool), "float32"),
        (np.arange(12, dtype=np.uint8).reshape(3, 4), "int32"),
        (np.arange(24, dtype=np.float32).reshape(3, 8)[:, ::2], "float32"),
    ):
        for _ in range(2):
            got = g(a, qb.ones((3, 4), dtype=want))
            assert str(got.dtype) == want, (a.dtype, got.dtype)
            np.testing.assert_allclose(np.asarray(got, np.float64), a.astype(np.float64) * 2 + 1)


def test_multiple_outputs_and_kwargs():
    f = qb.jit(lambda x, scale=1.0: (x * scale, x + scale))
    a, b = f(qb.array([1.0, 2.0]), scale=qb.array(3.0))
    assert a.tolist() == [3.0, 6.0] and b.tolist() == [4.0, 5.0]


def test_python_scalars_are_static_and_weak():
    calls = []

    def f(x, s):
        calls.append(s)
        return x * s

    g = qb.jit(f)
    x = qb.array([1.0, 2.0], dtype=qb.float32)
    assert g(x, 2).dtype == qb.float32  # weak: keeps float32
    assert g(x, 2).tolist() == [2.0, 4.0]
    assert calls == [2]
    # A number that changes is traced from then on (a weak int64 parameter: one program for
    # every value, as JAX traces numbers), still weak: the result stays float32.
    assert g(x, 3).tolist() == [3.0, 6.0] and g(x, 3).dtype == qb.float32
    assert len(calls) == 2 and isinstance(calls[1], qb.Tracer) and calls[1].dtype == qb.int64
    assert g(x, -7).tolist() == [-7.0, -14.0] and g(x, 2).tolist() == [2.0, 4.0] and len(calls) == 2


def test_changing_numbers_become_traced_unless_the_trace_needs_them():
    traces = []

    def step(i, lr, p):
        traces.append(1)
        decay = 0.5 ** (i / 10)  # arithmetic of traced numbers stays weak
        return p - lr * decay * p

    g = qb.jit(step)
    p = qb.ones(3, qb.float32)
    for i in range(6):
        got = g(i, 0.1 * (i + 1), p)
        assert got.dtype == qb.float32
        np.testing.assert_allclose(np.asarray(got), 1 - 0.1 * (i + 1) * 0.5 ** (i / 10), rtol=1e-6)
    assert len(traces) == 2  # the first call, then once with both numbers traced
    # A number used as a shape, a Python branch or a loop count stays static (one trace per
    # value, as before): tracing it fails, and the function is not tried that way again.
    shapes = []
    h = qb.jit(lambda x, n: shapes.append(n) or x.reshape(n, -1))
    x = qb.arange(12.0)
    assert [h(x, n).shape for n in (2, 3, 4, 3)] == [(2, 6), (3, 4), (4, 3), (3, 4)]
    assert shapes[0] == 2 and [s for s in shapes if not isinstance(s, qb.Tracer)] == [2, 3, 4]
    # An integer power keeps its exact value when the exponent is traced.
    k = qb.jit(lambda x, e: x ** e)
    assert [k(qb.array([-2.0, 3.0]), e).tolist() for e in (2, 3, 5)] == [[4.0, 9.0], [-8.0, 27.0], [-32.0, 243.0]]


def test_static_argnums():
    calls = []

    def f(x, n, axis):
        calls.append((n, axis))
        return qb.sum(x ** n, axis=axis)

    g = qb.jit(f, static_argnums=(1, -1))
    x = qb.array([[1.0, 2.0], [3.0, 4.0]])
    assert g(x, 2, 0).tolist() == [10.0, 20.0]
    assert g(x, 2, 0).tolist() == [10.0, 20.0]
    assert g(x, 1, 1).tolist() == [3.0, 7.0]
    assert calls == [(2, 0), (1, 1)]


def test_closed_over_tensor_becomes_constant():
    w = qb.array([[1.0, 2.0], [3.0, 4.0]])
    f = qb.jit(lambda x: x @ w)
    assert f(qb.array([1.0, 1.0])).tolist() == [4.0, 6.0]
    text = f.lower(qb.array([1.0, 1.0])).as_text()
    assert "quabla.constant" in text and "dense<[[1.0e0, 2.0e0], [3.0e0, 4.0e0]]>" in text


def test_constant_and_passthrough_outputs():
    f = qb.jit(lambda x: (x, qb.zeros_like(x), 3))
    a, z, c = f(qb.array([1.0, 2.0]))
    assert a.tolist() == [1.0, 2.0] and z.tolist() == [0.0, 0.0] and c.item() == 3


def test_nested_jit_inlines():
    inner = qb.jit(lambda x: qb.sin(x) * 2)
    outer = qb.jit(lambda x: inner(x) + 1)
    x = qb.array([0.5])
    np.testing.assert_allclose(outer(x).numpy(), np.sin([0.5]) * 2 + 1)


def test_lower_with_shape_dtype_and_locations():
    def f(x, y):
        return qb.tanh(x) @ y

    low = qb.jit(f).lower(qb.ShapeDtype((2, 3), qb.float32), qb.ShapeDtype((3,), "float32"))
    text = low.as_text()
    assert "func.func @main(%0: tensor<2x3xf32>, %1: tensor<3xf32>) -> (tensor<2xf32>)" in text
    assert '"quabla.tanh"' in text and '"quabla.dot_general"' in text
    assert f'loc("{__file__}":' in text  # the user's file and line
    c = low.compile()
    out = c(qb.ones((2, 3), dtype=qb.float32), qb.ones(3, dtype=qb.float32))
    np.testing.assert_allclose(out.numpy(), np.tanh(np.ones((2, 3))) @ np.ones(3), rtol=1e-6)
    assert "quabla" in low.as_text(optimized=True)


@pytest.mark.skipif(not os.path.exists("/usr/lib/llvm-22/bin/mlir-opt"), reason="needs mlir-opt-22")
def test_as_text_verifies_with_stock_mlir_opt(tmp_path):
    def f(x, i):
        y = qb.where(x > 0, qb.exp(x), x ** 2)
        return qb.softmax(y, axis=-1).sum(axis=0), qb.argmax(y, axis=1), x[1:, ::-1], qb.take(x, i, axis=1)

    text = qb.jit(f).lower(qb.ShapeDtype((3, 4), qb.float64), qb.ShapeDtype((2,), qb.int64)).as_text()
    p = tmp_path / "prog.mlir"
    p.write_text(text)
    r = subprocess.run(
        ["/usr/lib/llvm-22/bin/mlir-opt", f"--irdl-file={ROOT}/dialect/quabla.irdl.mlir", str(p)],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr


def test_trace_cache_is_lru():
    # max_traces=2: a third signature evicts the least recently used one (not an error);
    # recency counts calls served by the Rust fast path.
    traces = []

    def f(x):
        traces.append(x.shape)
        return x + 1

    j = qb.jit(f, max_traces=2)
    j(qb.ones(1))
    j(qb.ones(2))
    j(qb.ones(1))  # fast path: (1,) is now the most recent
    assert j(qb.ones(3)).tolist() == [2.0, 2.0, 2.0]  # evicts (2,)
    assert j._cache_size == 2 and j._fast_size() == 2
    assert traces == [(1,), (2,), (3,)]
    j(qb.ones(1))
    assert traces == [(1,), (2,), (3,)]  # (1,) kept
    assert j(qb.ones(2)).tolist() == [2.0, 2.0]  # (2,) traced again, evicting (3,)
    assert traces == [(1,), (2,), (3,), (2,)]
    j(qb.ones(1))
    assert len(traces) == 4


def test_jit_as_decorator_with_options_and_method():
    @qb.jit(static_argnums=1)
    def f(x, n):
        return x * n

    assert f(qb.array([1.0]), 3).tolist() == [3.0]

    class M:
        def __init__(self):
            self.w = qb.array([2.0])

        @qb.jit(static_argnums=0)
        def __call__(self_, x):  # noqa: N805
            return x * self_.w

    assert M()(qb.array([1.0])).tolist() == [2.0]


def test_tree_utilities():
    tree = {"b": [1, (2, None)], "a": 3}
    leaves, td = qb.tree.flatten(tree)
    assert leaves == [3, 1, 2]
    assert qb.tree.unflatten(td, leaves) == tree
    assert qb.tree.map(lambda x: x * 10, tree) == {"b": [10, (20, None)], "a": 30}
    assert qb.tree.map(lambda x, y: x + y, [1, 2], [10, 20]) == [11, 22]
    with pytest.raises(ValueError):
        qb.tree.map(lambda x, y: x, [1], [1, 2])


@pytest.mark.skipif(shutil.which("quabla-opt") is None, reason="quabla-opt console script not installed")
def test_quabla_opt_console_script(tmp_path):
    text = qb.jit(lambda x: x * 1.0 + 0.0).lower(qb.ShapeDtype((2,), qb.float32)).as_text()
    p = tmp_path / "p.mlir"
    p.write_text(text)
    r = subprocess.run(["quabla-opt", str(p), "--pass-pipeline=builtin.module(quabla-canonicalize)"], capture_output=True, text=True)
    if r.returncode == 2 and "not part of this installation" in r.stderr:
        pytest.skip("quabla-opt binary not built")
    assert r.returncode == 0, r.stderr
    assert "func.func @main" in r.stdout


def test_static_floats_are_keyed_by_their_bits():
    # 0.0 == -0.0 in Python, but x / s differs: each sign gets its own trace.
    traces = []

    def div(x, s):
        traces.append(s)
        return x / s

    f = qb.jit(div, static_argnums=1)
    one = qb.ones(1)
    assert np.asarray(f(one, 0.0))[0] == np.inf
    assert np.asarray(f(one, -0.0))[0] == -np.inf
    assert len(traces) == 2
    # A NaN static argument is traced once, not on every call (nan != nan).
    for _ in range(3):
        assert np.isnan(np.asarray(f(one, float("nan")))[0])
    assert len(traces) == 3
    # Inside containers and keyword arguments too.
    g = qb.jit(lambda x, s: x / s[0], static_argnames="s")
    assert np.asarray(g(one, s=(0.0,)))[0] == np.inf
    assert np.asarray(g(one, s=(-0.0,)))[0] == -np.inf


def test_explain_cache_misses_names_what_changed():
    code = (
        "import quabla as qb\n"
        "f = qb.jit(lambda x, s, p: qb.sum(x['w'] * s) + p[1], static_argnums=1)\n"
        "f({'w': qb.ones(3)}, 2.0, (qb.ones(1), qb.ones(2)))\n"
        "f({'w': qb.ones(4)}, 2.0, (qb.ones(1), qb.ones(2)))\n"
        "f({'w': qb.ones(4)}, 3.0, (qb.ones(1), qb.ones(2)))\n"
        "f({'w': qb.ones(4)}, 3.0, [qb.ones(1), qb.ones(2)])\n"
        "f({'w': qb.ones(4)}, 3.0, [qb.ones(1), qb.ones(2)])\n"
    )
    env = dict(os.environ, QUABLA_EXPLAIN_CACHE_MISSES="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.startswith("quabla: jit(")]
    assert len(lines) == 4, r.stderr  # the last call hits
    assert "first call" in lines[0]
    assert "argument args[0]['w']: float64[3] -> float64[4]" in lines[1]
    assert "static argument 1: 2.0 -> 3.0" in lines[2]
    assert "the arguments' structure changed" in lines[3]


def test_concrete_operand_broadcast_inside_a_trace_stays_small():
    # A concrete [64, 64] mask broadcast against traced [8, 4, 64, 64] scores is broadcast
    # in the program (as JAX stages it), not eagerly into a 128 Ki-element literal; small
    # broadcasts of concrete values still fold eagerly.
    mask = np.tril(np.ones((64, 64), bool))
    f = lambda att: qb.where(qb.array(mask), att, -1e9)
    x = np.random.default_rng(0).standard_normal((8, 4, 64, 64)).astype(np.float32)
    text = qb.jit(f).lower(qb.array(x)).as_text()
    assert "tensor<64x64xi1>" in text and "dense<" in text
    assert "8x4x64x64xi1> = quabla.constant" not in text.replace("tensor<", "")
    assert not any(len(line) > 40_000 for line in text.splitlines())
    np.testing.assert_array_equal(np.asarray(qb.jit(f)(qb.array(x))), np.where(mask, x, np.float32(-1e9)))
    # Outside a trace, broadcast_to stays eager and concrete.
    b = qb.broadcast_to(qb.array(mask), (8, 4, 64, 64))
    assert np.asarray(b).shape == (8, 4, 64, 64)
    small = qb.jit(lambda a: a + qb.broadcast_to(qb.array([1.0, 2.0]), (3, 2))).lower(qb.ones((3, 2))).as_text()
    assert "dense<[[1.0" in small or "dense<[[1.000000e+00" in small


def test_jax_options_are_accepted():
    # Donation is a hint (Quabla does not reuse the buffer: the argument stays valid).
    p = {"w": qb.ones(3)}
    g = qb.jit(lambda p, x: qb.tree.map(lambda a: a * x, p), donate_argnums=0, keep_unused=True, inline=True, backend="cpu")
    assert g(p, 2.0)["w"].tolist() == [2.0, 2.0, 2.0] and p["w"].tolist() == [1.0, 1.0, 1.0]
    h = qb.jit(donate_argnames="x", compiler_options={})(lambda x: x + 1)
    assert h(x=qb.ones(1)).tolist() == [2.0]
    with pytest.raises(qb.ArgumentTypeError, match="donate_argnums"):
        qb.jit(lambda x: x, donate_argnums="x")
    with pytest.raises(qb.UnsupportedOperationError, match="abstracted_axes"):
        qb.jit(lambda x: x, abstracted_axes=("n",))


def test_numbers_whose_static_trace_raises_are_traced_as_weak_scalars():
    # Python's 2. / 0. raises; JAX traces numbers, so the quotient is inf.
    f = qb.jit(lambda x, y: x / y)
    assert f(2.0, 0.0).item() == float("inf")
    assert f(-3.0, 0.0).item() == float("-inf") and f(4.0, 2.0).item() == 2.0
    assert qb.jit(lambda x: x.shape)(2.0) == ()
    # Where the weak trace fails too, the static trace's own error is raised.
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        qb.jit(lambda x: x.nope)(2.0)
    # A number used as a shape still works without static_argnums.
    assert qb.jit(lambda x, n: qb.numpy.zeros(n) + x)(1.0, 3).shape == (3,)
