"""qb.scan, qb.fori_loop, qb.while_loop in reverse mode and qb.dynamic_slice /
qb.dynamic_update_slice against JAX 0.10.2 (x64), in float64 within 1e-12 relative: values
(eager and jit), grad, jvp, second order (grad(grad), jvp(grad), hessian), vmap (per-example
xs, batched starts), pytree carries / xs / ys, reverse, length, unroll, nested loops, loops
inside vmap inside grad, closures over outer tracers, cond inside a scanned body, and the
typed errors (a dynamic trip count under grad, mismatched carries, bad lengths)."""

import types

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
import treecmp  # noqa: E402

TOL = 1e-12


def close(got, want, tol=TOL):
    treecmp.close(got, want, tol, check_dtype=True)


# Each program is written once against a namespace.
QB = types.SimpleNamespace(m=qb, scan=qb.scan, fori=qb.fori_loop, while_loop=qb.while_loop, cond=qb.cond, ds=qb.dynamic_slice, dus=qb.dynamic_update_slice, grad=qb.grad, jvp=qb.jvp, vmap=qb.vmap, hessian=qb.hessian, jit=qb.jit)
JX = types.SimpleNamespace(m=jnp, scan=jax.lax.scan, fori=jax.lax.fori_loop, while_loop=jax.lax.while_loop, cond=jax.lax.cond, ds=jax.lax.dynamic_slice, dus=jax.lax.dynamic_update_slice, grad=jax.grad, jvp=jax.jvp, vmap=jax.vmap, hessian=jax.hessian, jit=jax.jit)

RNG = np.random.default_rng(0)
XS = RNG.normal(size=(6, 3))
W = RNG.normal(size=(3, 3)) * 0.5
H0 = RNG.normal(size=(3,))


def arr(ns, x):
    return qb.array(x) if ns is QB else jnp.asarray(x)


def rnn_loss(ns, reverse=False, unroll=1):
    """A tanh RNN over xs with a pytree carry and pytree ys; loss of final carry and ys."""
    m = ns.m

    def loss(w, h0, xs):
        def cell(c, x):
            h, k = c["h"], c["k"]
            h2 = m.tanh(w @ h + x) * 0.9 + 0.1 * h
            return {"h": h2, "k": k + 1.0}, (m.sin(h2), m.sum(h2 * h2))

        c, (ys, s) = ns.scan(cell, {"h": h0, "k": arr(ns, 0.0)}, xs, reverse=reverse, unroll=unroll)
        return m.sum(c["h"] * c["h"]) + m.sum(ys * ys) * 0.5 + m.sum(s) + c["k"]

    return loss


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 4, True])
def test_scan_values_and_grad(reverse, unroll):
    q, j = rnn_loss(QB, reverse, unroll), rnn_loss(JX, reverse, unroll)
    args = (W, H0, XS)
    close(qb.jit(q)(*map(qb.array, args)), j(*args))
    close(qb.grad(q, argnums=(0, 1, 2))(*map(qb.array, args)), jax.grad(j, argnums=(0, 1, 2))(*args))


def test_scan_outputs_pytrees_eager_and_jit():
    def prog(ns):
        def f(c, x):
            a, b = x["a"], x["b"]
            return (c[0] + a * b, c[1] * 0.5 + a[0]), {"y": c[0] * a, "z": (b, c[1])}

        return lambda c0, c1, a, b: ns.scan(f, (c0, c1), {"a": a, "b": b})

    args = (H0, 0.3, XS, XS[::-1].copy())
    want = prog(JX)(*args)
    qargs = [qb.array(a) for a in args]
    close(prog(QB)(*qargs), want)  # eager: step by step
    close(qb.jit(prog(QB))(*qargs), want)


