"""qb.nn against jax.nn (x64): every function eagerly and under jit, check_grads to second
order, vmap against a loop, JAX's keyword arguments (axis, where, approximate, alpha,
negative_slope, num_classes/dtype/axis, mean/variance/epsilon), the kinks' derivatives."""

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close, check_all

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(11)


def U(shape, lo=-3.0, hi=3.0):
    # Away from the kinks at 0 (and 6 for relu6), where finite differences straddle them.
    x = RNG.uniform(lo, hi, size=shape)
    return np.where(np.abs(x) < 0.05, 0.3, x)


MASK = RNG.uniform(size=(3, 5)) > 0.3
MASK[:, 0] = True

CASES = [
    ("relu", qb.nn.relu, jax.nn.relu, U((3, 5))),
    ("relu6", qb.nn.relu6, jax.nn.relu6, U((3, 5), -2, 9) + np.where(np.abs(U((3, 5), -2, 9) - 6) < 0.05, 0.2, 0)),
    ("gelu-tanh", qb.nn.gelu, jax.nn.gelu, U((3, 5))),
    ("gelu-exact", lambda x: qb.nn.gelu(x, approximate=False), lambda x: jax.nn.gelu(x, approximate=False), U((3, 5))),
    ("silu", qb.nn.silu, jax.nn.silu, U((3, 5))),
    ("swish", qb.nn.swish, jax.nn.swish, U((3, 5))),
    ("elu", qb.nn.elu, jax.nn.elu, U((3, 5))),
    ("elu-alpha", lambda x: qb.nn.elu(x, 0.5), lambda x: jax.nn.elu(x, 0.5), U((3, 5))),
    ("celu", lambda x: qb.nn.celu(x, 1.5), lambda x: jax.nn.celu(x, 1.5), U((3, 5))),
    ("selu", qb.nn.selu, jax.nn.selu, U((3, 5))),
    ("leaky_relu", qb.nn.leaky_relu, jax.nn.leaky_relu, U((3, 5))),
    ("leaky_relu-slope", lambda x: qb.nn.leaky_relu(x, negative_slope=0.2), lambda x: jax.nn.leaky_relu(x, negative_slope=0.2), U((3, 5))),
    ("softplus", qb.nn.softplus, jax.nn.softplus, U((3, 5), -30, 30)),
    ("soft_sign", qb.nn.soft_sign, jax.nn.soft_sign, U((3, 5))),
    ("sigmoid", qb.nn.sigmoid, jax.nn.sigmoid, U((3, 5))),
    ("log_sigmoid", qb.nn.log_sigmoid, jax.nn.log_sigmoid, U((3, 5), -40, 40)),
    ("hard_tanh", qb.nn.hard_tanh, jax.nn.hard_tanh, U((3, 5)) * np.where(np.abs(np.abs(U((3, 5))) - 1) < 0.05, 0.0, 1.0) + 0.0),
    ("hard_sigmoid", qb.nn.hard_sigmoid, jax.nn.hard_sigmoid, U((3, 5), -2.9, 2.9)),
    ("hard_silu", qb.nn.hard_silu, jax.nn.hard_silu, U((3, 5), -2.9, 2.9)),
    ("softmax", qb.nn.softmax, jax.nn.softmax, U((3, 5))),
    ("softmax-axis0", lambda x: qb.nn.softmax(x, axis=0), lambda x: jax.nn.softmax(x, axis=0), U((3, 5))),
    ("softmax-axes", lambda x: qb.nn.softmax(x, axis=(0, 1)), lambda x: jax.nn.softmax(x, axis=(0, 1)), U((3, 5))),
    ("softmax-where", lambda x: qb.nn.softmax(x, where=qb.array(MASK)), lambda x: jax.nn.softmax(x, where=MASK), U((3, 5))),
    ("log_softmax", qb.nn.log_softmax, jax.nn.log_softmax, U((3, 5))),
    ("log_softmax-axis0", lambda x: qb.nn.log_softmax(x, axis=0), lambda x: jax.nn.log_softmax(x, axis=0), U((3, 5))),
    ("logsumexp", lambda x: qb.nn.logsumexp(x, axis=1), lambda x: jax.nn.logsumexp(x, axis=1), U((3, 5))),
    ("logsumexp-b", lambda x: qb.nn.logsumexp(x, axis=0, b=2.0, keepdims=True), lambda x: jax.nn.logsumexp(x, axis=0, b=2.0, keepdims=True), U((3, 5))),
    ("standardize", qb.nn.standardize, jax.nn.standardize, U((3, 5))),
    ("standardize-axis0-eps", lambda x: qb.nn.standardize(x, axis=0, epsilon=0.1), lambda x: jax.nn.standardize(x, axis=0, epsilon=0.1), U((3, 5))),
]


