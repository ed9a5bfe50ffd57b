"""Transform parity with JAX 0.10.2 (x64): jit(static_argnames=) with JAX's inference between
static_argnums and static_argnames, has_aux on jacobian/jacfwd/jacrev/hessian/jvp, forced
directions, linearize, allow_int, qb.test_util.check_grads, the qb.Array ABC and
qb.typing; misuse of every new entry point; the docstring examples of quabla.test_util and
quabla.typing."""

import builtins
import doctest
import inspect

import numpy as np
import pytest

import quabla as qb
from misuse import raises
from quabla import test_util, typing

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from treecmp import close  # noqa: E402

TOL = 1e-12


RNG = np.random.default_rng(7)
X = RNG.normal(size=(3,))
Y = RNG.normal(size=(2,))
W = RNG.normal(size=(2, 3))


def qf(x, y):
    return {"a": qb.sin(x) * qb.sum(y), "b": (W @ x) * y}


def jf(x, y):
    return {"a": jnp.sin(x) * jnp.sum(y), "b": (W @ x) * y}


# ---------------------------------------------------------------------------------------------
# jit(static_argnames=)


def test_static_argnames_keyword_and_positional_calls():
    calls = []

    def f(x, n, axis=None):
        calls.append((n, axis))
        return qb.sum(x ** n, axis=axis)

    g = qb.jit(f, static_argnames=("n", "axis"))
    x = qb.array([[1.0, 2.0], [3.0, 4.0]])
    assert g(x, n=2, axis=0).tolist() == [10.0, 20.0]
    assert g(x, n=2, axis=0).tolist() == [10.0, 20.0]
    assert g(x, 2, axis=0).tolist() == [10.0, 20.0]  # n by position is static too (inferred argnums)
    assert g(x, 2, 1).tolist() == [5.0, 25.0]
    assert g(x, n=1).item() == 10.0
    assert calls == [(2, 0), (2, 0), (2, 1), (1, None)]
    jg = jax.jit(lambda x, n, axis=None: jnp.sum(x ** n, axis=axis), static_argnames=("n", "axis"))
    assert g(x, n=3, axis=1).tolist() == np.asarray(jg(np.asarray(x.numpy()), n=3, axis=1)).tolist()


def test_static_argnums_infers_argnames_as_jax():
    calls = []

    def f(x, n):
        calls.append(n)
        return x * n

    g = qb.jit(f, static_argnums=1)
    assert g(qb.array([1.0]), n=3).tolist() == [3.0]  # given by keyword: still static
    assert g(qb.array([1.0]), 3).tolist() == [3.0]
    assert g(qb.array([1.0]), n=4).tolist() == [4.0]
    assert calls == [3, 3, 4]
    jg = jax.jit(f, static_argnums=1)
    assert np.asarray(jg(np.array([1.0]), n=3)).tolist() == [3.0]


def test_static_argnames_with_var_kwargs_and_lower():
    def f(x, **kw):
        return x * kw["scale"]

    g = qb.jit(f, static_argnames="scale")
    assert g(qb.array([2.0]), scale=3).tolist() == [6.0]
    assert g(qb.array([2.0]), scale=4).tolist() == [8.0]
    assert g._cache_size == 2
    low = qb.jit(lambda x, k: x * k, static_argnames="k").lower(qb.ShapeDtype((2,), qb.float64), k=5)
    assert "5" in low.as_text()
    assert low.compile()(qb.ones(2), k=5).tolist() == [5.0, 5.0]


def test_static_argnames_over_transformed_function():
    f = qb.jit(qb.grad(lambda x, p: qb.sum(x ** p)), static_argnames="p")
    assert f(qb.array([1.0, 2.0]), p=3).tolist() == [3.0, 12.0]


# ---------------------------------------------------------------------------------------------
# Jacobians, has_aux, directions


