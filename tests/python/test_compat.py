"""JAX's top-level utilities (eval_shape, block_until_ready, ShapeDtypeStruct, checkpoint /
remat, named_call, named_scope, config) and the quabla.numpy namespace."""

import numpy as np
import pytest

import quabla as qb
import quabla.numpy as qnp
from breadth_util import assert_close

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402


def test_eval_shape_matches_jax():
    def f(x, y, n):
        return {"p": x @ y, "s": (x.sum(0), y.astype(qb.float64 if isinstance(y, qb.Array) else jnp.float64) * n)}

    def fj(x, y, n):
        return {"p": x @ y, "s": (x.sum(0), y.astype(jnp.float64) * n)}

    x, y = qb.ShapeDtype((3, 5), qb.float32), np.ones((5, 2), np.float32)
    got = qb.eval_shape(f, x, y, 2)
    want = jax.eval_shape(fj, jax.ShapeDtypeStruct((3, 5), jnp.float32), y, 2)
    gl, gt = qb.tree.flatten(got)
    wl = jax.tree_util.tree_leaves(want)
    assert [(g.shape, g.dtype.name) for g in gl] == [(w.shape, str(w.dtype)) for w in wl]
    # jax's own ShapeDtypeStruct and Tensors are abstract leaves too; nothing runs.
    assert qb.eval_shape(lambda a: a[:, None] * 2, jax.ShapeDtypeStruct((4,), "float32")) == qb.ShapeDtypeStruct((4, 1), qb.float32)
    calls = []
    qb.eval_shape(lambda a: calls.append(type(a).__name__) or a, qb.ones(2))
    assert calls == ["Tracer"]
    with pytest.raises(qb.ShapeError):
        qb.eval_shape(lambda a, b: a @ b, qb.ShapeDtype((2, 3), qb.float32), qb.ShapeDtype((2, 3), qb.float32))


def test_checkpoint_keeps_values_and_derivatives():
    def f(x):
        return qb.sum(qb.tanh(x @ x.T) * x[:, :1])

    x = np.random.default_rng(0).normal(size=(4, 3))
    for wrapped in (qb.checkpoint(f), qb.remat(f, policy=qb.checkpoint_policies.dots_saveable), qb.checkpoint(prevent_cse=False)(f)):
        assert_close(wrapped(qb.array(x)), f(qb.array(x)))
        assert_close(qb.jit(qb.grad(wrapped))(qb.array(x)), qb.grad(f)(qb.array(x)))
        assert_close(qb.grad(wrapped)(qb.array(x)), jax.grad(jax.checkpoint(lambda a: jnp.sum(jnp.tanh(a @ a.T) * a[:, :1])))(x))
    with pytest.raises(qb.ArgumentTypeError, match="checkpoint: expected a function"):
        qb.checkpoint(3)


def test_small_utilities():
    t = {"a": qb.ones(2)}
    assert qb.block_until_ready(t) is t
    assert qb.named_call(qb.sin, name="s") is qb.sin
    with qb.named_scope("layer"):
        assert qb.ones(1).tolist() == [1.0]
    with pytest.raises(qb.ArgumentTypeError):
        with qb.named_scope(3):
            pass
    qb.config.update("jax_enable_x64", True)
    qb.config.update("jax_platforms", "cpu")
    assert qb.config.jax_enable_x64 is True
    with pytest.raises(qb.UnsupportedOperationError, match="jax_enable_x64=False"):
        qb.config.update("jax_enable_x64", False)
    with pytest.raises(qb.UnsupportedOperationError, match="jax_debug_nans"):
        qb.config.update("jax_debug_nans", True)


def test_numpy_namespace():
    assert qnp.linalg is qb.linalg
    for n in ("sum", "max", "abs", "round", "where", "take", "sin", "matmul", "einsum", "float32", "nonzero", "unique"):
        assert getattr(qnp, n) is getattr(qb, n), n
    for n in ("jit", "grad", "vmap", "random", "lax", "scan"):
        assert not hasattr(qnp, n), n
    assert "numpy" not in qb.__all__  # `from quabla import *` must not shadow NumPy

    def model(x):  # written against jax.numpy, run with quabla.numpy
        return qnp.mean(qnp.tanh(x) ** 2, axis=0)

    x = np.random.default_rng(1).normal(size=(5, 3))
    assert_close(qb.jit(model)(qb.array(x)), jnp.mean(jnp.tanh(x) ** 2, axis=0))


def test_array_methods_match_jax():
    x = np.array([[3.0, 0.0, 1.5], [1.0, 2.0, 0.0]])
    q, j = qb.array(x), jnp.asarray(x)
    cases = [
        lambda a: a.nonzero(size=5, fill_value=-1),
        lambda a: a.cumsum(axis=1),
        lambda a: a.cumprod(),
        lambda a: a.ptp(axis=0, keepdims=True),
        lambda a: a.conj(),
        lambda a: a.conjugate(),
        lambda a: a.real,
        lambda a: a.imag,
        lambda a: a.copy(),
        lambda a: a.mT,
        lambda a: a.compress(np.array([True, False, True]), axis=1),
        lambda a: a.argpartition(1, axis=1),
        lambda a: a.ravel().searchsorted(1.0),
    ]
    for f in cases:
        assert_close(f(q), f(j))
    idx = np.array([0, 1, 1])
    assert_close(qb.array(idx).choose([qb.array([1, 2, 3]), qb.array([4, 5, 6])]), jnp.asarray(idx).choose([jnp.array([1, 2, 3]), jnp.array([4, 5, 6])]))
    assert q.nbytes == j.nbytes
    assert q.block_until_ready() is q
    assert_close(qb.jit(lambda a: a.cumsum(0) + a.mT.T)(q), np.cumsum(x, 0) + x)
    with pytest.raises(qb.UnsupportedOperationError, match="cumsum: out="):
        q.cumsum(out=q)


