"""qb.custom_jvp / qb.custom_vjp against JAX 0.10.2 (x64), float64 within 1e-12 relative:
the JAX docs' examples (log1pexp with its stable gradient at x=100, where the autodiff
gradient is nan; clip_gradient), defjvps, nondiff_argnums (a function argument and a static
number), pytree arguments and residuals, jit, jvp, grad, grad(grad), hessian and vmap (batched
rules, an unbatched argument whose cotangent is summed over the batch, vmap inside grad and
grad inside vmap), closures over outer tracers, the IR (one custom call carrying its rules,
expanded away after autodiff) and the typed errors (no rule, a rule of the wrong structure,
jvp of a custom_vjp function)."""

from functools import partial

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from treecmp import close  # noqa: E402

TOL = 1e-12


def make_log1pexp(m, custom_jvp):
    @custom_jvp
    def log1pexp(x):
        return m.log(1.0 + m.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        ans = log1pexp(x)
        return ans, x_dot * (1.0 - 1.0 / (1.0 + m.exp(x)))

    return log1pexp


QL = make_log1pexp(qb, qb.custom_jvp)
JL = make_log1pexp(jnp, jax.custom_jvp)


def test_log1pexp_stable_gradient_at_100():
    # In float32 (the docs' setting) the plain autodiff gradient exp(x) / (1 + exp(x)) is
    # inf / inf = nan at x = 100; the custom rule gives 1.
    x32 = qb.array(100.0, dtype=qb.float32)
    naive = qb.grad(lambda x: qb.log(1.0 + qb.exp(x)))(x32).item()
    assert np.isnan(naive)
    assert np.isnan(float(jax.grad(lambda x: jnp.log(1.0 + jnp.exp(x)))(jnp.float32(100.0))))
    assert qb.grad(QL)(x32).item() == 1.0
    assert qb.jit(qb.grad(QL))(x32).item() == 1.0
    assert float(jax.grad(JL)(jnp.float32(100.0))) == 1.0
    assert qb.grad(QL)(qb.array(100.0)).item() == 1.0


@pytest.mark.parametrize("x", [-3.0, 0.0, 0.7, 10.0, 100.0])
def test_log1pexp_against_jax(x):
    q, j = qb.array(x), jnp.asarray(x)
    close(QL(q), JL(j))
    close(qb.jit(QL)(q), JL(j))
    close(qb.grad(QL)(q), jax.grad(JL)(j))
    close(qb.jvp(QL, (q,), (qb.array(0.3),)), jax.jvp(JL, (j,), (jnp.asarray(0.3),)))
    close(qb.grad(qb.grad(QL))(q), jax.grad(jax.grad(JL))(j))
    close(qb.jvp(qb.grad(QL), (q,), (qb.array(1.0),)), jax.jvp(jax.grad(JL), (j,), (jnp.asarray(1.0),)))


def test_log1pexp_vmap_and_hessian():
    xs = np.array([-2.0, 0.5, 3.0, 100.0])
    close(qb.vmap(qb.grad(QL))(qb.array(xs)), jax.vmap(jax.grad(JL))(jnp.asarray(xs)))
    close(qb.grad(lambda v: qb.sum(qb.vmap(QL)(v)))(qb.array(xs)), jax.grad(lambda v: jnp.sum(jax.vmap(JL)(v)))(jnp.asarray(xs)))
    close(qb.jit(qb.vmap(QL))(qb.array(xs)), jax.vmap(JL)(jnp.asarray(xs)))
    close(qb.hessian(lambda v: qb.sum(QL(v) * v))(qb.array(xs[:3])), jax.hessian(lambda v: jnp.sum(JL(v) * v))(jnp.asarray(xs[:3])))


def make_clip(m, custom_vjp):
    @custom_vjp
    def clip_gradient(lo, hi, x):
        return x  # identity function

    def clip_gradient_fwd(lo, hi, x):
        return x, (lo, hi)  # save bounds as residuals

    def clip_gradient_bwd(res, g):
        lo, hi = res
        return (None, None, m.clip(g, lo, hi))  # use None to indicate zero cotangents for lo and hi

    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)
    return clip_gradient