def test_scan_length_without_xs_and_none_ys():
    def prog(ns):
        return lambda x: ns.scan(lambda c, _: (ns.m.cos(c) * c + 0.1, None), x, None, length=7)

    close(qb.jit(prog(QB))(qb.array(0.4)), prog(JX)(0.4))
    close(qb.grad(lambda x: prog(QB)(x)[0])(qb.array(0.4)), jax.grad(lambda x: prog(JX)(x)[0])(0.4))
    c, ys = qb.scan(lambda c, _: (c + 1.0, c), qb.array(0.0), length=3)
    close((c, ys), (3.0, np.array([0.0, 1.0, 2.0])))


def test_scan_jvp_and_second_order():
    q, j = rnn_loss(QB), rnn_loss(JX)
    tw = RNG.normal(size=W.shape)
    close(qb.jvp(lambda w: q(w, qb.array(H0), qb.array(XS)), (qb.array(W),), (qb.array(tw),)), jax.jvp(lambda w: j(w, H0, XS), (W,), (tw,)))

    def small(ns):
        def f(x):
            c, ys = ns.scan(lambda c, xi: (ns.m.sin(c * xi) + c, c * c * xi), x, arr(ns, XS[:, 0]))
            return c + ns.m.sum(ys)

        return f

    gq, gj = qb.grad(small(QB)), jax.grad(small(JX))
    close(qb.grad(gq)(qb.array(0.3)), jax.grad(gj)(0.3))
    close(qb.jvp(gq, (qb.array(0.3),), (qb.array(1.0),)), jax.jvp(gj, (0.3,), (1.0,)))
    close(qb.hessian(lambda h: q(qb.array(W), h, qb.array(XS)))(qb.array(H0)), jax.hessian(lambda h: j(W, h, XS))(H0), 1e-11)


def test_scan_gradient_reads_the_products_residuals_from_the_forward_loop():
    # The backward loop reads what the body's products feed (here tanh's result) from stacks
    # the forward loop writes, instead of running the products again (rules/control.rs
    # loop_residuals): two products forward, three backward (dh, dWh, dWx), not seven. First and
    # second order against JAX.
    def prog(ns):
        def f(wh, wx, xs):
            def step(h, x):
                h = ns.m.tanh(h @ wh + x @ wx)
                return h, ns.m.sum(h * h)

            h, ys = ns.scan(step, arr(ns, np.zeros((2, 3))), xs)
            return ns.m.sum(ys) + ns.m.sum(ns.m.sin(h))

        return f

    wh, wx, xs = RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(4, 3)) * 0.5, RNG.normal(size=(5, 2, 4))
    q, j = prog(QB), prog(JX)
    args_q = (qb.array(wh), qb.array(wx), qb.array(xs))
    close(qb.jit(qb.grad(q, argnums=(0, 1, 2)))(*args_q), jax.grad(j, argnums=(0, 1, 2))(wh, wx, xs))
    text = qb.jit(qb.grad(q, argnums=(0, 1))).lower(*args_q).as_text(optimized=True)
    assert text.count("quabla.dot_general") == 5, text
    close(qb.hessian(q)(*args_q), jax.hessian(j)(wh, wx, xs), 1e-11)
    close(qb.grad(lambda wx: qb.grad(q, argnums=1)(args_q[0], wx, args_q[2]).sum())(args_q[1]), jax.grad(lambda wx: jax.grad(j, argnums=1)(wh, wx, xs).sum())(wx), 1e-11)


