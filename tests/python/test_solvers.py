"""quabla.experimental.ode.odeint, quabla.scipy.optimize (minimize, line_search),
quabla.scipy.sparse.linalg (cg, bicgstab, gmres) and quabla._solvers (custom_linear_solve,
custom_root) against JAX (x64): values, gradients (adjoint / implicit differentiation,
including arrays the functions close over), iteration counts, f32 in -> f32 out, typed
errors, and the modules' doctests."""

import doctest

import numpy as np
import pytest

import quabla as qb
import quabla.experimental.ode as qode
import quabla.scipy.optimize as qopt
import quabla.scipy.sparse.linalg as qsl
from quabla import _solvers
from quabla import errors as E
from breadth_util import assert_close

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.optimize as jopt  # noqa: E402
import jax.scipy.sparse.linalg as jsl  # noqa: E402
from jax.experimental.ode import odeint as jodeint  # noqa: E402

T = np.linspace(0.0, 1.5, 4)


def osc(y, t, w):
    xp = qb if isinstance(y, (qb.Tensor, qb.Tracer)) else jnp
    return xp.stack([y[1], -w * w * y[0] + 0.1 * xp.sin(t)])


# ---------------------------------------------------------------- odeint


def test_odeint_decay_eager_and_jit():
    f = lambda y, t: -0.7 * y  # noqa: E731
    want = jodeint(f, jnp.array([1.0, 2.0]), jnp.array(T))
    assert_close(qode.odeint(f, qb.array([1.0, 2.0]), qb.array(T)), want, 1e-12, 1e-13)
    got = qb.jit(lambda y, t: qode.odeint(f, y, t))(qb.array([1.0, 2.0]), qb.array(T))
    assert_close(got, want, 1e-12, 1e-13)
    assert_close(got[-1], np.exp(-0.7 * 1.5) * np.array([1.0, 2.0]), 1e-7, 1e-8)


def test_odeint_oscillator_grads():
    y0 = np.array([1.0, 0.3])

    def lq(y0, t, w):
        return qb.sum(qode.odeint(osc, y0, t, w) ** 2)

    def lj(y0, t, w):
        return jnp.sum(jodeint(osc, y0, t, w) ** 2)

    got = qb.grad(lq, argnums=(0, 1, 2))(qb.array(y0), qb.array(T), qb.array(1.3))
    want = jax.grad(lj, argnums=(0, 1, 2))(jnp.array(y0), jnp.array(T), 1.3)
    for g, w in zip(got, want):
        assert_close(g, w, 1e-9, 1e-10)
    assert_close(lq(qb.array(y0), qb.array(T), qb.array(1.3)), lj(y0, T, 1.3), 1e-12, 1e-12)


def test_odeint_neural_closure_and_pytree():
    W = np.array([[0.5, -1.0], [1.0, 0.2]])

    def lq(W, y0):
        return qb.sum(qode.odeint(lambda y, t: qb.tanh(W @ y), y0, qb.array(T[:3]))[-1] ** 2)

    def lj(W, y0):
        return jnp.sum(jodeint(lambda y, t: jnp.tanh(W @ y), y0, jnp.array(T[:3]))[-1] ** 2)

    got = qb.grad(lq, argnums=(0, 1))(qb.array(W), qb.array([1.0, 0.5]))
    want = jax.grad(lj, argnums=(0, 1))(jnp.array(W), jnp.array([1.0, 0.5]))
    for g, w in zip(got, want):
        assert_close(g, w, 1e-9, 1e-10)

    def fq(y, t, k):
        return {"a": -k * y["a"], "b": y["a"][0] - y["b"]}

    r = qode.odeint(fq, {"a": qb.array([1.0, 2.0]), "b": qb.array(0.5)}, qb.array(T), qb.array(0.7))
    rj = jodeint(fq, {"a": jnp.array([1.0, 2.0]), "b": jnp.array(0.5)}, jnp.array(T), 0.7)
    assert_close(r["a"], rj["a"], 1e-12, 1e-13)
    assert_close(r["b"], rj["b"], 1e-12, 1e-13)
    assert r["b"].shape == (4,)


def test_odeint_f32_and_errors():
    ys = qode.odeint(lambda y, t: -y, qb.array([1.0], dtype=qb.float32), qb.array([0.0, 1.0], dtype=qb.float32), rtol=1e-5, atol=1e-5)
    assert ys.dtype == qb.float32 and ys.shape == (2, 1)
    assert abs(ys[1, 0].item() - np.exp(-1.0)) < 1e-4
    with pytest.raises(E.DTypeError):
        qode.odeint(lambda y, t: -y, qb.array(1.0), qb.array([0, 1]))
    with pytest.raises(E.ShapeError):
        qode.odeint(lambda y, t: -y, qb.array(1.0), qb.array([[0.0, 1.0]]))
    with pytest.raises(E.ArgumentTypeError):
        qode.odeint("f", qb.array(1.0), qb.array([0.0, 1.0]))
    with pytest.raises(E.ArgumentTypeError):
        qode.odeint(lambda y, t, a: -y, qb.array(1.0), qb.array([0.0, 1.0]), "x")
    with pytest.raises(E.ArgumentTypeError):
        qode.odeint(lambda y, t: -y, None, qb.array([0.0, 1.0]))
    with pytest.raises(E.ShapeError):
        qode.odeint(lambda y, t: qb.stack([y, y]), qb.array(1.0), qb.array([0.0, 1.0]))