QC = make_clip(qb, qb.custom_vjp)
JC = make_clip(jnp, jax.custom_vjp)


def test_clip_gradient_docs_example():
    qf = lambda x: qb.sin(QC(-0.75, 0.75, x))  # noqa: E731
    jf = lambda x: jnp.sin(JC(-0.75, 0.75, x))  # noqa: E731
    ts = np.linspace(0.0, 10.0, 13)
    for t in ts:
        close(qf(qb.array(t)), jf(t))
        close(qb.grad(qf)(qb.array(t)), jax.grad(jf)(t))
    close(qb.vmap(qb.grad(qf))(qb.array(ts)), jax.vmap(jax.grad(jf))(jnp.asarray(ts)))
    close(qb.jit(qb.vmap(qb.grad(qf)))(qb.array(ts)), jax.vmap(jax.grad(jf))(jnp.asarray(ts)))
    # The clipped gradient really differs from the plain one somewhere.
    assert abs(qb.grad(qf)(qb.array(0.0)).item() - 1.0) > 0.2


def test_defjvps_and_nondiff_function_argument():
    def mk(m, cj):
        @cj
        def f(x, y):
            return m.sin(x) * y

        f.defjvps(lambda x_dot, primal_out, x, y: m.cos(x) * x_dot * y, lambda y_dot, primal_out, x, y: m.sin(x) * y_dot)
        return f

    qf, jf = mk(qb, qb.custom_jvp), mk(jnp, jax.custom_jvp)
    a, b = 0.7, -1.3
    close(qb.grad(qf, argnums=(0, 1))(qb.array(a), qb.array(b)), jax.grad(jf, argnums=(0, 1))(a, b))
    close(qb.jvp(qf, (qb.array(a), qb.array(b)), (qb.array(1.0), qb.array(2.0))), jax.jvp(jf, (a, b), (1.0, 2.0)))

    def mk_app(cj):
        @partial(cj, nondiff_argnums=(0,))
        def app(f, x):
            return f(x)

        @app.defjvp
        def app_jvp(f, primals, tangents):
            (x,), (x_dot,) = primals, tangents
            return f(x), 2.0 * x_dot

        return app

    qa, ja = mk_app(qb.custom_jvp), mk_app(jax.custom_jvp)
    close(qb.grad(lambda x: qa(lambda y: y**2, x))(qb.array(4.0)), jax.grad(lambda x: ja(lambda y: y**2, x))(4.0))
    close(qa(lambda y: y**2, qb.array(4.0)), ja(lambda y: y**2, 4.0))


def make_layer(m, custom_vjp):
    """A custom_vjp with pytree arguments and pytree residuals, a static nondiff scale, and a
    bwd that is itself differentiable (second order)."""

    @partial(custom_vjp, nondiff_argnums=(2,))
    def layer(p, x, scale):
        return m.tanh(p["w"] * x + p["b"]) * scale

    def fwd(p, x, scale):
        y = m.tanh(p["w"] * x + p["b"])
        return y * scale, {"y": y, "p": p, "x": x}

    def bwd(scale, res, g):
        d = g * scale * (1.0 - res["y"] ** 2)
        return ({"w": m.sum(d * res["x"]) * m.ones_like(res["p"]["w"]), "b": m.sum(d) * m.ones_like(res["p"]["b"])}, d * res["p"]["w"])

    layer.defvjp(fwd, bwd)
    return layer


QY, JY = make_layer(qb, qb.custom_vjp), make_layer(jnp, jax.custom_vjp)
P = {"w": np.array(0.8), "b": np.array(-0.2)}
XV = np.array([0.3, -1.1, 0.6])


def qp():
    return {k: qb.array(v) for k, v in P.items()}


def jp():
    return {k: jnp.asarray(v) for k, v in P.items()}