def test_jacfwd_jacrev_jacobian_match_jax():
    x, y = qb.array(X), qb.array(Y)
    for qfun, jfun in ((qb.jacfwd, jax.jacfwd), (qb.jacrev, jax.jacrev), (qb.jacobian, jax.jacobian)):
        close(qfun(qf)(x, y), jfun(jf)(X, Y))
        close(qfun(qf, argnums=(0, 1))(x, y), jfun(jf, argnums=(0, 1))(X, Y))
        close(qfun(qf, argnums=1)(x, y), jfun(jf, argnums=1)(X, Y))


def test_forced_directions_in_the_program():
    # A wide function (3 inputs, 1 output): jacobian picks reverse; jacfwd forces forward.
    f = lambda x: qb.sum(qb.sin(x))  # noqa: E731
    x = qb.array(X)
    fwd = qb.jit(qb.jacfwd(f)).lower(x).as_text()
    rev = qb.jit(qb.jacrev(f)).lower(x).as_text()
    assert '"jvp"' in fwd and '"vjp"' not in fwd
    assert '"vjp"' in rev and '"jvp"' not in rev
    close(qb.jacfwd(f)(x), jax.jacfwd(lambda x: jnp.sum(jnp.sin(x)))(X))


def test_has_aux_on_jacobians_hessian_and_jvp():
    def qa(x, y):
        return qf(x, y), {"n": qb.sum(x * x), "k": 3}

    def ja(x, y):
        return jf(x, y), {"n": jnp.sum(x * x), "k": 3}

    x, y = qb.array(X), qb.array(Y)
    for qfun, jfun in ((qb.jacfwd, jax.jacfwd), (qb.jacrev, jax.jacrev), (qb.jacobian, jax.jacobian)):
        jac, aux = qfun(qa, argnums=(0, 1), has_aux=True)(x, y)
        wj, wa = jfun(ja, argnums=(0, 1), has_aux=True)(X, Y)
        close(jac, wj)
        close(aux, wa)

    def qs(x):
        return qb.sum(qb.sin(x) * x), qb.cos(x)

    def js(x):
        return jnp.sum(jnp.sin(x) * x), jnp.cos(x)

    h, aux = qb.hessian(qs, has_aux=True)(x)
    wh, wa = jax.hessian(js, has_aux=True)(X)
    close(h, wh)
    close(aux, wa)
    out, tan, aux = qb.jvp(qa, (x, y), (qb.ones(3), qb.ones(2)), has_aux=True)
    wo, wt, wa = jax.jvp(ja, (X, Y), (np.ones(3), np.ones(2)), has_aux=True)
    close(out, wo)
    close(tan, wt)
    close(aux, wa)
    # inside jit and composed
    j2, a2 = qb.jit(qb.jacrev(qa, has_aux=True))(x, y)
    close(j2, jax.jacrev(ja, has_aux=True)(X, Y)[0])
    hv = qb.jit(lambda x: qb.jvp(lambda z: qs(z), (x,), (qb.ones(3),), has_aux=True)[1])(x)
    close(hv, jax.jvp(js, (X,), (np.ones(3),), has_aux=True)[1])


