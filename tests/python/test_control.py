"""qb.cond and qb.stop_gradient against JAX 0.10.2 (x64), in float64 within 1e-12 relative:
values (jit and not), grad, jvp, grad(grad), jvp(grad), vmap with unbatched and batched
predicates, cond inside vmap inside grad, pytree operands and outputs, closures over outer
tracers and over eager arrays, nested conds, the eager (untraced) predicate, the typed error
for mismatched branches, stop_gradient inside grad, and the bool()/if error text."""

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from treecmp import close  # noqa: E402

TOL = 1e-12


# Each program is written once against a namespace: (numpy-like module, cond).
QB = (qb, qb.cond)
JX = (jnp, jax.lax.cond)


def scalar_prog(ns):
    m, cond = ns
    return lambda x: cond(x > 0.5, lambda y: m.sin(y) * y * y, lambda y: m.exp(y) - y * y * y, x)


def vector_prog(ns):
    """f(x, w): a cond on sum(x), a closure over w (an outer tracer), a nested cond."""
    m, cond = ns

    def f(x, w):
        def inner_true(z):
            return cond(m.max(z) > 1.0, lambda u: u * w, lambda u: m.tanh(u) + w, z)

        return m.sum(cond(m.sum(x) > 0.0, inner_true, lambda z: z * z * w, x) ** 2)

    return f


POINTS = [0.9, -0.3, 2.0]
VPOINTS = [np.array([0.5, 1.5, -0.2]), np.array([0.1, 0.2, 0.3]), np.array([-1.0, 0.4, -0.7])]
W = np.array([0.3, -1.2, 0.8])


@pytest.mark.parametrize("x", POINTS)
def test_values_grad_jvp_second_order(x):
    f, g = scalar_prog(QB), scalar_prog(JX)
    xq, xj = qb.array(x), jnp.asarray(x)
    close(f(xq), g(xj))
    close(qb.jit(f)(xq), g(xj))
    close(qb.grad(f)(xq), jax.grad(g)(xj))
    close(qb.jvp(f, (xq,), (qb.array(0.7),)), jax.jvp(g, (xj,), (jnp.asarray(0.7),)))
    close(qb.grad(qb.grad(f))(xq), jax.grad(jax.grad(g))(xj))
    close(qb.jvp(qb.grad(f), (xq,), (qb.array(1.0),)), jax.jvp(jax.grad(g), (xj,), (jnp.asarray(1.0),)))
    close(qb.jit(qb.grad(qb.grad(f)))(xq), jax.grad(jax.grad(g))(xj))


@pytest.mark.parametrize("x", VPOINTS, ids=["nested-true", "nested-false", "outer-false"])
def test_closures_and_nested_conds(x):
    f, g = vector_prog(QB), vector_prog(JX)
    args_q, args_j = (qb.array(x), qb.array(W)), (jnp.asarray(x), jnp.asarray(W))
    close(qb.jit(f)(*args_q), g(*args_j))
    close(qb.grad(f, argnums=(0, 1))(*args_q), jax.grad(g, argnums=(0, 1))(*args_j))
    close(qb.hessian(f)(*args_q), jax.hessian(g)(*args_j))


def test_vmap_unbatched_and_batched_predicates():
    def prog(ns):
        m, cond = ns

        def f(p, x):
            return cond(p, lambda y: m.sin(y) * 2.0, lambda y: y * y, x)

        return f

    f, g = prog(QB), prog(JX)
    xs = np.array([[0.1, 0.2], [1.5, -0.5], [-2.0, 3.0]])
    ps = np.array([True, False, True])
    # Unbatched predicate, batched operand.
    for p in (True, False):
        close(qb.vmap(f, in_axes=(None, 0))(qb.array(p), qb.array(xs)), jax.vmap(g, in_axes=(None, 0))(jnp.asarray(p), jnp.asarray(xs)))
    # Batched predicate (both branches and a select), batched and unbatched operands.
    close(qb.vmap(f)(qb.array(ps), qb.array(xs)), jax.vmap(g)(jnp.asarray(ps), jnp.asarray(xs)))
    close(qb.vmap(f, in_axes=(0, None))(qb.array(ps), qb.array(xs[0])), jax.vmap(g, in_axes=(0, None))(jnp.asarray(ps), jnp.asarray(xs[0])))
    # A predicate computed from the batched operand, under jit.
    h = lambda x: f(qb.sum(x) > 0.0, x)  # noqa: E731
    hj = lambda x: g(jnp.sum(x) > 0.0, x)  # noqa: E731
    close(qb.jit(qb.vmap(h))(qb.array(xs)), jax.vmap(hj)(jnp.asarray(xs)))


