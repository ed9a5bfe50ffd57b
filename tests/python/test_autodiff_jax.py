"""Derivatives equal JAX's (x64) within 1e-12 relative in float64: every op (JVP, VJP and
Hessian-vector product of one compiled program each), grad(grad(f)) of scalar functions,
HVPs, jacobian and hessian of vector functions of several pytree arguments, has_aux,
argnums tuples, a 2-layer MLP loss with respect to a params dict, closures over outer
tracers two levels deep; composition with jit; caching."""

import math

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from treecmp import close  # noqa: E402
from jax.scipy.special import erf as jerf  # noqa: E402
from jax.scipy.special import logsumexp as jlogsumexp  # noqa: E402

TOL = 1e-12


# ---------------------------------------------------------------------------------------------
# Every op: (name, quabla function, JAX function, argument makers)

RNG = np.random.default_rng(42)


def U(shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


def AWAY(shape):
    return RNG.uniform(0.5, 3.0, size=shape) * RNG.choice([-1.0, 1.0], size=shape)


OPS = [
    ("exp", qb.exp, jnp.exp, [U((3, 4))]),
    ("exp2", qb.exp2, jnp.exp2, [U((3, 4))]),
    ("logaddexp", qb.logaddexp, jnp.logaddexp, [U((3, 4), -5, 5), U((3, 4), -5, 5)]),
    ("logaddexp-bcast", qb.logaddexp, jnp.logaddexp, [U((3, 4)), U((4,))]),
    ("isfinite-where", lambda x: qb.where(qb.isfinite(qb.log(x)), x, 0.0) * x,
     lambda x: jnp.where(jnp.isfinite(jnp.log(x)), x, 0.0) * x, [U((3, 4))]),
    ("expm1", qb.expm1, jnp.expm1, [U((3, 4))]),
    ("log", qb.log, jnp.log, [U((3, 4), 0.1, 3)]),
    ("log1p", qb.log1p, jnp.log1p, [U((3, 4), -0.5, 3)]),
    ("sin", qb.sin, jnp.sin, [U((3, 4), -3, 3)]),
    ("cos", qb.cos, jnp.cos, [U((3, 4), -3, 3)]),
    ("tan", qb.tan, jnp.tan, [U((3, 4), -1.2, 1.2)]),
    ("tanh", qb.tanh, jnp.tanh, [U((3, 4), -3, 3)]),
    ("sqrt", qb.sqrt, jnp.sqrt, [U((3, 4), 0.1, 4)]),
    ("rsqrt", qb.rsqrt, jax.lax.rsqrt, [U((3, 4), 0.1, 4)]),
    ("sigmoid", qb.sigmoid, jax.nn.sigmoid, [U((3, 4), -4, 4)]),
    ("softplus", qb.softplus, jax.nn.softplus, [U((3, 4), -4, 4)]),
    ("erf", qb.erf, jerf, [U((3, 4))]),
    ("abs", qb.abs, jnp.abs, [AWAY((3, 4))]),
    ("sign", lambda x: qb.sign(x) * x, lambda x: jnp.sign(x) * x, [AWAY((3, 4))]),
    ("floor", lambda x: qb.floor(x) * x, lambda x: jnp.floor(x) * x, [U((3, 4), -3, 3)]),
    ("ceil", lambda x: qb.ceil(x) + x, lambda x: jnp.ceil(x) + x, [U((3, 4), -3, 3)]),
    ("round", lambda x: qb.round(x) * x, lambda x: jnp.round(x) * x, [U((3, 4), -3, 3)]),
    ("negative", qb.negative, jnp.negative, [U((3, 4))]),
    ("relu", qb.relu, jax.nn.relu, [AWAY((3, 4))]),
    ("powi2", lambda x: x**2, lambda x: x**2, [U((3, 4))]),
    ("powi3", lambda x: x**3, lambda x: x**3, [U((3, 4))]),
    ("pow-neg-int", lambda x: x**-2, lambda x: x**-2.0, [U((4,), 0.5, 3)]),
    ("pow-half", lambda x: x**0.5, lambda x: x**0.5, [U((4,), 0.1, 4)]),
    ("rpow", lambda x: 2.0**x, lambda x: 2.0**x, [U((4,))]),
    ("pow-tensor", qb.power, jnp.power, [U((3, 4), 0.1, 3), U((3, 4))]),
    ("add", qb.add, jnp.add, [U((3, 4)), U((3, 4))]),
    ("add-bcast", qb.add, jnp.add, [U((3, 4)), U((4,))]),
    ("subtract", qb.subtract, jnp.subtract, [U((3, 1)), U((1, 4))]),
    ("multiply", qb.multiply, jnp.multiply, [U((3, 4)), U((3, 4))]),
    ("divide", qb.divide, jnp.divide, [U((3, 4)), AWAY((3, 4))]),
    ("maximum", qb.maximum, jnp.maximum, [U((3, 4)), U((3, 4))]),
    ("minimum", qb.minimum, jnp.minimum, [U((3, 4)), U((4,))]),
    ("remainder", qb.remainder, jnp.remainder, [U((3, 4), -9, 9), AWAY((3, 4))]),
    ("floor_divide", lambda a, b: (a // b) * a, lambda a, b: (a // b) * a, [U((3, 4), -9, 9), AWAY((3, 4))]),
    ("where", lambda c, x, y: qb.where(c > 0, x, y), lambda c, x, y: jnp.where(c > 0, x, y), [U((3, 4)), U((3, 4)), U((4,))]),
    ("clip", lambda x: qb.clip(x, -1.0, 1.0), lambda x: jnp.clip(x, -1.0, 1.0), [U((3, 4))]),
    ("astype-f32-roundtrip", lambda x: qb.astype(qb.astype(x, qb.float32), qb.float64) * x,
     lambda x: x.astype(jnp.float32).astype(jnp.float64) * x, [U((4,))]),
    ("sum", lambda x: qb.sum(x, axis=1), lambda x: jnp.sum(x, axis=1), [U((2, 3, 4))]),
    ("sum-all", qb.sum, jnp.sum, [U((2, 3, 4))]),
    ("prod", lambda x: qb.prod(x, axis=(0, 2)), lambda x: jnp.prod(x, axis=(0, 2)), [U((2, 3, 4))]),
    ("max", lambda x: qb.max(x, axis=-1), lambda x: jnp.max(x, axis=-1), [U((2, 3, 4))]),
    ("min", lambda x: qb.min(x, axis=0, keepdims=True), lambda x: jnp.min(x, axis=0, keepdims=True), [U((2, 3, 4))]),
    ("mean", lambda x: qb.mean(x, axis=(0, 1)), lambda x: jnp.mean(x, axis=(0, 1)), [U((2, 3, 4))]),
    ("var", lambda x: qb.var(x, axis=1), lambda x: jnp.var(x, axis=1), [U((3, 4))]),
    ("std", qb.std, jnp.std, [U((3, 4))]),
    ("logsumexp", lambda x: qb.logsumexp(x, axis=1), lambda x: jlogsumexp(x, axis=1), [U((3, 4))]),
    ("norm", qb.norm, lambda x: jnp.sqrt(jnp.sum(x * x)), [U((3, 4))]),
    ("softmax", qb.softmax, jax.nn.softmax, [U((3, 4))]),
    ("matmul", qb.matmul, jnp.matmul, [U((3, 4)), U((4, 5))]),
    ("matmul-batch", qb.matmul, jnp.matmul, [U((2, 3, 4)), U((4, 5))]),
    ("matmul-vec-mat", qb.matmul, jnp.matmul, [U((4,)), U((4, 5))]),
    ("matmul-mat-vec", qb.matmul, jnp.matmul, [U((3, 4)), U((4,))]),
    ("matmul-vec-vec", qb.matmul, jnp.matmul, [U((4,)), U((4,))]),
    ("dot-nd", qb.dot, jnp.dot, [U((2, 3, 4)), U((5, 4, 2))]),
    ("tensordot", qb.tensordot, jnp.tensordot, [U((2, 3, 4)), U((3, 4, 5))]),
    ("einsum-bij", lambda a, b: qb.einsum("bij,bjk->bik", a, b), lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
     [U((2, 3, 4)), U((2, 4, 5))]),
    ("einsum-chain", lambda a, b, c: qb.einsum("ij,jk,kl->il", a, b, c),
     lambda a, b, c: jnp.einsum("ij,jk,kl->il", a, b, c), [U((2, 3)), U((3, 4)), U((4, 5))]),
    ("reshape", lambda x: qb.reshape(x, (4, -1)) * 2.0, lambda x: jnp.reshape(x, (4, -1)) * 2.0, [U((2, 3, 4))]),
    ("transpose", lambda x: qb.transpose(x, (1, 2, 0)), lambda x: jnp.transpose(x, (1, 2, 0)), [U((2, 3, 4))]),
    ("swapaxes", lambda x: qb.swapaxes(x, 0, -1), lambda x: jnp.swapaxes(x, 0, -1), [U((2, 3, 4))]),
    ("expand_squeeze", lambda x: qb.squeeze(qb.expand_dims(x, 1)) * x, lambda x: jnp.squeeze(jnp.expand_dims(x, 1)) * x,
     [U((3, 4))]),
    ("broadcast_to", lambda x: qb.broadcast_to(x, (2, 3, 4)), lambda x: jnp.broadcast_to(x, (2, 3, 4)), [U((3, 1))]),
    ("concatenate", lambda a, b: qb.concatenate([a, b, a], axis=1), lambda a, b: jnp.concatenate([a, b, a], axis=1),
     [U((2, 3)), U((2, 2))]),
    ("stack", lambda a, b: qb.stack([a, b], axis=-1), lambda a, b: jnp.stack([a, b], axis=-1), [U((2, 3)), U((2, 3))]),
    ("split", lambda x: qb.split(x, [1, 4], axis=1), lambda x: jnp.split(x, [1, 4], axis=1), [U((2, 6))]),
    ("getitem-slices", lambda x: x[1:, ::-2, 0], lambda x: x[1:, ::-2, 0], [U((4, 5, 3))]),
    ("getitem-array", lambda x: x[np.array([2, 0, -1])], lambda x: x[np.array([2, 0, -1])], [U((4, 5))]),
    ("take", lambda x: qb.take(x, np.array([[0, 2], [1, 1]]), axis=1),
     lambda x: jnp.take(x, np.array([[0, 2], [1, 1]]), axis=1), [U((3, 4))]),
]


def _weights(out, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=np.shape(o)) for o in jax.tree_util.tree_leaves(out)]


@pytest.mark.parametrize("name,qf,jf,args", OPS, ids=[o[0] for o in OPS])
def test_op_derivatives_equal_jax(name, qf, jf, args):
    """JVP (random tangents), VJP (random cotangents) and the Hessian-vector product of a
    random projection of the output, in one compiled Quabla program, against JAX."""
    rng = np.random.default_rng(7)
    ts = [rng.normal(size=a.shape) for a in args]
    out = jf(*args)
    ws = _weights(out, 3)
    tree = jax.tree_util.tree_structure(out)
    ct = jax.tree_util.tree_unflatten(tree, ws)

    def jproj(*xs):
        return sum(jnp.sum(o * w) for o, w in zip(jax.tree_util.tree_leaves(jf(*xs)), ws))

    want_t = jax.jvp(jf, tuple(args), tuple(ts))[1]
    want_c = jax.vjp(jf, *args)[1](ct)
    want_h = jax.jvp(jax.grad(jproj, argnums=tuple(range(len(args)))), tuple(args), tuple(ts))[1]

    def qproj(*xs):
        return sum(qb.sum(o * qb.array(w)) for o, w in zip(qb.tree.flatten(qf(*xs))[0], ws))

    @qb.jit
    def program(*xs):
        t = qb.jvp(qf, xs, tuple(qb.array(v) for v in ts))[1]
        _, pull = qb.vjp(qf, *xs)
        c = pull(qb.tree.unflatten(qb.tree.flatten(t)[1], [qb.array(w) for w in ws]))
        h = qb.jvp(qb.grad(qproj, argnums=tuple(range(len(xs)))), xs, tuple(qb.array(v) for v in ts))[1]
        return t, c, h

    got_t, got_c, got_h = program(*[qb.array(a) for a in args])
    close(got_t, want_t, what="jvp")
    close(got_c, want_c, what="vjp")
    close(got_h, want_h, what="hvp")


# ---------------------------------------------------------------------------------------------
# Scalar functions, second order


SCALAR = [
    ("sin_x_times_x", lambda x: qb.sin(x) * x, lambda x: jnp.sin(x) * x, lambda x: 2 * math.cos(x) - x * math.sin(x)),
    ("x3_sin", lambda x: x**3 * qb.sin(x), lambda x: x**3 * jnp.sin(x),
     lambda x: 6 * x * math.sin(x) + 6 * x * x * math.cos(x) - x**3 * math.sin(x)),
    ("exp_tanh", lambda x: qb.exp(qb.tanh(x)), lambda x: jnp.exp(jnp.tanh(x)), None),
    ("log1p_sq", lambda x: qb.log1p(x * x), lambda x: jnp.log1p(x * x), lambda x: (2 - 2 * x * x) / (1 + x * x) ** 2),
    ("pow", lambda x: x**2.5 + qb.sqrt(x), lambda x: x**2.5 + jnp.sqrt(x), lambda x: 3.75 * x**0.5 - 0.25 * x**-1.5),
]


@pytest.mark.parametrize("name,qf,jf,exact", SCALAR, ids=[s[0] for s in SCALAR])
def test_grad_grad_scalar(name, qf, jf, exact):
    x = 1.3
    got = qb.grad(qb.grad(qf))(x)
    want = jax.grad(jax.grad(jf))(x)
    close(got, want)
    if exact is not None:
        assert abs(got.item() - exact(x)) <= 1e-12 * (1 + abs(exact(x)))
    assert got.dtype == qb.float64 and got.shape == ()
    # third order, and the jitted form
    close(qb.grad(qb.grad(qb.grad(qf)))(x), jax.grad(jax.grad(jax.grad(jf)))(x))
    close(qb.jit(qb.grad(qb.grad(qf)))(qb.array(x)), want)


def test_hvp():
    rng = np.random.default_rng(0)
    x, v = rng.normal(size=5), rng.normal(size=5)

    def f(x):
        return qb.sum(qb.sin(x) ** 3 * qb.exp(x[::-1])) + qb.sum(x) ** 2

    def fj(x):
        return jnp.sum(jnp.sin(x) ** 3 * jnp.exp(x[::-1])) + jnp.sum(x) ** 2

    want = jax.jvp(jax.grad(fj), (x,), (v,))[1]
    close(qb.jvp(qb.grad(f), (qb.array(x),), (qb.array(v),))[1], want)
    close(qb.jit(lambda x, v: qb.jvp(qb.grad(f), (x,), (v,))[1])(qb.array(x), qb.array(v)), want)
    # reverse over reverse: grad of <grad f, v>
    close(qb.grad(lambda x: qb.sum(qb.grad(f)(x) * qb.array(v)))(qb.array(x)), want)
    # vmap of HVP over a batch of directions = the Hessian
    vs = rng.normal(size=(3, 5))
    hv = qb.vmap(lambda v: qb.jvp(qb.grad(f), (qb.array(x),), (v,))[1])(qb.array(vs))
    close(hv, jax.vmap(lambda v: jax.jvp(jax.grad(fj), (x,), (v,))[1])(vs))


# ---------------------------------------------------------------------------------------------
# Pytrees: jacobian, hessian, has_aux, argnums


def _vf(p, y, s):
    h = qb.tanh(p["w"] @ y + p["b"])
    return {"h": h * s, "n": qb.sum(h**2) + p["b"][0] * s}


def _vfj(p, y, s):
    h = jnp.tanh(p["w"] @ y + p["b"])
    return {"h": h * s, "n": jnp.sum(h**2) + p["b"][0] * s}


def _tree_args(seed=1):
    rng = np.random.default_rng(seed)
    p = {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=3)}
    y, s = rng.normal(size=4), 0.7
    qp = {k: qb.array(v) for k, v in p.items()}
    return (qp, qb.array(y), qb.array(s)), (p, y, s)


@pytest.mark.parametrize("argnums", [0, 1, (0, 2), (2, 1, 0)])
def test_jacobian_pytrees(argnums):
    qa, ja = _tree_args()
    want = jax.jacobian(_vfj, argnums=argnums)(*ja)
    got = qb.jacobian(_vf, argnums=argnums)(*qa)
    close(got, want, what=f"jacobian argnums={argnums}")
    # both directions: jacfwd/jacrev agree with each other in JAX, and each of ours is one of them
    close(got, jax.jacrev(_vfj, argnums=argnums)(*ja))


def test_jacobian_direction_by_size():
    rng = np.random.default_rng(2)
    x = rng.normal(size=6)
    # wide: 2 outputs, 6 inputs -> reverse; tall: 6x6 -> forward. Both equal JAX.
    f = lambda x: qb.stack([qb.sum(qb.sin(x)), qb.sum(x**2)])  # noqa: E731
    fj = lambda x: jnp.stack([jnp.sum(jnp.sin(x)), jnp.sum(x**2)])  # noqa: E731
    low = qb.jit(qb.jacobian(f)).lower(qb.array(x)).as_text()
    assert '"vjp"' in low and '"jvp"' not in low
    close(qb.jacobian(f)(qb.array(x)), jax.jacobian(fj)(x))
    g = lambda x: qb.sin(x) * qb.sum(x)  # noqa: E731
    low = qb.jit(qb.jacobian(g)).lower(qb.array(x)).as_text()
    assert '"jvp"' in low and '"vjp"' not in low
    close(qb.jacobian(g)(qb.array(x)), jax.jacobian(lambda x: jnp.sin(x) * jnp.sum(x))(x))


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_hessian_pytrees(argnums):
    qa, ja = _tree_args(3)

    def f(p, y, s):
        return qb.sum(_vf(p, y, s)["h"] ** 3) + _vf(p, y, s)["n"] * qb.sum(y)

    def fj(p, y, s):
        return jnp.sum(_vfj(p, y, s)["h"] ** 3) + _vfj(p, y, s)["n"] * jnp.sum(y)

    close(qb.hessian(f, argnums=argnums)(*qa), jax.hessian(fj, argnums=argnums)(*ja))
    close(qb.jit(qb.hessian(f, argnums=argnums))(*qa), jax.hessian(fj, argnums=argnums)(*ja))


def test_hessian_of_function_using_jit():
    inner = qb.jit(lambda y: qb.sum(qb.exp(y) * y**2))
    x = np.array([0.3, -0.4, 1.1])
    got = qb.hessian(lambda x: inner(x) + qb.sum(x) ** 3)(qb.array(x))
    close(got, jax.hessian(lambda x: jnp.sum(jnp.exp(x) * x**2) + jnp.sum(x) ** 3)(x))


def test_has_aux_and_argnums_tuple():
    qa, ja = _tree_args(4)

    def loss(p, y, s):
        out = _vf(p, y, s)
        return qb.sum(out["h"]) * out["n"], {"h": out["h"], "n2": out["n"] * 2}

    def lossj(p, y, s):
        out = _vfj(p, y, s)
        return jnp.sum(out["h"]) * out["n"], {"h": out["h"], "n2": out["n"] * 2}

    for argnums in [0, (0, 1), (2, 0)]:
        (v, aux), g = qb.value_and_grad(loss, argnums=argnums, has_aux=True)(*qa)
        (vj, auxj), gj = jax.value_and_grad(lossj, argnums=argnums, has_aux=True)(*ja)
        close(v, vj)
        close(aux, auxj)
        close(g, gj, what=f"argnums={argnums}")
        g2, aux2 = qb.grad(loss, argnums=argnums, has_aux=True)(*qa)
        close(g2, gj)
        close(aux2, auxj)
    g = qb.grad(lambda p, y, s: loss(p, y, s)[0], argnums=(0,))(*qa)
    assert isinstance(g, tuple) and len(g) == 1 and set(g[0]) == {"b", "w"}


def test_vjp_and_jvp_pytrees():
    qa, ja = _tree_args(5)
    out, pull = qb.vjp(_vf, *qa)
    outj, pullj = jax.vjp(_vfj, *ja)
    close(out, outj)
    rng = np.random.default_rng(0)
    ct = {"h": rng.normal(size=3), "n": 1.5}
    close(pull({"h": qb.array(ct["h"]), "n": 1.5}), pullj(ct))
    ts = ({"w": rng.normal(size=(3, 4)), "b": rng.normal(size=3)}, rng.normal(size=4), 0.5)
    qts = ({k: qb.array(v) for k, v in ts[0].items()}, qb.array(ts[1]), 0.5)
    o, t = qb.jvp(_vf, qa, qts)
    oj, tj = jax.jvp(_vfj, ja, ts)
    close(o, oj)
    close(t, tj)
    # vjp with has_aux
    out, pull, aux = qb.vjp(lambda x: (qb.sin(x), x * 2), qb.array([0.1, 0.2]), has_aux=True)
    close(pull(qb.array([1.0, 1.0]))[0], np.cos([0.1, 0.2]))
    close(aux, np.array([0.2, 0.4]))


# ---------------------------------------------------------------------------------------------
# MLP, closures


def _mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return {"w1": rng.normal(size=(3, 8)) * 0.5, "b1": rng.normal(size=8) * 0.1,
            "w2": rng.normal(size=(8, 2)) * 0.5, "b2": rng.normal(size=2) * 0.1}


def test_mlp_loss_params_dict():
    p = _mlp_params()
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(16, 3)), rng.normal(size=(16, 2))

    def loss(p, x, y):
        h = qb.tanh(x @ p["w1"] + p["b1"])
        return qb.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    def lossj(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    qp = {k: qb.array(v) for k, v in p.items()}
    v, g = qb.jit(qb.value_and_grad(loss))(qp, qb.array(x), qb.array(y))
    vj, gj = jax.value_and_grad(lossj)(p, x, y)
    close(v, vj)
    close(g, gj)
    assert set(g) == set(p) and all(g[k].shape == p[k].shape for k in p)
    # per-example gradients of the same loss
    pe = qb.vmap(qb.grad(loss), in_axes=(None, 0, 0))(qp, qb.array(x[:, None]), qb.array(y[:, None]))
    pej = jax.vmap(jax.grad(lossj), in_axes=(None, 0, 0))(p, x[:, None], y[:, None])
    close(pe, pej)


def test_closures_over_outer_tracers_two_levels():
    def f(w, y):
        def mid(z):
            # closes over w (two levels up) and z (one level up)
            return qb.grad(lambda x: qb.sin(x * w * z) * y)(0.3)

        return qb.grad(mid)(1.5) * w + qb.sum(qb.vmap(lambda x: x * w)(qb.array([1.0, 2.0])))

    def fj(w, y):
        def mid(z):
            return jax.grad(lambda x: jnp.sin(x * w * z) * y)(0.3)

        return jax.grad(mid)(1.5) * w + jnp.sum(jax.vmap(lambda x: x * w)(jnp.array([1.0, 2.0])))

    w, y = 1.2, 0.8
    close(qb.grad(f, argnums=(0, 1))(w, y), jax.grad(fj, argnums=(0, 1))(w, y))
    close(qb.jit(qb.value_and_grad(f))(qb.array(w), qb.array(y)), jax.value_and_grad(fj)(w, y))
    close(qb.hessian(f)(w, y), jax.hessian(fj)(w, y))
    # a pullback closing over an outer tracer, and jvp of a closure
    g = lambda w: qb.vjp(lambda x: qb.sin(x * w), 0.5)[1](1.0)[0] + qb.jvp(lambda x: x * w * w, (1.0,), (1.0,))[1]  # noqa: E731
    gj = lambda w: jax.vjp(lambda x: jnp.sin(x * w), 0.5)[1](1.0)[0] + jax.jvp(lambda x: x * w * w, (1.0,), (1.0,))[1]  # noqa: E731
    close(qb.grad(g)(0.9), jax.grad(gj)(0.9))


def test_mlp_pinn_closure_form_equals_argument_form():
    """grad(grad(lambda x: net(params, x))) closed over the params dict equals the
    explicit-argument form vmap(grad(grad(net)), in_axes=(None, 0))."""
    p = _mlp_params(2)
    p = {"w1": p["w1"][:1], "b1": p["b1"], "w2": p["w2"][:, :1], "b2": p["b2"][:1]}
    xs = np.linspace(0.1, 0.9, 5)

    def net(p, x):
        h = qb.tanh(x * p["w1"][0] + p["b1"])
        return (h @ p["w2"])[0] + p["b2"][0]

    def netj(p, x):
        h = jnp.tanh(x * p["w1"][0] + p["b1"])
        return (h @ p["w2"])[0] + p["b2"][0]

    def loss_closure(p, xs):
        uxx = qb.vmap(qb.grad(qb.grad(lambda x: net(p, x))))(xs)
        return qb.mean((uxx + qb.sin(xs)) ** 2)

    def loss_args(p, xs):
        uxx = qb.vmap(qb.grad(qb.grad(net, argnums=1), argnums=1), in_axes=(None, 0))(p, xs)
        return qb.mean((uxx + qb.sin(xs)) ** 2)

    def lossj(p, xs):
        uxx = jax.vmap(jax.grad(jax.grad(lambda x: netj(p, x))))(xs)
        return jnp.mean((uxx + jnp.sin(xs)) ** 2)

    qp = {k: qb.array(v) for k, v in p.items()}
    a = qb.jit(qb.value_and_grad(loss_closure))(qp, qb.array(xs))
    b = qb.jit(qb.value_and_grad(loss_args))(qp, qb.array(xs))
    close(a, jax.value_and_grad(lossj)(p, xs))
    close(a, b, tol=1e-15)


# ---------------------------------------------------------------------------------------------
# Composition with jit, dtypes, caching


def test_jit_and_grad_compose():
    f = lambda x: qb.sum(qb.sin(x) * x)  # noqa: E731
    fj = lambda x: jnp.sum(jnp.sin(x) * x)  # noqa: E731
    x = np.array([0.2, 1.0, -0.7])
    want = jax.grad(fj)(x)
    close(qb.jit(qb.grad(f))(qb.array(x)), want)
    close(qb.grad(qb.jit(f))(qb.array(x)), want)
    close(qb.jit(qb.grad(qb.jit(f)))(qb.array(x)), want)
    close(qb.jvp(qb.grad(f), (qb.array(x),), (qb.ones(3),))[1], jax.jvp(jax.grad(fj), (x,), (np.ones(3),))[1])
    # a loss that calls grad of another function
    loss = lambda w: qb.sum(qb.grad(f)(w * qb.array(x)) ** 2)  # noqa: E731
    lossj = lambda w: jnp.sum(jax.grad(fj)(w * x) ** 2)  # noqa: E731
    close(qb.grad(loss)(0.8), jax.grad(lossj)(0.8))
    close(qb.jit(loss)(qb.array(0.8)), lossj(0.8))


# Regressions: two scalar reductions returned from one program once shared one CSE'd init
# buffer in the CPU pipeline (cse ran before eliminate-empty-tensors; fixed in lowering/src/target/cpu/mod.rs).


def test_two_scalar_reductions_returned():
    x = qb.array([1.0, 2.0, 3.0])
    a, b = qb.jit(lambda x: (qb.sum(x), qb.sum(x * 2.0)))(x)
    assert (a.item(), b.item()) == (6.0, 12.0)


def test_value_and_grad_of_loss_calling_grad():
    f = lambda x: qb.sum(qb.sin(x) * x)  # noqa: E731
    fj = lambda x: jnp.sum(jnp.sin(x) * x)  # noqa: E731
    x = np.array([0.2, 1.0, -0.7])
    loss = lambda w: qb.sum(qb.grad(f)(w * qb.array(x)) ** 2)  # noqa: E731
    lossj = lambda w: jnp.sum(jax.grad(fj)(w * x) ** 2)  # noqa: E731
    close(qb.value_and_grad(loss)(0.8), jax.value_and_grad(lossj)(0.8))


def test_dtypes_and_scalars():
    x32 = qb.array([0.5, 1.5], dtype=qb.float32)
    g = qb.grad(lambda x: qb.sum(x**2))(x32)
    assert g.dtype == qb.float32 and g.tolist() == [1.0, 3.0]
    # Python scalars in differentiated positions are float64
    g = qb.grad(lambda x, n: x**n, argnums=0)(2, 3)
    assert g.dtype == qb.float64 and g.item() == 12.0
    # bool leaves get None
    g = qb.grad(lambda p: qb.sum(qb.where(p["m"], p["x"], 0.0)))({"x": qb.array([1.0, 2.0]), "m": qb.array([True, False])})
    assert g["m"] is None and g["x"].tolist() == [1.0, 0.0]
    # integer tangents/outputs
    o, t = qb.jvp(lambda x: (x * 2, qb.argmax(x)), (qb.array([1.0, 3.0]),), (qb.array([1.0, 1.0]),))
    assert o[1].item() == 1 and t[1].item() == 0 and t[0].tolist() == [2.0, 2.0]


def test_top_level_transforms_compile_once_and_cache():
    calls = []

    def f(x):
        calls.append(1)
        return qb.sum(qb.exp(x))

    x = qb.array([0.0, 1.0])
    for _ in range(3):
        qb.grad(f)(x)  # re-created each time: one trace, cached on f
    qb.value_and_grad(f)(x)
    assert len(calls) == 2
    qb.grad(f)(qb.array([0.0, 1.0, 2.0]))  # a new shape: a new trace
    assert len(calls) == 3


def test_transform_cache_is_lru_bounded():
    # A transformed function called at top level keeps at most 8 signatures (LRU), like jit.
    import numpy as np

    g = qb.grad(lambda x: qb.sum(x * x))
    for n in range(1, 13):
        np.testing.assert_allclose(g(qb.ones(n)).numpy(), 2.0 * np.ones(n))
    assert g._jitted()._cache_size == 8


# Gradients of shifted slices: sums of pads of the cotangent, split into boxes between the
# pads' edges by quabla-fold (split_pads; thin bands stay small pads), large enough to split.
def _stencil(m):
    def f(x):
        lap = x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:] + x[1:-1, :-2] - 4 * x[1:-1, 1:-1]
        return m.sum(lap**2)

    return f