def test_recurrent_weight_gradients_are_one_product_of_stacked_steps():
    # The backward loop of an LSTM adds h_t^T dz_t into the gradient of its [H, 4H] weight at
    # each step; fold's accumulate.rs stacks h_t and dz_t instead and multiplies the stacks
    # once after the loop (contracting steps and batch). Against JAX to reassociation, first
    # and second order, and a fori_loop from 3 (the stack index (i - 3)) adding x_i^T y_i.
    def lstm(ns):
        m = ns.m

        def f(w, u, xs):
            def step(c, x):
                h, s = c
                z = x @ w + h @ u
                i, g, o = z[:, :8], z[:, 8:16], z[:, 16:]
                s = s * 0.5 + m.tanh(i) * m.tanh(g)
                h = m.tanh(o) * m.tanh(s)
                return (h, s), h

            _, hs = ns.scan(step, (arr(ns, np.zeros((4, 8))), arr(ns, np.zeros((4, 8)))), xs)
            return m.sum(hs * hs)

        return f

    w, u, xs = RNG.normal(size=(3, 24)) * 0.5, RNG.normal(size=(8, 24)) * 0.5, RNG.normal(size=(6, 4, 3))
    q, j = lstm(QB), lstm(JX)
    args_q = (qb.array(w), qb.array(u), qb.array(xs))
    close(qb.jit(qb.grad(q, argnums=(0, 1, 2)))(*args_q), jax.grad(j, argnums=(0, 1, 2))(w, u, xs), 1e-11)
    text = qb.jit(qb.grad(q, argnums=1)).lower(*args_q).as_text(optimized=True)
    after = text[text.rindex("scf.yield"):]
    assert "tensor<6x4x8xf64>, tensor<6x4x24xf64>) -> tensor<8x24xf64>" in after, text
    close(qb.grad(lambda u: qb.grad(q, argnums=1)(args_q[0], u, args_q[2]).sum())(args_q[1]), jax.grad(lambda u: jax.grad(j, argnums=1)(w, u, xs).sum())(u), 1e-10)

    def outer(ns):
        def f(x, y):
            return ns.fori(3, 9, lambda i, acc: acc + ns.m.tanh(x[i]).T @ (y[i] * i), ns.m.zeros((5, 6)))

        return f

    x, y = RNG.normal(size=(9, 2, 5)), RNG.normal(size=(9, 2, 6))
    close(qb.jit(outer(QB))(qb.array(x), qb.array(y)), outer(JX)(jnp.asarray(x), jnp.asarray(y)), 1e-12)
    text = qb.jit(outer(QB)).lower(qb.array(x), qb.array(y)).as_text(optimized=True)
    assert "(tensor<6x2x5xf64>, tensor<6x2x6xf64>) -> tensor<5x6xf64>" in text, text


@pytest.mark.parametrize("n", [300000, 100003])
def test_elementwise_loops_run_block_by_block(n):
    # Loops whose bodies are elementwise on their carries run block by block (row_blocks
    # loop_reads: each block of rows iterates in the caches). Newton's square root, a loop
    # reading its counter, a while_loop with a counter, an escape-time loop on a 2-D grid
    # (three carries, one counting), exact against NumPy's same float64 arithmetic; a prime
    # length (no block size divides it) and a body reading an iota (positions: not
    # row-local) keep the op-by-op loop, with the same numbers.
    a = np.abs(RNG.normal(size=n)) + 1.0
    newton = lambda ns: lambda a: ns.fori(0, 20, lambda i, x: (x + a / x) * 0.5, a)
    want = a.copy()
    for _ in range(20):
        want = (want + a / want) * 0.5
    np.testing.assert_array_equal(np.asarray(qb.jit(newton(QB))(qb.array(a))), want)
    counted = lambda ns: lambda x: ns.fori(2, 9, lambda i, c: c * 0.5 + ns.m.sin(c) * i, x)
    close(qb.jit(counted(QB))(qb.array(a)), counted(JX)(jnp.asarray(a)))
    wl = lambda ns: lambda x: ns.while_loop(lambda s: s[1] < 7, lambda s: (s[0] * s[0] * 0.25 + x, s[1] + 1), (x, 0))[0]
    close(qb.jit(wl(QB))(qb.array(a * 0.1)), wl(JX)(jnp.asarray(a * 0.1)))
    positions = lambda ns: lambda x: ns.fori(0, 3, lambda i, c: c + ns.m.arange(n) * 1e-6, x)
    close(qb.jit(positions(QB))(qb.array(a)), positions(JX)(jnp.asarray(a)))