def test_custom_vjp_pytrees_second_order_and_vmap():
    ql = lambda p, x: qb.sum(QY(p, x, 1.5) ** 2)  # noqa: E731
    jl = lambda p, x: jnp.sum(JY(p, x, 1.5) ** 2)  # noqa: E731
    close(ql(qp(), qb.array(XV)), jl(jp(), jnp.asarray(XV)))
    close(qb.grad(ql, argnums=(0, 1))(qp(), qb.array(XV)), jax.grad(jl, argnums=(0, 1))(jp(), jnp.asarray(XV)))
    close(qb.jit(qb.grad(ql, argnums=(0, 1)))(qp(), qb.array(XV)), jax.grad(jl, argnums=(0, 1))(jp(), jnp.asarray(XV)))
    # Second order through bwd.
    close(qb.grad(lambda x: qb.sum(qb.grad(ql, argnums=1)(qp(), x) ** 2))(qb.array(XV)), jax.grad(lambda x: jnp.sum(jax.grad(jl, argnums=1)(jp(), x) ** 2))(jnp.asarray(XV)))
    # vmap over x with unbatched parameters: their cotangents are summed over the batch.
    xs = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    qv = lambda p, x: qb.sum(qb.vmap(lambda xi: QY(p, xi, 0.5))(x))  # noqa: E731
    jv = lambda p, x: jnp.sum(jax.vmap(lambda xi: JY(p, xi, 0.5))(x))  # noqa: E731
    close(qb.grad(qv, argnums=(0, 1))(qp(), qb.array(xs)), jax.grad(jv, argnums=(0, 1))(jp(), jnp.asarray(xs)))
    # grad inside vmap.
    close(qb.vmap(qb.grad(ql, argnums=1), in_axes=(None, 0))(qp(), qb.array(xs)), jax.vmap(jax.grad(jl, argnums=1), in_axes=(None, 0))(jp(), jnp.asarray(xs)))


def test_closure_over_outer_tracer():
    def mk(m, cj):
        def outer(w, x):
            @cj
            def f(x):
                return m.sin(x) * w

            f.defjvp(lambda pr, ta: (f(pr[0]), m.cos(pr[0]) * w * ta[0]))
            return f(x)

        return outer

    qo, jo = mk(qb, qb.custom_jvp), mk(jnp, jax.custom_jvp)
    close(qb.grad(qo, argnums=1)(qb.array(1.7), qb.array(0.4)), jax.grad(jo, argnums=1)(1.7, 0.4))
    close(qb.jit(qo)(qb.array(1.7), qb.array(0.4)), jo(1.7, 0.4))