def test_allow_int_and_keyword_arguments():
    def f(x, n):
        return qb.sum(x * n)

    g = qb.grad(f, argnums=(0, 1), allow_int=True)(qb.array([1.0, 2.0]), qb.array([3, 4]))
    assert g[0].tolist() == [3.0, 4.0] and g[1] is None
    j = qb.jacrev(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(qb.array([1.0]), qb.array([2]))
    assert j[0].tolist() == [[2.0]] and j[1] is None
    with raises(qb.DTypeError, "cannot differentiate"):
        qb.grad(f, argnums=1)(qb.array([1.0]), qb.array([3]))
    # signatures carry JAX's keyword arguments
    for name in ("jacfwd", "jacrev", "hessian", "jvp", "linearize", "grad", "value_and_grad"):
        q = set(inspect.signature(getattr(qb, name)).parameters)
        j = set(inspect.signature(getattr(jax, name)).parameters) - {"reduce_axes"}
        assert j <= q, (name, j - q)
    assert {"static_argnums", "static_argnames"} <= set(inspect.signature(qb.jit).parameters)


def test_linearize_matches_jax():
    def qg(x, y):
        return qb.sin(x) * qb.sum(y ** 2)

    def jg(x, y):
        return jnp.sin(x) * jnp.sum(y ** 2)

    out, f_jvp = qb.linearize(qg, qb.array(X), qb.array(Y))
    wo, wf = jax.linearize(jg, X, Y)
    close(out, wo)
    t = (RNG.normal(size=(3,)), RNG.normal(size=(2,)))
    close(f_jvp(qb.array(t[0]), qb.array(t[1])), wf(*t))
    close(f_jvp(qb.array(t[1][:1].repeat(3)), qb.zeros(2)), wf(t[1][:1].repeat(3), np.zeros(2)))
    out, f_jvp, aux = qb.linearize(lambda x: (qb.exp(x), x * 2), qb.array(X), has_aux=True)
    wo, wf, wa = jax.linearize(lambda x: (jnp.exp(x), x * 2), X, has_aux=True)
    close((out, aux), (wo, wa))
    close(f_jvp(qb.ones(3)), wf(np.ones(3)))
    # inside jit
    r = qb.jit(lambda x, t: qb.linearize(qb.tanh, x)[1](t))(qb.array(X), qb.ones(3))
    close(r, 1 - np.tanh(X) ** 2)


# ---------------------------------------------------------------------------------------------
# check_grads


def test_check_grads_passes_where_jax_does():
    from jax.test_util import check_grads as jcheck

    cases = [
        (lambda x, y: qb.sum(qb.sin(x) * y[0]), lambda x, y: jnp.sum(jnp.sin(x) * y[0]), (X, (Y[:1].repeat(3),))),
        (lambda x: qb.tanh(x) ** 2, lambda x: jnp.tanh(x) ** 2, (X,)),
        (lambda d: qb.exp(d["a"]) * d["b"], lambda d: jnp.exp(d["a"]) * d["b"], ({"a": X, "b": X * 2},)),
    ]
    for qfun, jfun, args in cases:
        jcheck(jfun, args, order=2)
        qargs = qb.tree.map(qb.array, args)
        qb.test_util.check_grads(qfun, qargs, order=2)
        qb.test_util.check_grads(qfun, qargs, order=1, modes=("fwd",))
        qb.test_util.check_grads(qfun, qargs, order=2, modes=["rev"], atol=1e-6, rtol=1e-6, eps=1e-5)
    qb.test_util.check_grads(qb.sin, (0.7,), order=3)
    qb.test_util.check_grads(lambda x: x * x, (qb.array([1.0, 2.0], dtype=qb.float32),), order=1)


def test_check_grads_catches_wrong_derivatives():
    # A jump inside the finite-difference stencil: the true (piecewise) derivative is 1.
    step = lambda x: qb.where(x > 0.5, x + 1.0, x)  # noqa: E731
    with raises(AssertionError, "JVP", "tangent output"):
        qb.test_util.check_grads(step, (qb.array([0.50001]),), order=1, modes=("fwd",))
    with raises(AssertionError, "VJP"):
        qb.test_util.check_grads(step, (qb.array([0.50001]),), order=1, modes=("rev",))
    with raises(AssertionError, "JVP"):
        qb.test_util.check_grads(step, (qb.array([0.50001]),), order=2)
    # Away from the jump the same function passes.
    qb.test_util.check_grads(step, (qb.array([0.2, 0.9]),), order=2)


# ---------------------------------------------------------------------------------------------
# qb.Array and qb.typing


def test_array_abc():
    assert isinstance(qb.ones(2), qb.Array) and issubclass(qb.Tensor, qb.Array)
    assert issubclass(qb.Tracer, qb.Array)
    seen = []

    def f(x):
        seen.append(isinstance(x, qb.Array))
        return x * 2

    qb.jit(f)(qb.ones(2))
    qb.grad(lambda x: qb.sum(f(x)))(qb.ones(2))
    qb.vmap(f)(qb.ones((2, 2)))
    assert seen == [True, True, True]
    assert not isinstance(np.ones(2), qb.Array) and not isinstance(1.0, qb.Array)
    assert qb.Array is qb.typing.Array
    with raises(TypeError, "qb.Array is abstract"):
        qb.Array()
    args = qb.typing.ArrayLike.__args__
    assert qb.Array in args and np.ndarray in args and float in args
    assert qb.DType in qb.typing.DTypeLike.__args__


DOCTESTS = [t for m in (test_util, typing) for t in doctest.DocTestFinder().find(m) if t.examples]


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples(test):
    test.globs = {"qb": qb, "round": builtins.round}
    out = []
    r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    r.run(test, out=out.append)
    assert r.failures == 0, "".join(out)


# ---------------------------------------------------------------------------------------------
# Misuse


def test_jit_static_argnames_misuse():
    def f(x, n, /, m=1):
        return x

    with raises(qb.ArgumentError, "static_argnames names 'k'", "not a parameter", "x, n, m") as e:
        qb.jit(f, static_argnames="k")
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError) and isinstance(e.value, qb.QuablaError)
    with raises(qb.ArgumentError, "'n', a positional-only parameter"):
        qb.jit(f, static_argnames=("n",))
    with raises(qb.ArgumentError, "static_argnames must be a str or a sequence of str"):
        qb.jit(f, static_argnames=(1,))
    with raises(qb.ArgumentError, "static_argnames must be a str or a sequence of str"):
        qb.jit(f, static_argnames=3)
    with raises(qb.ArgumentError, "static_argnums must be an int or a sequence of ints"):
        qb.jit(f, static_argnums="1")
    with raises(qb.ArgumentError, "static_argnums must be an int or a sequence of ints"):
        qb.jit(f, static_argnums=(True,))
    with raises(qb.ArgumentError, "static argument 'm'", "list", "not hashable"):
        qb.jit(f, static_argnames="m")(qb.ones(1), 2, m=[1])
    with raises(qb.ArgumentError, "static_argnums", "out of range"):
        qb.jit(f, static_argnums=5)(qb.ones(1), 2)