def test_cond_inside_vmap_inside_grad():
    def prog(ns):
        m, cond = ns

        def loss(w, xs):
            per = lambda x: cond(m.sum(x * w) > 0.0, lambda z: m.sum(m.sin(z * w)), lambda z: m.sum(z * w) ** 2, x)  # noqa: E731
            vm = qb.vmap(per) if m is qb else jax.vmap(per)
            return m.sum(vm(xs))

        return loss

    f, g = prog(QB), prog(JX)
    xs = np.array([[0.1, 0.2, 0.3], [1.5, -0.5, 0.2], [-2.0, 3.0, -1.0], [-0.3, -0.1, -0.2]])
    close(qb.grad(f)(qb.array(W), qb.array(xs)), jax.grad(g)(jnp.asarray(W), jnp.asarray(xs)))
    close(qb.jit(qb.grad(f))(qb.array(W), qb.array(xs)), jax.grad(g)(jnp.asarray(W), jnp.asarray(xs)))


def test_pytree_operands_and_outputs():
    def prog(ns):
        m, cond = ns

        def f(params, x):
            def t(ps, y):
                return {"out": ps["a"] * y, "aux": (m.sum(ps["b"]), y + 1.0)}

            def e(ps, y):
                return {"out": ps["a"] - y, "aux": (m.sum(ps["b"] * ps["b"]), y * 3.0)}

            r = cond(x > 0.0, t, e, params, x)
            return r["out"] + r["aux"][0] * r["aux"][1]

        return f

    f, g = prog(QB), prog(JX)
    for x in (0.5, -0.5):
        pq = {"a": qb.array(1.5), "b": qb.array([0.2, -0.4])}
        pj = {"a": jnp.asarray(1.5), "b": jnp.asarray([0.2, -0.4])}
        close(qb.jit(f)(pq, qb.array(x)), g(pj, jnp.asarray(x)))
        close(qb.grad(f)(pq, qb.array(x)), jax.grad(g)(pj, jnp.asarray(x)))


def test_closure_over_an_eager_array_and_integer_outputs():
    c = qb.array([2.0, -1.0])
    cj = jnp.asarray([2.0, -1.0])

    def f(x):
        v, n = qb.cond(x[0] > 0.0, lambda y: (y * c, qb.array(1)), lambda y: (y + c, qb.array(2)), x)
        return qb.sum(v) * n.astype(qb.float64)

    def g(x):
        v, n = jax.lax.cond(x[0] > 0.0, lambda y: (y * cj, jnp.asarray(1)), lambda y: (y + cj, jnp.asarray(2)), x)
        return jnp.sum(v) * n.astype(jnp.float64)

    for x in ([0.5, 1.0], [-0.5, 1.0]):
        close(qb.jit(f)(qb.array(x)), g(jnp.asarray(x)))
        close(qb.grad(f)(qb.array(x)), jax.grad(g)(jnp.asarray(x)))


def test_eager_predicate_calls_only_the_chosen_branch():
    calls = []

    def t(x):
        calls.append("t")
        return x * 2.0

    def e(x):
        calls.append("e")
        return x - 1.0

    assert qb.cond(True, t, e, qb.array(3.0)).item() == 6.0
    assert qb.cond(qb.array(0), t, e, qb.array(3.0)).item() == 2.0
    assert calls == ["t", "e"]
    # Inside a trace both branches are traced, even with a concrete predicate.
    calls.clear()
    assert qb.jit(lambda x: qb.cond(True, t, e, x))(qb.array(3.0)).item() == 6.0
    assert sorted(calls) == ["e", "t"]