def test_make_jaxpr_shows_the_traced_program():
    jp = qb.make_jaxpr(lambda x, n: qb.sin(x) * n, static_argnums=1)(qb.ones(3, qb.float32), 2)
    assert "quabla.sin" in str(jp) and "func.func @main" in jp.text and "tensor<3xf32>" in jp.text
    assert jp.in_avals == [qb.ShapeDtype((3,), qb.float32)] and jp.out_avals == [qb.ShapeDtype((3,), qb.float32)]
    jp, shape = qb.make_jaxpr(lambda x: {"a": x, "s": x.sum()}, return_shape=True)(np.ones((2, 2)))
    assert shape == {"a": qb.ShapeDtype((2, 2), qb.float64), "s": qb.ShapeDtype((), qb.float64)}
    # The transforms are declarations in the traced program, expanded by the pipeline.
    jp = qb.make_jaxpr(qb.grad(lambda x: qb.sum(qb.exp(x))))(qb.ones(2))
    assert "quabla.transform" in jp.text and "quabla.transform" not in jp.optimized
    with pytest.raises(qb.UnsupportedOperationError):
        qb.make_jaxpr(qb.sin, axis_env=[("i", 2)])


def test_linear_transpose_matches_jax():
    def f(x, y):
        return {"u": 2.0 * x[::-1] + y.sum(0), "v": y.T @ np.array([1.0, -3.0]) - x}

    sx, sy = qb.ShapeDtype((3,), qb.float64), qb.ShapeDtype((2, 3), qb.float64)
    ct = {"u": np.array([1.0, -2.0, 0.5]), "v": np.array([3.0, 1.0, 2.0])}
    got = qb.linear_transpose(f, sx, sy)({k: qb.array(v) for k, v in ct.items()})
    want = jax.linear_transpose(f, jax.ShapeDtypeStruct((3,), jnp.float64), jax.ShapeDtypeStruct((2, 3), jnp.float64))(ct)
    assert_close(got, want)
    with pytest.raises(qb.UnsupportedOperationError, match="int32"):
        qb.linear_transpose(lambda i: i, qb.ShapeDtype((2,), qb.int32))


def test_custom_gradient_matches_jax():
    def make(m, custom_gradient):
        @custom_gradient
        def f(x, y):
            s = m.sin(x)
            return s * y, lambda g: (g * 10.0 * m.cos(x) * y, g * s)

        return f

    fq, fj = make(qb, qb.custom_gradient), make(jnp, jax.custom_gradient)
    x, y = np.array([0.3, 1.2]), np.array([2.0, -1.0])
    lq = lambda a, b: qb.sum(fq(a, b) ** 2)  # noqa: E731
    lj = lambda a, b: jnp.sum(fj(a, b) ** 2)  # noqa: E731
    assert_close(qb.grad(lq, argnums=(0, 1))(x, y), jax.grad(lj, argnums=(0, 1))(x, y))
    assert_close(qb.jit(qb.grad(lq))(x, y), jax.grad(lj)(x, y))
    assert_close(qb.vmap(qb.grad(lambda a, b: qb.sum(fq(a, b))))(x[:, None], y[:, None]), jax.vmap(jax.grad(lambda a, b: jnp.sum(fj(a, b))))(x[:, None], y[:, None]))
    assert_close(fq(x, y), fj(x, y))


def test_devices_processes_and_small_utilities():
    assert qb.device_count() == jax.device_count() and qb.local_device_count() == jax.local_device_count()
    assert (qb.process_index(), qb.process_count(), qb.default_backend()) == (0, 1, "cpu")
    got = qb.device_get({"w": qb.ones(2), "n": 3})
    assert isinstance(got["w"], np.ndarray) and got["n"] == 3
    assert qb.typeof(qb.ones((2, 3), qb.float32)) == qb.ShapeDtype((2, 3), qb.float32)
    assert qb.typeof(2.0) == qb.ShapeDtype((), qb.float64)

    @qb.jit
    def f(x):
        with qb.ensure_compile_time_eval():
            c = qb.ones(2) * 3.0  # concrete: computed while tracing
            assert isinstance(c, qb.Tensor)
        return x * c

    assert f(qb.ones(2)).tolist() == [3.0, 3.0]


def test_disable_jit_runs_op_by_op():
    seen = []

    @qb.jit
    def inner(x):
        seen.append(type(x).__name__)
        return x * 2

    f = qb.jit(lambda x: inner(x) + 1)
    x = qb.ones(2)
    assert f(x).tolist() == [3.0, 3.0] and seen == ["Tracer"]
    f(x)  # the fast path: no trace
    assert seen == ["Tracer"]
    with qb.disable_jit():
        assert f(x).tolist() == [3.0, 3.0]
        assert seen[1:] == ["Tensor"]  # concrete values inside
        # The transforms still trace (they transform programs).
        assert qb.grad(lambda v: qb.sum(inner(v)))(x).tolist() == [2.0, 2.0]
        with qb.disable_jit(False):
            f(x)
    assert seen[-1] == "Tracer"
    n = len(seen)
    assert f(x).tolist() == [3.0, 3.0] and len(seen) == n  # compiled again after the block