def test_jacobians_and_jvp_misuse():
    for fn in (qb.jacfwd, qb.jacrev, qb.jacobian, qb.hessian):
        with raises(qb.ArgumentError, "expected a callable"):
            fn(3)
        with raises(qb.UnsupportedOperationError, "holomorphic=True", "complex"):
            fn(qb.sin, holomorphic=True)
        with raises(qb.ArgumentError, "has_aux=True", "pair"):
            fn(lambda x: qb.sum(x), has_aux=True)(qb.ones(2))
        with raises(qb.ArgumentError, "argnums", "out of range"):
            fn(lambda x: qb.sum(x), argnums=2)(qb.ones(2))
        with raises(qb.ArgumentError, "argnums must be an int"):
            fn(lambda x: qb.sum(x), argnums=1.5)(qb.ones(2))
    with raises(qb.UnsupportedOperationError, "holomorphic"):
        qb.grad(qb.sin, holomorphic=True)
    with raises(qb.ArgumentError, "jvp(<lambda>)", "has_aux=True", "pair"):
        qb.jvp(lambda x: x * 2, (qb.ones(2),), (qb.ones(2),), has_aux=True)
    with raises(qb.ArgumentError, "fun must be callable"):
        qb.jvp(None, (qb.ones(2),), (qb.ones(2),))
    with raises(qb.ArgumentError, "1 primals but 2 tangents"):
        qb.jvp(qb.sin, (qb.ones(2),), (qb.ones(2), qb.ones(2)))
    with raises(qb.ArgumentError, "tangents have structure"):
        qb.jvp(qb.sin, ([qb.ones(2)],), ((qb.ones(2),),))