def test_mismatched_branches_raise_typed_errors_naming_both_signatures():
    f = qb.jit(lambda x: qb.cond(x > 0.0, lambda y: y, lambda y: qb.astype(y, qb.float32), x))
    with pytest.raises(qb.DTypeError) as e:
        f(qb.array(1.0))
    assert isinstance(e.value, (TypeError, qb.QuablaError))
    assert "true_fun returns" in str(e.value) and "float64" in str(e.value) and "float32" in str(e.value)
    g = qb.jit(lambda x: qb.cond(x[0] > 0.0, lambda y: y, lambda y: y[:1], x))
    with pytest.raises(qb.ShapeError) as e:
        g(qb.array([1.0, 2.0]))
    assert "[2]" in str(e.value) and "[1]" in str(e.value)
    h = qb.jit(lambda x: qb.cond(x > 0.0, lambda y: (y, y), lambda y: y, x))
    with pytest.raises(qb.DTypeError, match="false_fun returns"):
        h(qb.array(1.0))
    with pytest.raises(qb.ShapeError, match="scalar"):
        qb.jit(lambda x: qb.cond(x > 0.0, lambda y: y, lambda y: y, x))(qb.array([1.0, 2.0]))


def test_traced_if_points_to_cond_and_where():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(qb.TracerError) as e:
        qb.jit(f)(qb.array(1.0))
    assert "qb.cond" in str(e.value) and "qb.where" in str(e.value)


def test_stop_gradient():
    def prog(m, sg):
        return lambda x: m.sum(x * sg(x) + m.sin(sg(x * 2.0)) * x)

    f, g = prog(qb, qb.stop_gradient), prog(jnp, jax.lax.stop_gradient)
    x = np.array([0.3, -1.1, 2.0])
    close(qb.grad(f)(qb.array(x)), jax.grad(g)(jnp.asarray(x)))
    close(qb.jit(qb.grad(f))(qb.array(x)), jax.grad(g)(jnp.asarray(x)))
    close(qb.grad(qb.grad(lambda y: y**3 * qb.stop_gradient(y)))(qb.array(0.7)), jax.grad(jax.grad(lambda y: y**3 * jax.lax.stop_gradient(y)))(jnp.asarray(0.7)))
    close(qb.jvp(f, (qb.array(x),), (qb.array(np.ones(3)),)), jax.jvp(g, (jnp.asarray(x),), (jnp.ones(3),)))
    # Pytrees, eager values, and under vmap.
    tree = qb.stop_gradient({"a": qb.array(1.0), "b": (qb.array([2.0, 3.0]),)})
    assert tree["a"].item() == 1.0 and tree["b"][0].tolist() == [2.0, 3.0]
    close(qb.vmap(qb.grad(lambda y: y * qb.stop_gradient(y) ** 2))(qb.array(x)), jax.vmap(jax.grad(lambda y: y * jax.lax.stop_gradient(y) ** 2))(jnp.asarray(x)))


def switch_prog(ns):
    m, switch = ns
    branches = [lambda x, w: m.sin(x) * w, lambda x, w: x * x - w, lambda x, w: m.exp(x * w)]
    return lambda i, x, w: m.sum(switch(i, branches, x, w))


QS = (qb, qb.switch)
JS = (jnp, jax.lax.switch)


@pytest.mark.parametrize("i", [-1, 0, 1, 2, 5])
def test_switch_values_grad_second_order(i):
    f, g = switch_prog(QS), switch_prog(JS)
    x, w = np.array([0.3, -0.8]), 1.7
    iq, ij = qb.array(i, dtype=qb.int32), jnp.asarray(i, dtype=jnp.int32)
    close(qb.jit(f)(iq, qb.array(x), qb.array(w)), g(ij, jnp.asarray(x), jnp.asarray(w)))
    close(f(iq, qb.array(x), qb.array(w)), g(ij, jnp.asarray(x), jnp.asarray(w)))
    close(qb.grad(f, argnums=(1, 2))(iq, qb.array(x), qb.array(w)), jax.grad(g, argnums=(1, 2))(ij, jnp.asarray(x), jnp.asarray(w)))
    close(qb.hessian(f, argnums=1)(iq, qb.array(x), qb.array(w)), jax.hessian(g, argnums=1)(ij, jnp.asarray(x), jnp.asarray(w)))