def test_escape_time_loop_in_blocks_matches_numpy():
    g = np.linspace(-2.0, 1.0, 384)
    cr, ci = np.meshgrid(g, g * 1.2 + 0.3)

    def esc(ns):
        def f(cr, ci):
            def step(i, s):
                zr, zi, k = s
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                return zr, zi, k + ns.m.where(zr * zr + zi * zi < 4.0, 1.0, 0.0)

            return ns.fori(0, 30, step, (cr * 0.0, ci * 0.0, cr * 0.0))[2]

        return f

    with np.errstate(over="ignore", invalid="ignore"):
        want = esc(types.SimpleNamespace(m=np, fori=lambda lo, hi, body, s: [s := body(i, s) for i in range(lo, hi)][-1]))(cr, ci)
    np.testing.assert_array_equal(np.asarray(qb.jit(esc(QB))(qb.array(cr), qb.array(ci))), want)


def fori_prog(ns, unroll=None):
    def f(x, a):
        return ns.fori(1, 6, lambda i, c: c * a + ns.m.sin(c) * i, x, unroll=unroll)

    return f


@pytest.mark.parametrize("unroll", [None, 2, True])
def test_fori_loop_static_bounds_reverse_mode(unroll):
    q, j = fori_prog(QB, unroll), fori_prog(JX, unroll)
    x, a = np.array([0.2, -0.5]), 0.7
    close(qb.jit(q)(qb.array(x), qb.array(a)), j(x, a))
    g = lambda f: lambda x, a: f(x, a).sum()  # noqa: E731
    close(qb.grad(g(q), argnums=(0, 1))(qb.array(x), qb.array(a)), jax.grad(g(j), argnums=(0, 1))(x, a))
    close(qb.hessian(g(q))(qb.array(x), qb.array(a)), jax.hessian(g(j))(x, a))
    close(qb.grad(qb.grad(lambda a: g(q)(qb.array(x), a)))(qb.array(a)), jax.grad(jax.grad(lambda a: g(j)(x, a)))(a))


def test_fori_loop_int32_bounds_and_counter_dtype():
    out = qb.jit(lambda x: qb.fori_loop(qb.array(2, dtype=qb.int32), 5, lambda i, c: c + i.astype(qb.float64) * x, x))(qb.array(1.5))
    close(out, jax.lax.fori_loop(np.int32(2), 5, lambda i, c: c + i.astype(jnp.float64) * 1.5, 1.5))


def test_nested_loops_and_closures():
    def prog(ns):
        def f(w, xs):
            def outer(c, x):
                inner = ns.fori(0, 3, lambda i, h: ns.m.tanh(w * h + x), c)  # closes over w and x
                return inner, inner * w

            c, ys = ns.scan(outer, arr(ns, 0.1), xs)
            return c + ns.m.sum(ys)

        return f

    xs = XS[:, 1]
    close(qb.jit(prog(QB))(qb.array(0.8), qb.array(xs)), prog(JX)(0.8, xs))
    close(qb.grad(prog(QB), argnums=(0, 1))(qb.array(0.8), qb.array(xs)), jax.grad(prog(JX), argnums=(0, 1))(0.8, xs))
    close(qb.grad(qb.grad(prog(QB)))(qb.array(0.8), qb.array(xs)), jax.grad(jax.grad(prog(JX)))(0.8, xs))


def test_cond_inside_a_scanned_body():
    def prog(ns):
        def f(x, xs):
            return ns.scan(lambda c, v: (ns.cond(v > 0, lambda z: z * v, lambda z: ns.m.sin(z) - v, c), c), x, xs)[0]

        return f

    xs = XS[:, 2]
    close(qb.grad(prog(QB))(qb.array(0.5), qb.array(xs)), jax.grad(prog(JX))(0.5, xs))