def test_linearize_misuse():
    with raises(qb.ArgumentError, "fun must be callable"):
        qb.linearize(1, qb.ones(2))
    with raises(qb.ArgumentError, "at least one primal"):
        qb.linearize(qb.sin)
    _, f_jvp = qb.linearize(qb.sin, qb.ones(2))
    with raises(qb.ArgumentError, "one tangent per primal", "1 expected, got 2"):
        f_jvp(qb.ones(2), qb.ones(2))
    with raises(qb.ShapeError, "tangent", "shape (3,)"):
        f_jvp(qb.ones(3))
    with raises(qb.ArgumentError, "has_aux=True", "pair"):
        qb.linearize(qb.sin, qb.ones(2), has_aux=True)


def test_check_grads_misuse():
    with raises(qb.ArgumentError, "f must be callable"):
        qb.test_util.check_grads(None, (1.0,), 1)
    with raises(qb.ArgumentError, "args must be a tuple or list"):
        qb.test_util.check_grads(qb.sin, qb.ones(2), 1)
    with raises(qb.ArgumentError, "order must be an int >= 1"):
        qb.test_util.check_grads(qb.sin, (1.0,), 0)
    with raises(qb.ArgumentError, "modes must be", "'sideways'"):
        qb.test_util.check_grads(qb.sin, (1.0,), 1, modes=("fwd", "sideways"))
    with raises(qb.ArgumentError, "modes must be"):
        qb.test_util.check_grads(qb.sin, (1.0,), 1, modes=())
    with raises(qb.ArgumentError, "atol must be a non-negative number"):
        qb.test_util.check_grads(qb.sin, (1.0,), 1, atol=-1.0)
    with raises(qb.ArgumentError, "argument args[0]['n']", "int64"):
        qb.test_util.check_grads(lambda d: d["n"], ({"n": qb.array([1, 2])},), 1)
    with raises(qb.ArgumentError, "argument args[1]", "str"):
        qb.test_util.check_grads(lambda x, s: x, (1.0, "s"), 1)


def test_python_control_flow_under_eager_differentiation():
    # JAX's grad (without jit) sees the values: a Python `if`/`for` on them works, following
    # the branches of each call. Quabla traces such calls with the values known.
    def f(x):
        return 3.0 * x ** 2 if x < 3 else -4 * x

    def g(x):
        y = 0.0
        for i in range(int(x)):
            y = y + qb.sin(x) * i
        return y

    def g_jax(x):
        y = 0.0
        for i in range(int(x)):
            y = y + jax.numpy.sin(x) * i
        return y

    for x in (2.0, 4.0, 3.0):
        assert float(qb.grad(f)(x)) == pytest.approx(float(jax.grad(f)(x)))
    for x in (0.5, 2.5, 3.5):
        assert float(qb.grad(g)(x)) == pytest.approx(float(jax.grad(g_jax)(x)))
        v, d = qb.value_and_grad(g)(x)
        jv, jd = jax.value_and_grad(g_jax)(x)
        assert (float(v), float(d)) == pytest.approx((float(jv), float(jd)))
    h = lambda x: x ** 3 if x > 0 else -x ** 2
    for x in (2.0, -2.0):
        assert float(qb.hessian(h)(x)) == pytest.approx(float(jax.hessian(h)(x)))
    piece = lambda v: v * 2 if v.sum() > 0 else v ** 2
    np.testing.assert_allclose(np.asarray(qb.jacfwd(piece)(-np.ones(2))), np.asarray(jax.jacfwd(piece)(-np.ones(2))))
    # Under jit and vmap the values are abstract, in JAX and here.
    with pytest.raises(qb.errors.TracerBoolConversionError):
        qb.jit(qb.grad(f))(2.0)
    with pytest.raises(qb.errors.TracerBoolConversionError):
        qb.vmap(f)(qb.ones(3))
