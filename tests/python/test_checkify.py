"""qb.experimental.checkify against jax.experimental.checkify (x64): messages, which check
is reported, eager / jit / vmap / cond / scan / while / grad, category sets, typed errors."""

import doctest
import threading

import numpy as np
import pytest

import quabla as qb
import quabla.experimental.checkify as checkify
from quabla import errors

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax.experimental import checkify as jcheckify  # noqa: E402


def both(build, *args):
    """``build(ck, np_mod, lax, vmap, jit, grad)`` builds a function; returns (Quabla's message,
    JAX's message) of its checkified call on ``args``."""
    fq = build(checkify, qb, qb.lax, qb.vmap, qb.jit, qb.grad)
    fj = build(jcheckify, jnp, jax.lax, jax.vmap, jax.jit, jax.grad)
    eq, _ = fq(*[qb.array(a) for a in args])
    ej, _ = fj(*[jnp.asarray(a) for a in args])
    return eq.get(), ej.get()


def positive(ck, m):
    def f(x):
        ck.check(x > 0, "x must be positive, got {x}", x=x)
        return x * 2
    return f


CASES = {
    "eager": lambda ck, m, lax, vmap, jit, grad: ck.checkify(positive(ck, m)),
    "jit_of_checkify": lambda ck, m, lax, vmap, jit, grad: jit(ck.checkify(positive(ck, m))),
    "checkify_of_jit": lambda ck, m, lax, vmap, jit, grad: ck.checkify(jit(positive(ck, m))),
    "checkify_of_vmap": lambda ck, m, lax, vmap, jit, grad: ck.checkify(vmap(positive(ck, m))),
    "vmap_of_checkify": lambda ck, m, lax, vmap, jit, grad: vmap(ck.checkify(positive(ck, m))),
    "jit_vmap_of_checkify": lambda ck, m, lax, vmap, jit, grad: jit(vmap(ck.checkify(positive(ck, m)))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_messages_match_jax(name):
    build = CASES[name]
    vec = name.count("vmap") > 0
    for arg in ([1.0, -2.0, -3.0, 4.0] if vec else -1.5, [1.0, 2.0, 3.0, 4.0] if vec else 2.5):
        got, want = both(build, np.array(arg))
        assert got == want, (name, arg, got, want)


def test_outputs_and_error_leaves():
    f = checkify.checkify(positive(checkify, qb))
    err, out = f(qb.array(-1.0))
    assert out.item() == -2.0
    assert err.get() == "x must be positive, got -1.0 (`check` failed)"
    assert str(err) == "Error(x must be positive, got -1.0 (`check` failed))"
    leaves = qb.tree.leaves(err)
    assert [l.dtype for l in leaves] == [qb.bool_, qb.int32, qb.float64]
    assert checkify.init_error.get() is None and qb.tree.leaves(checkify.init_error) == []
    # float32 formatting arguments stay float32
    err, out = f(qb.array(-1.5, dtype=qb.float32))
    assert out.dtype == qb.float32 and qb.tree.leaves(err)[2].dtype == qb.float32
    assert err.get() == "x must be positive, got -1.5 (`check` failed)"
    # a cached jitted checkified function gives each call's own error
    jf = qb.jit(f)
    assert [jf(qb.array(v))[0].get() for v in (-1.0, 2.0, -3.0)] == [
        "x must be positive, got -1.0 (`check` failed)", None, "x must be positive, got -3.0 (`check` failed)"]


def two_checks(ck, m):
    def g(x, y):
        ck.check(x > 0, "a {} {}", x, y)
        ck.check(x > -5, "b {z}", z=x)
        return x + y
    return g


def test_first_failed_check_and_formats():
    for x in (-6.0, -1.0, 1.0):
        got, want = both(lambda ck, m, *_: ck.checkify(two_checks(ck, m)), x, 3)
        assert got == want


def scan_body(ck, m, lax, first_a):
    def sb(c, x):
        if first_a:
            ck.check(x > 0, "A {}", x)
        ck.check(x > -10, "B {} {}", x, x)
        if not first_a:
            ck.check(x > 0, "A {}", x)
        return c + x, x * 2
    return lambda xs: lax.scan(sb, m.zeros(()), xs)


@pytest.mark.parametrize("first_a", [True, False])
def test_scan_order_matches_jax(first_a):
    for xs in ([1.0, -20.0, -2.0], [1.0, -2.0, -20.0], [1.0, 2.0, 3.0]):
        got, want = both(lambda ck, m, lax, *_: ck.checkify(scan_body(ck, m, lax, first_a)), np.array(xs))
        assert got == want


def cond_fun(ck, m, lax):
    def f(x):
        ck.check(x < 100, "home1 {}", x)
        y = lax.cond(x > 0, lambda v: v, lambda v: (ck.check(v > -1, "nested {}", v), v * 3)[1], x)
        ck.check(x < 50, "home2 {}", x)
        return y
    return f


def test_cond_and_interleaving():
    for x in (-3.0, 3.0, 60.0, 200.0, -0.5):
        got, want = both(lambda ck, m, lax, vmap, jit, grad: jit(ck.checkify(cond_fun(ck, m, lax))), x)
        assert got == want, (x, got, want)
    xs = np.array([3.0, -3.0, 0.5, -5.0, 70.0])
    for name in ("checkify_of_vmap", "vmap_of_checkify"):
        def build(ck, m, lax, vmap, jit, grad, name=name):
            f = cond_fun(ck, m, lax)
            return ck.checkify(vmap(f)) if name == "checkify_of_vmap" else vmap(ck.checkify(f))
        got, want = both(build, xs)
        assert got == want, (name, got, want)


def test_while_fori_switch():
    def wl(ck, m, lax, *_):
        def f(x):
            def body(c):
                ck.check(c[1] < 3.0, "w {}", c[1])
                return c[0] + 1, c[1] + 1.0
            return lax.while_loop(lambda c: c[0] < 5, body, (0, x))[1]
        return ck.checkify(f)

    def fl(ck, m, lax, *_):
        def f(x, n):
            def body(i, c):
                ck.check(c < 10.0, "fori {} {}", i, c)
                return c * 2.0
            return lax.fori_loop(0, n, body, x)
        return ck.checkify(f)

    def sw(ck, m, lax, *_):
        return ck.checkify(lambda i, x: lax.switch(i, [lambda v: v, lambda v: (ck.check(v > 5, "sw {}", v), v)[1]], x))

    for x in (0.0, -10.0):
        got, want = both(wl, x)
        assert got == want
    got, want = both(fl, 1.0, 6)
    assert got == want == "fori 4 16.0 (`check` failed)"
    for i in (0, 1):
        got, want = both(sw, i, 2.0)
        assert got == want


def test_nested_vmap_reports_as_jax():
    xs = np.array([[1.0, 2.0, -3.0], [-4.0, 5.0, 6.0]])

    def h(ck):
        return lambda x: (ck.check(x > 0, "h {x}", x=x), x)[1]

    builds = [
        lambda ck, m, lax, vmap, *_: ck.checkify(vmap(vmap(h(ck)))),
        lambda ck, m, lax, vmap, *_: ck.checkify(vmap(vmap(h(ck)), in_axes=1)),
        lambda ck, m, lax, vmap, *_: vmap(ck.checkify(vmap(h(ck)))),
        lambda ck, m, lax, vmap, *_: vmap(vmap(ck.checkify(h(ck)))),
    ]
    for b in builds:
        got, want = both(b, xs)
        assert got == want


def test_grad():
    def f(ck, m):
        return lambda y: (ck.check(y > 0, "g {}", y), y * y)[1]

    got, want = both(lambda ck, m, lax, vmap, jit, grad: ck.checkify(grad(f(ck, m))), -1.5)
    assert got == want
    eq, gq = checkify.checkify(qb.grad(f(checkify, qb)))(qb.array(-1.5))
    assert gq.item() == -3.0
    # grad through a checkified function (its error dropped), with a check in a cond branch
    g = qb.grad(lambda x: checkify.checkify(cond_fun(checkify, qb, qb.lax))(x)[1])
    assert g(qb.array(-3.0)).item() == 3.0
    assert qb.jit(g)(qb.array(2.0)).item() == 1.0


def test_check_outside_checkify():
    g = two_checks(checkify, qb)
    assert g(qb.array(1.0), qb.array(2.0)).item() == 3.0
    with pytest.raises(checkify.JaxRuntimeError, match=r"a -1.0 3 \(`check` failed\)"):
        g(qb.array(-1.0), qb.array(3))
    assert issubclass(checkify.JaxRuntimeError, errors.QuablaError) and issubclass(checkify.JaxRuntimeError, ValueError)
    with pytest.raises(errors.UnsupportedOperationError, match="not functionalized"):
        qb.jit(g)(qb.array(1.0), qb.array(2.0))
    with pytest.raises(ValueError):
        jax.jit(two_checks(jcheckify, jnp))(1.0, 2.0)
    checkify.debug_check(False, "ignored")
    assert qb.jit(lambda x: (checkify.debug_check(x > 0, "dbg"), x)[1])(qb.array(-1.0)).item() == -1.0
    err, _ = checkify.checkify(lambda x: (checkify.debug_check(x > 0, "dbg {}", x), x)[1])(qb.array(-1.0))
    assert err.get() == "dbg -1.0 (`check` failed)"


def test_throw_and_check_error():
    err, _ = checkify.checkify(positive(checkify, qb))(qb.array(-2.0))
    with pytest.raises(checkify.JaxRuntimeError, match="got -2.0"):
        err.throw()
    ok, _ = checkify.checkify(positive(checkify, qb))(qb.array(2.0))
    ok.throw()
    checkify.check_error(ok)
    # batched: the last failing example, as JAX
    errq, _ = qb.vmap(checkify.checkify(positive(checkify, qb)))(qb.array([1.0, -2.0, -3.0]))
    errj, _ = jax.vmap(jcheckify.checkify(positive(jcheckify, jnp)))(jnp.array([1.0, -2.0, -3.0]))
    with pytest.raises(jcheckify.JaxRuntimeError) as ej:
        errj.throw()
    with pytest.raises(checkify.JaxRuntimeError) as eq:
        errq.throw()
    assert str(eq.value) == str(ej.value)
    # check_error inside checkify re-functionalizes an inner error
    inner = checkify.checkify(lambda y: (checkify.check(y > 0, "inner {}", y), y)[1])
    err, _ = checkify.checkify(lambda x: checkify.check_error(inner(x)[0]))(qb.array(-1.0))
    assert err.get() == "inner -1.0 (`check` failed)"
    with pytest.raises(errors.UnsupportedOperationError):
        qb.jit(lambda e: checkify.check_error(e))(err)


def test_categories_and_nan_checks():
    assert checkify.all_checks - checkify.float_checks == checkify.user_checks | checkify.index_checks
    assert checkify.float_checks == checkify.nan_checks | checkify.div_checks
    assert checkify.automatic_checks == checkify.all_checks - checkify.user_checks
    assert len(checkify.all_checks) == 4 and all(issubclass(c, checkify.ErrorCategory) for c in checkify.all_checks)
    err, out = checkify.checkify(lambda x: qb.log(x) + 1.0, errors=checkify.nan_checks)(qb.array(-1.0))
    assert err.get().startswith("nan generated by primitive: ")
    errj, _ = jcheckify.checkify(lambda x: jnp.log(x) + 1.0, errors=jcheckify.nan_checks)(-1.0)
    assert errj.get().startswith("nan generated by primitive: ")
    err, out = checkify.checkify(lambda x: qb.log(x) + 1.0, errors=checkify.float_checks)(qb.array(2.0))
    assert err.get() is None and abs(out.item() - (np.log(2.0) + 1.0)) < 1e-12
    # user checks are dropped when not enabled, kept with user_checks | nan_checks
    f = lambda x: (checkify.check(x > 0, "u"), qb.sqrt(x))[1]  # noqa: E731
    assert checkify.checkify(f, errors=checkify.nan_checks)(qb.array(-1.0))[0].get().startswith("nan")
    assert checkify.checkify(f, errors=checkify.user_checks | checkify.nan_checks)(qb.array(-1.0))[0].get() == "u (`check` failed)"
    assert checkify.checkify(f, errors=checkify.all_checks - checkify.user_checks)(qb.array(4.0))[0].get() is None


def test_static_arguments_and_threads():
    def f(x, n, s):
        checkify.check(x > n, s + " {}", x)
        return x * n

    c = checkify.checkify(f)
    assert c(qb.array(1.0), 2, "low")[0].get() == "low 1.0 (`check` failed)"
    assert c(np.array(3.0), 2, "low")[0].get() is None
    assert c(qb.array(1.0), 0.5, "z")[1].item() == 0.5
    jf = qb.jit(checkify.checkify(cond_fun(checkify, qb, qb.lax)))
    res = []

    def work(v):
        for _ in range(4):
            res.append((v, jf(qb.array(v))[0].get()))

    ts = [threading.Thread(target=work, args=(v,)) for v in (-3.0, 3.0)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(set(res)) == [(-3.0, "nested -3.0 (`check` failed)"), (3.0, None)]


def test_typed_errors():
    bad_preds = [qb.array([True, False]), 1, qb.array(1.0), None, "x"]
    for p in bad_preds:
        with pytest.raises(errors.ArgumentTypeError):
            checkify.check(p, "m")
    with pytest.raises(errors.ArgumentTypeError):
        checkify.check(False, "a", 3)
    with pytest.raises(errors.ArgumentTypeError):
        checkify.check(False, None)
    for msg, args in (("{}", ()), ("{x}", ()), ("{:d}", (qb.array(1.0),))):
        with pytest.raises(errors.InvalidArgumentError):
            checkify.check(False, msg, *args)
    with pytest.raises(errors.ArgumentTypeError):
        checkify.checkify(3)
    with pytest.raises(errors.ArgumentTypeError):
        checkify.checkify(lambda x: x, errors=3)
    with pytest.raises(errors.ArgumentTypeError):
        checkify.checkify(lambda x: x, errors={int})
    with pytest.raises(errors.ArgumentTypeError):
        checkify.check_error(3)


def test_docstrings():
    tests = [t for t in doctest.DocTestFinder().find(checkify) if t.examples]
    assert len(tests) >= 6
    for t in tests:
        t.globs = {"qb": qb, "np": np}
        r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        out = []
        r.run(t, out=out.append)
        assert r.failures == 0, "".join(out)