def test_vmap_of_scan_and_loops_inside_vmap_inside_grad():
    q, j = rnn_loss(QB), rnn_loss(JX)
    xs_b = RNG.normal(size=(4, 6, 3))
    close(qb.vmap(q, in_axes=(None, None, 0))(qb.array(W), qb.array(H0), qb.array(xs_b)), jax.vmap(j, in_axes=(None, None, 0))(W, H0, xs_b))
    lq = lambda w: qb.vmap(lambda xs: q(w, qb.array(H0), xs))(qb.array(xs_b)).sum()  # noqa: E731
    lj = lambda w: jax.vmap(lambda xs: j(w, H0, xs))(xs_b).sum()  # noqa: E731
    close(qb.grad(lq)(qb.array(W)), jax.grad(lj)(W))
    # Per-example gradients (vmap of grad through a scan).
    close(qb.vmap(qb.grad(q), in_axes=(None, None, 0))(qb.array(W), qb.array(H0), qb.array(xs_b)), jax.vmap(jax.grad(j), in_axes=(None, None, 0))(W, H0, xs_b))


def test_dynamic_slice_and_update_slice():
    x = RNG.normal(size=(5, 4))
    u = RNG.normal(size=(2, 3))
    for s in [(1, 1), (4, 3), (-2, 7), (0, 0), (-7, -1)]:
        close(qb.dynamic_slice(qb.array(x), s, (2, 3)), jax.lax.dynamic_slice(x, s, (2, 3)))
        close(qb.dynamic_update_slice(qb.array(x), qb.array(u), s), jax.lax.dynamic_update_slice(x, u, s))
        if min(s) >= 0:
            close(qb.dynamic_slice(qb.array(x), s, (2, 3), allow_negative_indices=False), jax.lax.dynamic_slice(x, s, (2, 3), allow_negative_indices=False))
        close(qb.jit(lambda x, a, b: qb.dynamic_slice(x, (a, b), (2, 3)))(qb.array(x), qb.array(s[0]), qb.array(s[1])), jax.lax.dynamic_slice(x, s, (2, 3)))
        close(qb.jit(lambda x, u, a, b: qb.dynamic_update_slice(x, u, (a, b)))(qb.array(x), qb.array(u), qb.array(s[0]), qb.array(s[1])), jax.lax.dynamic_update_slice(x, u, s))

    def prog(ns):
        def f(x, u, i):
            y = ns.dus(x, u * u, (i, i + 1))
            return ns.m.sum(ns.m.sin(y) * ns.ds(y, (i, 0), (3, 4)).sum())

        return f

    for i in [0, 2, 9]:
        close(qb.jit(prog(QB))(qb.array(x), qb.array(u), qb.array(i)), prog(JX)(x, u, i))
        close(qb.grad(prog(QB), argnums=(0, 1))(qb.array(x), qb.array(u), qb.array(i)), jax.grad(prog(JX), argnums=(0, 1))(x, u, i))
    idx = np.array([0, 3, -1, 2])
    close(qb.vmap(prog(QB), in_axes=(None, None, 0))(qb.array(x), qb.array(u), qb.array(idx)), jax.vmap(prog(JX), in_axes=(None, None, 0))(x, u, idx))
    xb = RNG.normal(size=(4, 5, 4))
    close(qb.vmap(qb.grad(prog(QB)), in_axes=(0, None, 0))(qb.array(xb), qb.array(u), qb.array(idx)), jax.vmap(jax.grad(prog(JX)), in_axes=(0, None, 0))(xb, u, idx))


def buffer_loop(ns):
    """A fori_loop that rewrites row i of a carried buffer from its old row (read, then
    overwritten in place) and stacks a per-step output; differentiated w.r.t. the buffer
    itself, so the cotangent of the zeroed window flows back out of the loop."""
    m = ns.m

    def f(buf, v):
        def body(i, c):
            b, ys = c
            row = ns.ds(b, (i, 0), (1, buf.shape[1]))
            new = m.tanh(row * v + 0.1 * i)
            return ns.dus(b, new, (i, 0)), ns.dus(ys, m.sum(new * new, axis=1), (i,))

        b, ys = ns.fori(0, buf.shape[0], body, (buf, m.zeros(buf.shape[0])))
        return m.sum(b * b) + m.sum(ys * m.arange(buf.shape[0]))

    return f