# ---------------------------------------------------------------- minimize


def rosen(x, xp=qb):
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("method", ["BFGS", "l-bfgs-experimental-do-not-rely-on-this"])
def test_minimize_rosenbrock(method):
    x0 = np.array([-1.2, 1.0, 0.5, 0.8])
    r = qopt.minimize(rosen, qb.array(x0), method=method)
    rj = jopt.minimize(lambda x: rosen(x, jnp), jnp.array(x0), method=method)
    assert_close(r.x, rj.x, 1e-9, 1e-9)
    assert_close(r.fun, rj.fun, 1e-9, 1e-12)
    for f in ("nit", "nfev", "njev", "status", "success"):
        assert getattr(r, f).item() == int(getattr(rj, f)), f
    if method == "BFGS":
        assert_close(r.hess_inv, rj.hess_inv, 1e-6, 1e-8)
    else:
        assert r.hess_inv is None


def test_minimize_quadratic_jit_and_line_search():
    A = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, 0.3], [0.1, 0.3, 1.0]])
    b = np.array([1.0, -2.0, 0.5])
    quad = lambda x, A, b: 0.5 * x @ A @ x - b @ x  # noqa: E731
    r = qb.jit(lambda x0, A, b: qopt.minimize(quad, x0, (A, b), method="BFGS", options={"gtol": 1e-8}))(qb.zeros(3), qb.array(A), qb.array(b))
    rj = jopt.minimize(quad, jnp.zeros(3), (jnp.array(A), jnp.array(b)), method="BFGS", options={"gtol": 1e-8})
    assert_close(r.x, np.linalg.solve(A, b), 1e-8, 1e-9)
    assert_close(r.x, rj.x, 1e-12, 1e-12)
    assert (r.nit.item(), r.nfev.item()) == (int(rj.nit), int(rj.nfev))
    x, p = np.array([1.0, -0.5, 2.0]), -np.array([1.0, 0.2, 0.4])
    ls = qb.jit(lambda x, p: qopt.line_search(lambda z: rosen(z), x, p))(qb.array(x), qb.array(p))
    from jax._src.scipy.optimize.line_search import line_search as jline_search

    lj = jline_search(lambda z: rosen(z, jnp), jnp.array(x), jnp.array(p))
    assert_close(ls.a_k, lj.a_k, 1e-12, 1e-12)
    assert (ls.nfev.item(), ls.failed.item()) == (int(lj.nfev), bool(lj.failed))
    r32 = qopt.minimize(lambda x: qb.sum((x - 1.0) ** 2), qb.zeros(2, dtype=qb.float32), method="BFGS")
    assert r32.x.dtype == qb.float32


def test_minimize_errors():
    with pytest.raises(E.InvalidArgumentError):
        qopt.minimize(rosen, qb.zeros(2), method="Nelder-Mead")
    with pytest.raises(E.ArgumentTypeError):
        qopt.minimize(rosen, qb.zeros(2), args=[1], method="BFGS")
    with pytest.raises(E.ShapeError):
        qopt.minimize(rosen, qb.zeros((2, 2)), method="BFGS")
    with pytest.raises(E.ArgumentTypeError):
        qopt.minimize(rosen, "x", method="BFGS")
    with pytest.raises(E.InvalidArgumentError):
        qopt.minimize(rosen, qb.zeros(2), method="BFGS", options={"bogus": 1})


# ---------------------------------------------------------------- sparse solvers

RNG = np.random.default_rng(0)
_B = RNG.normal(size=(5, 5))
SPD = _B @ _B.T + 5 * np.eye(5)
NS = _B + 4 * np.eye(5)
RHS = RNG.normal(size=5)


@pytest.mark.parametrize("name,A,kw,matrix,tree", [
    ("cg", SPD, {}, True, True), ("bicgstab", NS, {}, True, False),
    ("gmres", NS, {"solve_method": "batched"}, True, False), ("gmres", NS, {"solve_method": "incremental"}, False, True),
])
def test_sparse_values(name, A, kw, matrix, tree):
    if matrix:
        x, info = getattr(qsl, name)(qb.array(A), qb.array(RHS), **kw)
        xj, infoj = getattr(jsl, name)(jnp.array(A), jnp.array(RHS), **kw)
        assert_close(x, xj, 1e-10, 1e-12)
        assert_close(x, np.linalg.solve(A, RHS), 1e-4, 1e-5)
        assert (info is None) == (infoj is None)
    if not tree:
        return
    # a pytree right-hand side with a matvec function and a preconditioner
    Ad = np.diag(A).copy()
    mv = lambda t: {"u": t["u"] * 3.0, "v": A @ t["v"]}  # noqa: E731
    pre = lambda t: {"u": t["u"], "v": t["v"] / Ad}  # noqa: E731
    bt = {"u": qb.array([1.0, 2.0]), "v": qb.array(RHS)}
    xt, _ = getattr(qsl, name)(mv, bt, M=pre, **kw)
    mvj = lambda t: {"u": t["u"] * 3.0, "v": jnp.array(A) @ t["v"]}  # noqa: E731
    xtj, _ = getattr(jsl, name)(mvj, {"u": jnp.array([1.0, 2.0]), "v": jnp.array(RHS)}, M=pre, **kw)
    assert_close(xt["u"], xtj["u"], 1e-10, 1e-12)
    assert_close(xt["v"], xtj["v"], 1e-9, 1e-11)


