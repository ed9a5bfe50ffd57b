"""qb.switch as one ``quabla.case`` op, against JAX 0.10.2 (x64) in float64 within 1e-12
relative: the traced program holds one case (not nested ifs) with every branch, values for
in-range and clamped indices (int32 and int64, jit and eager), jvp, grad, hessian, vmap with
an unbatched index over batched operands and with a batched index, switch inside vmap inside
grad, pytree operands/outputs, closures over outer tracers and eager arrays per branch, the
linalg lowering (scf.index_switch) and the constant-index fold."""

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from treecmp import close  # noqa: E402

TOL = 1e-12


EAGER_W = np.array([0.25, -0.5])


def prog(m, switch, eager_w):
    """f(i, x, w): four branches, each with its own closures (w an outer tracer, an eager
    array), a pytree operand and a pytree result."""

    def f(i, x, w):
        branches = [
            lambda p: {"a": m.sin(p[0]) * w, "b": p[1] * p[1]},
            lambda p: {"a": p[0] * p[0] * p[1], "b": m.exp(p[1]) * w},
            lambda p: {"a": m.tanh(p[0]) + eager_w, "b": p[1] * w * w},
            lambda p: {"a": p[0] * eager_w * w, "b": m.log1p(p[1] * p[1])},
        ]
        out = switch(i, branches, (x, m.sum(x)))
        return m.sum(out["a"] ** 2) + out["b"]

    return f


QF = prog(qb, qb.switch, qb.array(EAGER_W))
JF = prog(jnp, jax.lax.switch, jnp.asarray(EAGER_W))
X = np.array([0.3, -0.8])
WV = 1.3


@pytest.mark.parametrize("i", [0, 1, 2, 3, 4, -2, 100])
@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_values_and_derivatives(i, dt):
    q = (qb.array(i, dtype=getattr(qb, dt)), qb.array(X), qb.array(WV))
    j = (jnp.asarray(i, dtype=getattr(jnp, dt)), jnp.asarray(X), jnp.asarray(WV))
    close(qb.jit(QF)(*q), JF(*j))
    close(QF(*q), JF(*j))
    close(qb.grad(QF, argnums=(1, 2))(*q), jax.grad(JF, argnums=(1, 2))(*j))
    close(qb.jit(qb.grad(QF, argnums=(1, 2)))(*q), jax.grad(JF, argnums=(1, 2))(*j))
    tx = np.array([0.7, -0.1])
    close(qb.jvp(lambda x: QF(q[0], x, q[2]), (q[1],), (qb.array(tx),)), jax.jvp(lambda x: JF(j[0], x, j[2]), (j[1],), (jnp.asarray(tx),)))
    close(qb.hessian(QF, argnums=1)(*q), jax.hessian(JF, argnums=1)(*j))


def test_one_case_op_in_the_program():
    text = qb.jit(QF).lower(qb.array(1, dtype=qb.int32), qb.array(X), qb.array(WV)).as_text()
    assert text.count("scf.index_switch") == 1, text
    assert "scf.if" not in text
    for k in range(3):
        assert f"case {k} {{" in text
    assert "default {" in text


def test_vmap_unbatched_and_batched_index():
    xs = np.linspace(-1.0, 1.0, 10).reshape(5, 2)
    ws = np.linspace(0.5, 1.5, 5)
    # Unbatched index, batched operands and closure.
    for i in (0, 3):
        close(
            qb.vmap(QF, in_axes=(None, 0, 0))(qb.array(i, dtype=qb.int32), qb.array(xs), qb.array(ws)),
            jax.vmap(JF, in_axes=(None, 0, 0))(jnp.asarray(i, dtype=jnp.int32), jnp.asarray(xs), jnp.asarray(ws)),
        )
    idx = np.array([0, 3, 1, 9, -4], dtype=np.int32)
    close(
        qb.vmap(QF, in_axes=(0, 0, None))(qb.array(idx), qb.array(xs), qb.array(WV)),
        jax.vmap(JF, in_axes=(0, 0, None))(jnp.asarray(idx), jnp.asarray(xs), jnp.asarray(WV)),
    )
    close(
        qb.jit(qb.vmap(QF, in_axes=(0, 0, 0)))(qb.array(idx), qb.array(xs), qb.array(ws)),
        jax.vmap(JF, in_axes=(0, 0, 0))(jnp.asarray(idx), jnp.asarray(xs), jnp.asarray(ws)),
    )


def test_switch_inside_vmap_inside_grad():
    idx = np.array([2, 0, 1, 3], dtype=np.int64)
    xs = np.linspace(-0.9, 0.7, 8).reshape(4, 2)

    def qloss(w):
        return qb.sum(qb.vmap(QF, in_axes=(0, 0, None))(qb.array(idx), qb.array(xs), w))

    def jloss(w):
        return jnp.sum(jax.vmap(JF, in_axes=(0, 0, None))(jnp.asarray(idx), jnp.asarray(xs), w))

    close(qb.grad(qloss)(qb.array(WV)), jax.grad(jloss)(jnp.asarray(WV)))
    close(qb.jit(qb.grad(qb.grad(qloss)))(qb.array(WV)), jax.grad(jax.grad(jloss))(jnp.asarray(WV)))
    # vmap of grad (the case's VJP batched).
    close(
        qb.vmap(qb.grad(QF, argnums=1), in_axes=(0, 0, None))(qb.array(idx), qb.array(xs), qb.array(WV)),
        jax.vmap(jax.grad(JF, argnums=1), in_axes=(0, 0, None))(jnp.asarray(idx), jnp.asarray(xs), jnp.asarray(WV)),
    )


def test_mismatched_branches_name_both_signatures():
    f = qb.jit(lambda i, x: qb.switch(i, [lambda y: y, lambda y: y * 2.0, lambda y: qb.sum(y)], x))
    with pytest.raises(qb.ShapeError, match=r"branches\[0\] returns .*branches\[2\] returns"):
        f(qb.array(0), qb.array([1.0, 2.0]))
    g = qb.jit(lambda i, x: qb.switch(i, [lambda y: y, lambda y: y > 0.0], x))
    with pytest.raises(qb.DTypeError, match=r"branches\[1\] returns"):
        g(qb.array(0), qb.array([1.0, 2.0]))


def test_constant_index_folds_to_the_branch():
    f = qb.jit(lambda x: qb.switch(7, [lambda y: y + 1.0, lambda y: y * 3.0], x))
    assert float(f(qb.array(2.0))) == 6.0
    text = qb.jit(lambda x: qb.switch(1, [lambda y: y + 1.0, lambda y: y * 3.0], x)).lower(qb.array(2.0)).as_text(optimized=True)
    assert "index_switch" not in text, text


def test_traced_if_while_bool_errors_point_to_control_flow():
    def with_if(x):
        if x > 0:
            return x
        return -x

    def with_while(x):
        while x < 10.0:
            x = x * 2.0
        return x

    for f in (with_if, with_while, lambda x: bool(x)):
        with pytest.raises(qb.TracerError) as e:
            qb.jit(f)(qb.array(1.0))
        msg = str(e.value)
        for name in ("qb.cond(pred, true_fun, false_fun", "qb.while_loop(cond_fun, body_fun, init_val)", "qb.where(condition, x, y)"):
            assert name in msg, msg
        assert "`if` or `while`" in msg