def test_switch_vmap_batched_index_and_errors():
    f, g = switch_prog(QS), switch_prog(JS)
    idx = np.array([0, 2, 1, 7, -3], dtype=np.int32)
    xs = np.linspace(-1.0, 1.0, 10).reshape(5, 2)
    close(qb.vmap(f, in_axes=(0, 0, None))(qb.array(idx), qb.array(xs), qb.array(0.5)), jax.vmap(g, in_axes=(0, 0, None))(jnp.asarray(idx), jnp.asarray(xs), jnp.asarray(0.5)))
    close(
        qb.vmap(qb.grad(f, argnums=1), in_axes=(0, 0, None))(qb.array(idx), qb.array(xs), qb.array(0.5)),
        jax.vmap(jax.grad(g, argnums=1), in_axes=(0, 0, None))(jnp.asarray(idx), jnp.asarray(xs), jnp.asarray(0.5)),
    )
    bad = qb.jit(lambda i, x: qb.switch(i, [lambda y: y, lambda y: y, lambda y: qb.sum(y)], x))
    with pytest.raises(qb.ShapeError, match=r"branches\[1\] returns .*branches\[2:\]|branches\[0\] returns"):
        bad(qb.array(0), qb.array([1.0, 2.0]))
    with pytest.raises(qb.DTypeError, match="integer"):
        qb.switch(qb.array(1.0), [lambda y: y, lambda y: y], qb.array(1.0))
    calls = []
    qb.switch(1, [lambda y: calls.append(0) or y, lambda y: calls.append(1) or y], qb.array(1.0))
    assert calls == [1]


def test_transforms_inside_branches_and_closure_only_branches():
    f = lambda x: qb.cond(x > 0, lambda y: qb.grad(lambda z: qb.sin(z) * z)(y), lambda y: y, x)  # noqa: E731
    g = lambda x: jax.lax.cond(x > 0, lambda y: jax.grad(lambda z: jnp.sin(z) * z)(y), lambda y: y, x)  # noqa: E731
    for x in (0.7, -0.7):
        close(qb.grad(f)(qb.array(x)), jax.grad(g)(jnp.asarray(x)))
    h = lambda x: qb.cond(x > 0, lambda: x * 2.0, lambda: x * x)  # noqa: E731
    hj = lambda x: jax.lax.cond(x > 0, lambda: x * 2.0, lambda: x * x)  # noqa: E731
    close(qb.vmap(qb.grad(h))(qb.array([1.0, -2.0])), jax.vmap(jax.grad(hj))(jnp.asarray([1.0, -2.0])))

    # A closure over a tracer two traces out (jit > vmap > grad > cond).
    def outer(ns, w):
        m, cond = ns
        vm, gr = (qb.vmap, qb.grad) if m is qb else (jax.vmap, jax.grad)
        return m.sum(vm(lambda x: gr(lambda z: cond(z > 0, lambda u: u * w, lambda u: u * u * w, z))(x))(m.asarray([1.0, -1.0])) ** 2)

    close(qb.jit(lambda w: outer(QB, w))(qb.array(3.0)), outer(JX, jnp.asarray(3.0)))
    close(qb.grad(lambda w: outer(QB, w))(qb.array(3.0)), jax.grad(lambda w: outer(JX, w))(jnp.asarray(3.0)))


# ---------------------------------------------------------------------------------------------
# while_loop / fori_loop


def _newton_sqrt(lib, x):
    # Newton's iteration for sqrt(x) until the step is small, counting the steps.
    def cond(c):
        return lib.abs(c[1] * c[1] - x) > 1e-12

    def body(c):
        return (c[0] + 1, 0.5 * (c[1] + x / c[1]))

    return lib_while(lib)(cond, body, (0, x + 1.0))


def lib_while(lib):
    return qb.while_loop if lib is qb else jax.lax.while_loop


@pytest.mark.parametrize("jit", [False, True])
def test_while_loop_values(jit):
    f = lambda x: _newton_sqrt(qb, x)
    g = lambda x: _newton_sqrt(jnp, x)
    if jit:
        f = qb.jit(f)
    n, r = f(qb.array(2.0))
    nj, rj = g(jnp.asarray(2.0))
    assert int(n) == int(nj) and abs(float(r) - float(rj)) < 1e-14