@pytest.mark.parametrize("name,A,kw", [("cg", SPD, {}), ("bicgstab", NS, {})])
def test_sparse_grads(name, A, kw):
    def lq(A, b):
        return qb.sum(getattr(qsl, name)(lambda v: A @ v, b, **kw)[0] ** 2)

    def lj(A, b):
        return jnp.sum(getattr(jsl, name)(lambda v: A @ v, b, **kw)[0] ** 2)

    got = qb.grad(lq, argnums=(0, 1))(qb.array(A), qb.array(RHS))
    want = jax.grad(lj, argnums=(0, 1))(jnp.array(A), jnp.array(RHS))
    for g, w in zip(got, want):
        assert_close(g, w, 1e-8, 1e-10)


def test_sparse_errors():
    with pytest.raises(E.ShapeError):
        qsl.cg(qb.ones((2, 3)), qb.ones(2))
    with pytest.raises(E.ArgumentTypeError):
        qsl.cg("A", qb.ones(2))
    with pytest.raises(E.ShapeError):
        qsl.cg(qb.eye(2), qb.ones(2), x0=qb.ones(3))
    with pytest.raises(E.InvalidArgumentError):
        qsl.gmres(qb.eye(2), qb.ones(2), solve_method="bogus")
    with pytest.raises(E.DTypeError):
        qsl.bicgstab(qb.eye(2), qb.array([1, 2]))
    x, _ = qsl.cg(qb.eye(2, dtype=qb.float32), qb.ones(2, dtype=qb.float32))
    assert x.dtype == qb.float32


# ---------------------------------------------------------------- custom_linear_solve / custom_root


def test_custom_linear_solve_and_root():
    A = qb.array(NS)

    def lq(A, b):
        x = _solvers.custom_linear_solve(lambda v: A @ v, b, lambda mv, r: qb.linalg.solve(A, r), lambda vm, r: qb.linalg.solve(A.T, r))
        return qb.sum(qb.sin(x))

    def ld(A, b):
        return qb.sum(qb.sin(qb.linalg.solve(A, b)))

    for g, w in zip(qb.grad(lq, argnums=(0, 1))(A, qb.array(RHS)), qb.grad(ld, argnums=(0, 1))(A, qb.array(RHS))):
        assert_close(g, w, 1e-10, 1e-12)
    dA = qb.array(RNG.normal(size=(5, 5)))
    assert_close(qb.jvp(lq, (A, qb.array(RHS)), (dA, qb.zeros(5)))[1], qb.jvp(ld, (A, qb.array(RHS)), (dA, qb.zeros(5)))[1], 1e-10, 1e-12)

    def cube_root(a):
        solve = lambda f, x0: qb.lax.fori_loop(0, 40, lambda i, x: x - f(x) / (3.0 * x * x), x0)  # noqa: E731
        return _solvers.custom_root(lambda x: x ** 3 - a, qb.array(1.0), solve, lambda g, y: y / g(1.0))

    assert_close(cube_root(qb.array(8.0)), 2.0, 1e-12, 1e-12)
    assert_close(qb.grad(cube_root)(qb.array(8.0)), 1.0 / 12.0, 1e-12, 1e-12)
    assert_close(qb.jit(qb.grad(cube_root))(qb.array(27.0)), 1.0 / 27.0, 1e-12, 1e-12)
    with pytest.raises(E.ArgumentTypeError):
        _solvers.custom_linear_solve(None, qb.ones(2), lambda m, b: b)
    with pytest.raises(E.ShapeError):
        _solvers.custom_linear_solve(lambda v: v, qb.ones(2), lambda m, b: qb.ones(3))


def test_doctests(monkeypatch):
    monkeypatch.setattr(qb.lax, "custom_linear_solve", _solvers.custom_linear_solve, raising=False)
    monkeypatch.setattr(qb.lax, "custom_root", _solvers.custom_root, raising=False)
    import quabla.experimental
    import quabla.scipy.sparse

    mods = [_solvers, qode, quabla.experimental, qopt, qsl, quabla.scipy.sparse]
    tests = [t for m in mods for t in doctest.DocTestFinder().find(m) if t.examples]
    assert len(tests) >= 10
    for t in tests:
        t.globs = {"qb": qb, "round": round, "OptimizeResults": qopt.OptimizeResults}
        r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        r.run(t)
        assert r.failures == 0, t.name