SHIFTED = [
    ("diff axis 1", lambda m: lambda x: m.sum(m.diff(x, axis=1) ** 2)),
    ("diff axis 0", lambda m: lambda x: m.mean((x[1:] - x[:-1]) ** 2)),
    ("roll", lambda m: lambda x: m.sum(m.roll(x, 3, axis=1) * x)),
    ("stencil", _stencil),
    ("tanh of the flat array", lambda m: lambda x: m.sum(m.tanh(x.reshape(-1)))),
    ("pads of a product", lambda m: lambda x: m.sum(m.pad(x * x, ((1, 2), (0, 3))) * m.pad(x, ((2, 1), (3, 0))))),
    ("even and odd columns", lambda m: lambda x: m.sum((x[:, ::2] + x[:, 1::2]) ** 2)),
    ("every fourth row, shifted", lambda m: lambda x: m.sum(m.tanh(x[1::4] * x[3::4]))),
    ("strided rows and columns", lambda m: lambda x: m.sum(m.sin(x[1::2, ::3]) * x[1::2, ::3])),
    ("every other element, squared", lambda m: lambda x: m.sum(x[::2, ::2] ** 2)),
    ("3-D stencil", lambda m: lambda x: m.sum((x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:] + x[1:-1, :-2] - 4 * x[1:-1, 1:-1]) ** 2)),
]