@pytest.mark.parametrize("name,f,j,x", CASES, ids=[c[0] for c in CASES])
def test_against_jax(name, f, j, x):
    check_all(f, lambda a: np.asarray(j(a)), [x], rtol=1e-12, atol=1e-13)


def test_log_softmax_where():
    x = U((3, 5))
    got = qb.nn.log_softmax(qb.array(x), where=qb.array(MASK))
    want = np.asarray(jax.nn.log_softmax(x, where=MASK))
    assert_close(got, want)
    g = qb.grad(lambda a: qb.sum(qb.where(qb.array(MASK), qb.nn.log_softmax(a, where=qb.array(MASK)), 0.0) * qb.array(x)))(qb.array(x))
    gj = jax.grad(lambda a: jnp.sum(jnp.where(MASK, jax.nn.log_softmax(a, where=MASK), 0.0) * x))(x)
    assert_close(g, np.asarray(gj))


def test_kink_derivatives_match_jax():
    pts = np.array([0.0, 6.0, -1.0, 1.0, 3.0])
    for f, j in [(qb.nn.relu, jax.nn.relu), (qb.nn.relu6, jax.nn.relu6), (qb.nn.leaky_relu, jax.nn.leaky_relu), (qb.nn.elu, jax.nn.elu), (qb.nn.celu, jax.nn.celu), (qb.nn.hard_tanh, jax.nn.hard_tanh)]:
        g = qb.vmap(qb.grad(f))(qb.array(pts))
        gj = jax.vmap(jax.grad(j))(pts)
        assert_close(g, np.asarray(gj), what=f.__name__)


def test_softmax_large_inputs_and_f32():
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, 0.0, 1.0]])
    assert_close(qb.nn.softmax(qb.array(x)), np.asarray(jax.nn.softmax(x)))
    assert_close(qb.nn.log_softmax(qb.array(x)), np.asarray(jax.nn.log_softmax(x)))
    x32 = U((4,)).astype(np.float32)
    r = qb.nn.gelu(qb.array(x32))
    assert r.dtype == qb.float32
    assert_close(r, np.asarray(jax.nn.gelu(x32)), rtol=2e-6, atol=1e-6)


def test_one_hot():
    i = np.array([[0, 2, 5], [-1, 1, 3]])
    for kw in [{}, {"axis": 0}, {"axis": 1}, {"dtype": qb.int32}]:
        jkw = dict(kw)
        if "dtype" in jkw:
            jkw["dtype"] = jnp.int32
        got = qb.nn.one_hot(qb.array(i), 4, **kw)
        want = np.asarray(jax.nn.one_hot(i, 4, **jkw))
        assert_close(got, want, what=str(kw))
        assert_close(qb.jit(lambda a, kw=kw: qb.nn.one_hot(a, 4, **kw))(qb.array(i)), want)
    assert_close(qb.vmap(lambda a: qb.nn.one_hot(a, 3))(qb.array(i)), np.asarray(jax.nn.one_hot(i, 3)))
    with pytest.raises(qb.ShapeError):
        qb.nn.one_hot(qb.array([1]), 0)


def test_standardize_given_moments_and_where():
    x = U((3, 5))
    m = np.mean(x, -1, keepdims=True)
    v = np.var(x, -1, keepdims=True)
    assert_close(qb.nn.standardize(qb.array(x), mean=qb.array(m), variance=qb.array(v)), np.asarray(jax.nn.standardize(x, mean=m, variance=v)))
    assert_close(qb.nn.standardize(qb.array(x), where=qb.array(MASK)), np.asarray(jax.nn.standardize(x, where=MASK)))