def test_grad_of_a_loop_rewriting_a_carried_buffer_in_place():
    buf, v = RNG.normal(size=(40, 16)), RNG.normal(size=(16,))
    q, j = buffer_loop(QB), buffer_loop(JX)
    close(qb.jit(q)(qb.array(buf), qb.array(v)), j(buf, v))
    close(qb.jit(qb.grad(q, argnums=(0, 1)))(qb.array(buf), qb.array(v)), jax.grad(j, argnums=(0, 1))(buf, v))
    close(qb.jvp(qb.grad(q), (qb.array(buf), qb.array(v)), (qb.ones((40, 16)), qb.zeros(16))), jax.jvp(jax.grad(j), (buf, v), (np.ones((40, 16)), np.zeros(16))))


def test_dynamic_slice_errors():
    x = qb.zeros((3, 4))
    with pytest.raises(qb.ShapeError, match="slice_sizes"):
        qb.dynamic_slice(x, (0, 0), (4, 1))
    with pytest.raises(qb.ShapeError, match="one start index per dimension"):
        qb.dynamic_slice(x, (0,), (1, 1))
    with pytest.raises(qb.DTypeError, match="start index 1"):
        qb.dynamic_slice(x, (0, 1.5), (1, 1))
    with pytest.raises(qb.DTypeError, match="dtype"):
        qb.dynamic_update_slice(x, qb.zeros((1, 1), dtype=qb.float32), (0, 0))
    with pytest.raises(qb.ShapeError, match="fit"):
        qb.dynamic_update_slice(x, qb.zeros((4, 1)), (0, 0))


def test_reverse_mode_of_a_dynamic_trip_count_is_a_typed_error():
    def f(x, n):
        return qb.fori_loop(0, n, lambda i, c: c * x, x)

    with pytest.raises(qb.UnsupportedOperationError, match="static trip count"):
        qb.jit(qb.grad(f))(qb.array(0.5), qb.array(3))
    with pytest.raises(qb.UnsupportedOperationError, match="static trip count"):
        qb.grad(lambda x: qb.while_loop(lambda c: c < 10.0, lambda c: c * 2.0 + x, x))(qb.array(0.5))
    # Forward mode works on it, as in JAX.
    got = qb.jit(lambda x, n: qb.jvp(lambda x: f(x, n), (x,), (qb.array(1.0),)))(qb.array(0.5), qb.array(3))
    close(got, jax.jvp(lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * x, x), (0.5,), (1.0,)))
    with pytest.raises(ValueError, match="unroll"):
        qb.jit(lambda x, n: qb.fori_loop(0, n, lambda i, c: c * x, x, unroll=2))(qb.array(0.5), qb.array(3))


def test_scan_errors():
    with pytest.raises(qb.DTypeError, match="carry"):
        qb.jit(lambda x: qb.scan(lambda c, v: (c.astype(qb.float32), v), x, x)[0])(qb.zeros(3))
    with pytest.raises(qb.ShapeError, match="carry"):
        qb.jit(lambda x: qb.scan(lambda c, v: (qb.stack([c, c]), v), x[0], x)[0])(qb.zeros(3))
    with pytest.raises(qb.ShapeError, match="leading axes"):
        qb.scan(lambda c, v: (c, v), qb.array(0.0), (qb.zeros(3), qb.zeros(4)))
    with pytest.raises(qb.ShapeError, match="leading axes"):
        qb.scan(lambda c, v: (c, v), qb.array(0.0), qb.zeros(3), length=4)
    with pytest.raises(ValueError, match="xs or length"):
        qb.scan(lambda c, v: (c, v), qb.array(0.0))
    with pytest.raises(TypeError, match="pair"):
        qb.jit(lambda x: qb.scan(lambda c, v: c, x[0], x))(qb.zeros(3))
    with pytest.raises(ValueError, match="unroll"):
        qb.scan(lambda c, v: (c, v), qb.array(0.0), qb.zeros(3), unroll=0)
    # A zero-length scan without ys returns the carry; with ys it is a ShapeError (no zero-extent arrays).
    close(qb.jit(lambda x: qb.scan(lambda c, _: (c * 2.0, None), x, length=0)[0])(qb.array(1.5)), 1.5)
    with pytest.raises(qb.ShapeError, match="length 0"):
        qb.jit(lambda x: qb.scan(lambda c, _: (c, c), x, length=0))(qb.array(1.5))