def test_while_loop_jvp_and_closure():
    # The body closes over an outer tracer (a); forward mode through the loop.
    def f(a, x):
        return lib_while(qb)(lambda c: c[0] < 6, lambda c: (c[0] + 1, qb.sin(c[1]) * a + 0.5 * c[1]), (0, x))[1]

    def fj(a, x):
        return jax.lax.while_loop(lambda c: c[0] < 6, lambda c: (c[0] + 1, jnp.sin(c[1]) * a + 0.5 * c[1]), (0, x))[1]

    a, x = 1.3, np.array([0.2, -0.7])
    y, t = qb.jvp(f, (qb.array(a), qb.array(x)), (qb.array(0.5), qb.array(np.array([1.0, -2.0]))))
    yj, tj = jax.jvp(fj, (jnp.asarray(a), jnp.asarray(x)), (jnp.asarray(0.5), jnp.asarray(np.array([1.0, -2.0]))))
    np.testing.assert_allclose(np.asarray(y), np.asarray(yj), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(t), np.asarray(tj), rtol=1e-12, atol=1e-13)
    yjit = qb.jit(f)(qb.array(a), qb.array(x))
    np.testing.assert_allclose(np.asarray(yjit), np.asarray(yj), rtol=1e-12, atol=1e-13)


def test_fori_loop_matches_jax():
    def f(x):
        return qb.fori_loop(0, 10, lambda i, v: v * 0.9 + qb.astype(i, qb.float64) * 0.01, x)

    def fj(x):
        return jax.lax.fori_loop(0, 10, lambda i, v: v * 0.9 + i.astype(jnp.float64) * 0.01, x)

    x = np.array([1.0, 2.0, -3.0])
    np.testing.assert_allclose(np.asarray(qb.jit(f)(qb.array(x))), np.asarray(fj(jnp.asarray(x))), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(f(qb.array(x))), np.asarray(fj(jnp.asarray(x))), rtol=1e-13)  # eager
    # Forward mode through a fori_loop inside jit.
    t = qb.jit(lambda x: qb.jvp(f, (x,), (qb.ones_like(x),))[1])(qb.array(x))
    tj = jax.jvp(fj, (jnp.asarray(x),), (jnp.ones(3),))[1]
    np.testing.assert_allclose(np.asarray(t), np.asarray(tj), rtol=1e-13)


def test_while_loop_errors():
    with pytest.raises(qb.DTypeError, match="body_fun must return the structure, shapes and dtypes of init_val"):
        qb.jit(lambda x: qb.while_loop(lambda v: v < 3.0, lambda v: qb.astype(v, qb.float32), x))(qb.array(1.0))
    with pytest.raises(qb.ShapeError, match="body_fun must return"):
        qb.jit(lambda x: qb.while_loop(lambda v: qb.sum(v) < 3.0, lambda v: qb.concatenate([v, v]), x))(qb.ones(2))
    with pytest.raises(qb.DTypeError, match="cond_fun must return a scalar boolean"):
        qb.jit(lambda x: qb.while_loop(lambda v: v, lambda v: v + 1.0, x))(qb.ones(2))
    with pytest.raises(qb.UnsupportedOperationError, match="while"):
        qb.grad(lambda x: qb.while_loop(lambda v: v < 3.0, lambda v: v * 2.0, x))(qb.array(1.0))
    with pytest.raises(qb.DTypeError, match="fori_loop: lower and upper must be integer scalars"):
        qb.fori_loop(0.0, 3, lambda i, v: v, qb.array(1.0))


def test_while_loop_vmap_matches_jax():
    # Batched trip counts (a batched predicate) and batched values, inside jit.
    def f(n, x):
        return qb.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, qb.sin(c[1]) + c[1]), (0, x))[1]

    def fj(n, x):
        return jax.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.sin(c[1]) + c[1]), (0, x))[1]

    ns, xs = np.array([0, 3, 1, 5]), np.linspace(-1.0, 1.0, 8).reshape(4, 2)
    got = qb.jit(qb.vmap(f))(qb.array(ns), qb.array(xs))
    want = jax.vmap(fj)(jnp.asarray(ns), jnp.asarray(xs))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-13, atol=1e-14)
    got = qb.vmap(f, in_axes=(None, 0))(qb.array(3), qb.array(xs))
    want = jax.vmap(fj, in_axes=(None, 0))(jnp.asarray(3), jnp.asarray(xs))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-13, atol=1e-14)