def make_maclaurin(m, custom_jvp):
    """JAX's pattern for sinc at 0: the rule of order k calls the function of order k + 1."""

    @partial(custom_jvp, nondiff_argnums=(0,))
    def mac(k, x):
        c = 0.0 if k % 2 else (-1.0) ** (k // 2) * np.pi**k / (k + 1)
        return x * 0 + c

    @mac.defjvp
    def mac_jvp(k, primals, tangents):
        (x,), (t,) = primals, tangents
        return mac(k, x), mac(k + 1, x) * t

    return partial(mac, 0)


def test_rules_calling_the_next_order_differentiate_as_in_jax():
    # Each differentiation uses the rule of the next order (the rules of custom calls inside a
    # rule are traced while differentiations remain): sinc's derivatives at 0.
    qf, jf = make_maclaurin(qb, qb.custom_jvp), make_maclaurin(jnp, jax.custom_jvp)
    for n in range(5):
        q, j = qf, jf
        for _ in range(n):
            q, j = qb.grad(q), jax.grad(j)
        close(q(qb.array(0.0)), j(0.0))
        close(qb.jit(q)(qb.array(0.0)), j(0.0))
    close(qb.hessian(qf)(qb.array(0.0)), jax.hessian(jf)(0.0))
    close(qb.vmap(qb.grad(qb.grad(qf)))(qb.array([0.0, 0.0])), jax.vmap(jax.grad(jax.grad(jf)))(jnp.zeros(2)))
    # The primal call inside a rule (`return f(x), ...`) is differentiated by the rule too.
    ql, jl = make_log1pexp(qb, qb.custom_jvp), make_log1pexp(jnp, jax.custom_jvp)
    inner = lambda f, jvp: lambda x: jvp(f, (x,), (x * 0 + 1.0,))  # noqa: E731
    close(qb.jvp(inner(ql, qb.jvp), (qb.array(50.0),), (qb.array(1.0),)), jax.jvp(inner(jl, jax.jvp), (50.0,), (1.0,)))


def test_ir_carries_rules_and_autodiff_expands_them():
    # The traced program is one call of the outlined primal naming its outlined jvp rule.
    text = qb.jit(QL).lower(qb.array(1.0)).as_text()
    assert text.count("quabla.custom_jvp = @__qb_custom_") == 1, text
    text = qb.jit(lambda x: QC(-1.0, 1.0, x)).lower(qb.array(1.0)).as_text()
    assert "quabla.custom_vjp_fwd = @__qb_custom_" in text and "quabla.custom_vjp_bwd" in text, text
    # The gradient program is the rule's 1 - 1 / (1 + exp(x)): no log (the primal's
    # derivative would divide by 1 + exp(x) after a log's derivative), no transform left.
    opt = qb.jit(qb.grad(QL)).lower(qb.array(1.0)).as_text(optimized=True)
    assert "quabla.log" not in opt and "quabla.transform" not in opt, opt
    assert "quabla.sub" in opt and "quabla.div" in opt, opt


def test_errors():
    @qb.custom_jvp
    def f(x):
        return x * 2.0

    with pytest.raises(AttributeError, match="No JVP defined"):
        qb.grad(f)(qb.array(1.0))

    f.defjvp(lambda pr, ta: (pr[0] * 2.0, qb.sum(ta[0]) * qb.ones((2,))))
    with pytest.raises(qb.ShapeError, match="jvp rule must return"):
        qb.grad(lambda x: qb.sum(f(x)))(qb.array([1.0, 2.0, 3.0]))

    with pytest.raises(qb.UnsupportedOperationError, match="custom_vjp_call"):
        qb.jvp(lambda x: QC(-1.0, 1.0, x), (qb.array(0.5),), (qb.array(1.0),))

    @qb.custom_vjp
    def g(x, y):
        return x * y

    g.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: (ct * res[1],))
    with pytest.raises(qb.ArgumentTypeError, match="2 cotangents"):
        qb.grad(g)(qb.array(1.0), qb.array(2.0))
    # Eager calls just run the function.
    assert g(qb.array(2.0), qb.array(3.0)).item() == 6.0


def test_rule_whose_primal_part_is_a_while_loop_transposes():
    # The transpose of a jvp rule in its tangents leaves the rule's primal computations
    # alone (a data-dependent while_loop has no reverse-mode rule), as JAX linearizes first.
    def mk(m, lax, custom_jvp):
        @custom_jvp
        def f(x):
            return lax.while_loop(lambda s: s < 10.0, lambda s: s * 1.5, x)

        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            y = f(x)
            return y, t * y / x

        return f

    qf, jf = mk(qb, qb.lax, qb.custom_jvp), mk(jnp, jax.lax, jax.custom_jvp)
    close(qb.grad(qf)(qb.array(1.0)), jax.grad(jf)(1.0))
    close(qb.jit(qb.vmap(qb.grad(qf)))(qb.array([1.0, 2.0, 7.0])), jax.vmap(jax.grad(jf))(jnp.array([1.0, 2.0, 7.0])))


def test_custom_vjp_bwd_may_return_float0_for_an_integer_argument():
    # JAX's idiom for "no cotangent" of an integer argument: a NumPy array of float0.
    @qb.custom_vjp
    def f(x, n):
        return x * n

    f.defvjp(lambda x, n: (x * n, n), lambda n, g: (g * n, np.zeros(np.shape(n), qb.dtypes.float0)))
    assert qb.grad(f)(qb.array(2.0), qb.array(3)).item() == 3.0
    assert qb.jit(qb.grad(f))(qb.array(2.0), qb.array(4)).item() == 4.0