def test_while_loop_with_a_counter_compiles_to_one_reverse_loop():
    # A hand-written counted while (counter from a constant, stepped by 1, bound constant) has a
    # static trip count, so reverse mode works through it even though it is a while_loop.
    def prog(ns):
        def f(x):
            return ns.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, ns.m.sin(c[1]) * x), (0, x))[1]

        return f

    close(qb.grad(prog(QB))(qb.array(0.9)), jax.grad(lambda x: jax.lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * x, x))(0.9))


def test_eager_fori_loop_passes_array_counters():
    seen = []

    def body(i, c):
        seen.append(type(i))
        return c + i.astype(qb.float64) * 0.5

    close(qb.fori_loop(1, 4, body, qb.array(0.0)), jax.lax.fori_loop(1, 4, lambda i, c: c + i * 0.5, 0.0))
    assert all(t is qb.Tensor for t in seen)


def _run_example(name, *args):
    import os
    import re
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([sys.executable, os.path.join(root, "examples", name), *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return [float(v) for v in re.findall(r"loss ([0-9.e+-]+)", r.stdout)], r.stdout


def test_examples_print_a_falling_loss():
    losses, out = _run_example("rk4.py", "--iters", "60")
    assert losses[-1] < 0.05 * losses[0], out
    losses, out = _run_example("rnn.py", "--steps", "120")
    assert losses[-1] < 0.5 * losses[0], out


def test_scan_closing_over_eager_arrays_and_jvp_of_grad_through_fori():
    wq, wj = qb.array(W), jnp.asarray(W)

    def prog(ns, w):
        def f(h0, xs):
            h, ys = ns.scan(lambda h, x: (ns.m.tanh(w @ h + x), ns.m.sum(h)), h0, xs)
            return ns.m.sum(h) + ns.m.sum(ys)

        return f

    close(qb.grad(prog(QB, wq), argnums=(0, 1))(qb.array(H0), qb.array(XS)), jax.grad(prog(JX, wj), argnums=(0, 1))(H0, XS))
    g = lambda ns: lambda a: ns.grad(lambda a: ns.fori(0, 5, lambda i, c: ns.m.sin(c) * a, a))(a)  # noqa: E731
    close(qb.jvp(g(QB), (qb.array(0.6),), (qb.array(1.0),)), jax.jvp(g(JX), (0.6,), (1.0,)))


def _affine(l, r):
    # The composition of two affine maps x -> a x + b: associative, not commutative.
    return (r[0] * l[0], r[0] * l[1] + r[1])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 100])
def test_associative_scan_matches_jax(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 3))
    for reverse in [False, True]:
        np.testing.assert_array_equal(np.asarray(qb.associative_scan(qb.add, x, reverse=reverse)), np.asarray(jax.lax.associative_scan(jnp.add, x, reverse=reverse)))
        a, b = rng.uniform(size=(4, n)), rng.standard_normal((4, n))
        got = qb.jit(lambda a, b: qb.associative_scan(_affine, (a, b), reverse=reverse, axis=1))(a, b)
        want = jax.lax.associative_scan(_affine, (a, b), reverse=reverse, axis=1)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