@pytest.mark.parametrize("name,make", SHIFTED, ids=[s[0] for s in SHIFTED])
@pytest.mark.parametrize("shape", [(96, 80), (8, 1024), (40, 40, 40)])
def test_grad_of_shifted_slices(name, make, shape):
    if (name == "3-D stencil") != (len(shape) == 3) and name in ("3-D stencil", "tanh of the flat array", "pads of a product"):
        pytest.skip("2-D pad widths, or a 3-D array's program")
    x = np.random.default_rng(5).normal(size=shape).astype(np.float32)
    want = jax.grad(make(jnp))(x)
    close(qb.grad(make(qb))(x), want, tol=2e-5)
    close(qb.jit(qb.grad(make(qb)))(x), want, tol=2e-5)


# Repeats and short sums along middle dims: reshapes of elementwise trees sunk to where the
# values come from, sums over 2-4 elements of a middle dim as sums of slices (fold.rs
# sunk_reshape, summed_columns).
REPEATED = [
    ("2-D upsampling", lambda m: lambda x: m.sum(m.repeat(m.repeat(x, 2, 0), 2, 1) ** 2)),
    ("upsampling by 3 and 2, tanh", lambda m: lambda x: m.sum(m.tanh(m.repeat(m.repeat(x, 3, 0), 2, 1)))),
    ("upsampling times x's own", lambda m: lambda x: m.sum(m.repeat(m.repeat(x, 2, 0), 2, 1) * m.repeat(m.repeat(x * x, 2, 0), 2, 1))),
    ("sum over a middle dim of 4", lambda m: lambda x: m.sum(m.sin(x.reshape(x.shape[0] // 4, 4, -1)).sum(1) ** 2)),
    ("repeat along the rows, then a row sum", lambda m: lambda x: m.sum(m.repeat(x, 3, 0).reshape(x.shape[0], 3, -1).sum(1) * x)),
]


@pytest.mark.parametrize("name,make", REPEATED, ids=[s[0] for s in REPEATED])
@pytest.mark.parametrize("shape", [(96, 80), (8, 1024)])
def test_grad_of_repeats(name, make, shape):
    x = np.random.default_rng(6).normal(size=shape).astype(np.float32)
    want = jax.grad(make(jnp))(x)
    close(qb.grad(make(qb))(x), want, tol=2e-5)
    close(qb.jit(qb.grad(make(qb)))(x), want, tol=2e-5)


def test_abs_derivative_follows_jax_at_zero():
    # JAX's convention: d|x|/dx = 1 where x >= 0 (at 0 and -0 too), -1 elsewhere.
    x = np.array([-2.0, -0.0, 0.0, 3.0, np.nan])
    got = qb.vmap(qb.grad(qb.abs))(x)
    want = jax.vmap(jax.grad(jnp.abs))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(qb.jvp(qb.abs, (x,), (np.ones(5),))[1]), np.asarray(jax.jvp(jnp.abs, (x,), (np.ones(5),))[1]))