def test_associative_scan_gradient_vmap_and_errors():
    rng = np.random.default_rng(4)
    a, b = rng.uniform(size=37), rng.standard_normal(37)
    loss_q = lambda a, b: (qb.associative_scan(_affine, (a, b))[1] ** 2).sum()  # noqa: E731
    loss_j = lambda a, b: (jax.lax.associative_scan(_affine, (a, b))[1] ** 2).sum()  # noqa: E731
    for g, w in zip(qb.grad(loss_q, argnums=(0, 1))(a, b), jax.grad(loss_j, argnums=(0, 1))(a, b)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)
    xs = rng.standard_normal((3, 37))
    np.testing.assert_allclose(np.asarray(qb.vmap(lambda x: qb.associative_scan(qb.maximum, x))(xs)), np.maximum.accumulate(xs, axis=1))
    with pytest.raises(qb.ShapeError, match="associative_scan"):
        qb.associative_scan(qb.add, (np.ones(3), np.ones(4)))
    with pytest.raises(qb.ArgumentTypeError, match="associative_scan"):
        qb.associative_scan(3, np.ones(3))


def test_data_dependent_while_inside_scan_and_fori_loop():
    # A while_loop whose carry is the enclosing loop's carry (it used to fail to bufferize:
    # "scf.while op not bufferizable ... cannot avoid RaW conflict").
    import jax
    import jax.numpy as jnp

    def mk(lax, m):
        def f(y, ts):
            def step(c, tg):
                return lax.while_loop(lambda s: s[0] < tg, lambda s: (s[0] + 0.3, s[1] * 1.5 + m.sin(s[1])), c), c[1].sum()

            return lax.scan(step, (ts[0], y), ts[1:])

        def g(y):
            return lax.fori_loop(0, 3, lambda i, c: lax.while_loop(lambda s: s.sum() < 10.0 * (i + 1), lambda s: s * 1.7 + 0.1, c), y)

        return f, g

    (fq, gq), (fj, gj) = mk(qb.lax, qb), mk(jax.lax, jnp)
    y, ts = np.array([1.0, 0.5]), np.array([0.0, 1.0, 2.5, 3.0])
    got, want = qb.jit(fq)(y, ts), jax.jit(fj)(y, ts)
    for a, b in zip(qb.tree.leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(qb.jit(gq)(y)), np.asarray(jax.jit(gj)(y)), rtol=1e-13)


def test_carries_that_swap_or_rotate_compile_and_match_jax():
    # A counted loop whose next carry is another carry's state (`(a, b) -> (b, a + b)`) used to
    # fail to bufferize ("materialize_in_destination ... cannot avoid RaW conflict").
    import jax
    import jax.numpy as jnp

    def mk(lax):
        return [
            lambda b: lax.scan(lambda c, r: ((r + c[1], c[0]), None), (b[0] * 0.0, b[0] + 1.0), b)[0],
            lambda b: lax.fori_loop(0, 10, lambda i, c: (c[1], c[0] + c[1]), (b[0], b[1])),
            lambda b: lax.fori_loop(0, 5, lambda i, c: (c[1], c[2], c[0] * 2.0), (b[0], b[1], b[2])),
            lambda b: lax.while_loop(lambda c: c[2] < 7, lambda c: (c[1], c[0] - c[1], c[2] + 1), (b[0], b[1], 0)),
            lambda b: lax.scan(lambda c, r: ((c[1], c[0]), c[0] * r), (b[0], b[1]), b)[1],
        ]

    b = np.random.default_rng(0).standard_normal((6, 3))
    for fq, fj in zip(mk(qb.lax), mk(jax.lax)):
        want = jax.tree_util.tree_leaves(jax.jit(fj)(b))
        for got in (qb.jit(fq)(b), fq(b)):
            for a, w in zip(qb.tree.leaves(got), want):
                np.testing.assert_allclose(np.asarray(a), np.asarray(w), rtol=1e-13)
