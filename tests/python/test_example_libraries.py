"""qb.flatten_util.ravel_pytree, qb.example_libraries (stax, optimizers) and the
jax.nn.initializers port (quabla._initializers) against JAX (x64): values, dtypes, key usage,
shapes, jit/grad/vmap, and typed errors."""

import builtins
import doctest

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close, to_np
from quabla import _initializers as initializers
from quabla import errors
from quabla.example_libraries import optimizers, stax
from quabla.flatten_util import ravel_pytree

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.flatten_util  # noqa: E402
import jax.nn.initializers as jinit  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.example_libraries import optimizers as jopt  # noqa: E402
from jax.example_libraries import stax as jstax  # noqa: E402


def _leaves_close(got, want, rtol=1e-12, atol=1e-12):
    gl, gt = qb.tree_util.tree_flatten(got)
    wl, wt = jax.tree_util.tree_flatten(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        assert to_np(g).dtype == np.asarray(w).dtype, (to_np(g).dtype, np.asarray(w).dtype)
        assert_close(g, np.asarray(w), rtol, atol)


# ---------------------------------------------------------------------------------------------
# flatten_util


def _tree_np():
    return {"w": np.arange(6, dtype=np.float32).reshape(2, 3) / 7, "b": [np.array([1.5, -2.0]), np.array(3, dtype=np.int32)], "s": 2.5, "m": np.array([True, False])}


def _to_qb(t):
    return qb.tree_util.tree_map(lambda x: qb.asarray(x) if isinstance(x, np.ndarray) else x, t)


def test_ravel_pytree_matches_jax():
    t = _tree_np()
    flat, unravel = ravel_pytree(_to_qb(t))
    jflat, junravel = jax.flatten_util.ravel_pytree(t)
    assert flat.dtype == qb.float64 and np.asarray(jflat).dtype == np.float64
    assert_close(flat, np.asarray(jflat))
    back = unravel(flat * 2)
    jback = junravel(jflat * 2)
    _leaves_close(back, jback)
    assert qb.tree_util.tree_structure(back) == qb.tree_util.tree_structure(_to_qb(t))
    assert unravel == ravel_pytree(_to_qb(t))[1] and hash(unravel) == hash(ravel_pytree(_to_qb(t))[1])
    # one dtype: a float32 result; unravel keeps the dtype of what it is given (JAX's polymorphism)
    t32 = {"a": np.ones((2, 2), np.float32), "b": np.float32(3.0)}
    f32, un32 = ravel_pytree(_to_qb(t32))
    jf32, jun32 = jax.flatten_util.ravel_pytree(t32)
    assert f32.dtype == qb.float32 and np.asarray(jf32).dtype == np.float32
    _leaves_close(un32(f32.astype(qb.float64)), jun32(jf32.astype(np.float64)))
    # a single scalar leaf
    fs, uns = ravel_pytree(qb.array(4.0))
    assert fs.shape == (1,) and uns(fs).shape == ()


def test_ravel_pytree_transforms():
    params = {"w": qb.array(np.arange(6.0).reshape(2, 3)), "b": qb.array([0.5, -1.0, 2.0])}
    flat, unravel = ravel_pytree(params)

    def loss(p):
        return qb.sum(qb.tanh(p["w"]) * p["b"]) + qb.sum(p["b"] ** 2)

    jparams = {k: np.asarray(v.numpy()) for k, v in params.items()}
    jflat, junravel = jax.flatten_util.ravel_pytree(jparams)

    def jloss(p):
        return jnp.sum(jnp.tanh(p["w"]) * p["b"]) + jnp.sum(p["b"] ** 2)

    g = qb.grad(lambda f: loss(unravel(f)))(flat)
    assert_close(g, np.asarray(jax.grad(lambda f: jloss(junravel(f)))(jflat)))
    # ravel inside jit and grad through ravel
    assert_close(qb.jit(lambda p: ravel_pytree(p)[0])(params), np.asarray(jflat))
    gp = qb.grad(lambda p: qb.sum(ravel_pytree(p)[0] ** 3))(params)
    _leaves_close(gp, jax.grad(lambda p: jnp.sum(jax.flatten_util.ravel_pytree(p)[0] ** 3))(jparams))
    assert_close(qb.jit(lambda f: loss(unravel(f)))(flat), np.asarray(jloss(jparams)))
    # vmap of unravel
    batch = np.stack([np.asarray(jflat) * k for k in (1.0, 2.0, 3.0)])
    out = qb.vmap(unravel)(qb.array(batch))
    assert out["w"].shape == (3, 2, 3)
    assert_close(out["w"], np.stack([np.asarray(junravel(b)["w"]) for b in batch]))


def test_ravel_pytree_errors():
    with pytest.raises(errors.UnsupportedOperationError):
        ravel_pytree({})
    with pytest.raises(errors.UnsupportedOperationError):
        ravel_pytree([None, ()])
    with pytest.raises(errors.ArgumentTypeError):
        ravel_pytree({"a": "text"})
    with pytest.raises(errors.ArgumentTypeError):
        ravel_pytree([lambda x: x])
    flat, unravel = ravel_pytree([qb.ones(3), qb.ones((), dtype=qb.int32)])
    with pytest.raises(errors.ShapeError):
        unravel(qb.ones(5))
    with pytest.raises(errors.ShapeError):
        unravel(qb.ones((2, 2)))
    with pytest.raises(errors.DTypeError):  # mixed dtypes: the flat array must have the promoted dtype
        unravel(qb.ones(4, dtype=qb.float32))
    with pytest.raises(errors.ArgumentTypeError):
        unravel(None)


# ---------------------------------------------------------------------------------------------
# initializers

KEY, JKEY = qb.random.PRNGKey(7), jax.random.PRNGKey(7)
INITS = [
    ("uniform", (2.0,), (3, 4)), ("normal", (0.5,), (3, 4)), ("truncated_normal", (1.5,), (4, 5)),
    ("glorot_uniform", (), (3, 2, 2, 3)), ("glorot_normal", (), (3, 2, 2, 3)), ("lecun_normal", (), (6, 4)),
    ("he_uniform", (), (6, 4)), ("orthogonal", (), (4, 6)), ("orthogonal", (2.0, 0), (3, 2, 4)),
    ("delta_orthogonal", (), (3, 1, 2, 3)),
]  # fmt: skip


# every mode (they differ in a scalar only) with 'normal', every distribution with some mode
VS = [(m, "normal") for m in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")] + [("fan_avg", "truncated_normal"), ("fan_in", "uniform")]
# JAX compiles its samplers slowly: float64 is checked on a subset (the algorithms do not depend on the dtype)
F64_INITS = (0, 1, 2, 4, 7)
VS_KW = dict(in_axis=(0,), out_axis=(3,), batch_axis=1)  # JAX compiles samplers of more than ~64 elements slowly
VS_SHAPE = (2, 2, 3, 2)


def _jax_inits(k):
    """Every JAX initializer sample of the test, in one jit (one compilation)."""
    out = {}
    for dt in (np.float32, np.float64):
        for j, (name, args, shape) in enumerate(INITS):
            if dt == np.float64 and j not in F64_INITS:
                continue
            out[f"{np.dtype(dt).name} {j}"] = getattr(jinit, name)(*args)(k, shape, dt)
        for mode, dist in VS if dt == np.float32 else VS[-2:]:
            out[f"{np.dtype(dt).name} {mode} {dist}"] = jinit.variance_scaling(1.7, mode, dist, **VS_KW)(k, VS_SHAPE, dt)
    return out


def test_initializers_match_jax():
    want = jax.jit(_jax_inits)(JKEY)
    for dt in (np.float32, np.float64):
        # float32: qb.random.truncated_normal differs from JAX's in the last bits (see report)
        tol = 1e-6 if dt == np.float32 else 1e-13
        for j, (name, args, shape) in enumerate(INITS):
            if dt == np.float64 and j not in F64_INITS:
                continue
            got = getattr(initializers, name)(*args)(KEY, shape, dt)
            assert got.dtype == dt, name
            assert_close(got, np.asarray(want[f"{np.dtype(dt).name} {j}"]), tol, tol, what=name)
        for mode, dist in VS if dt == np.float32 else VS[-2:]:
            got = initializers.variance_scaling(1.7, mode, dist, **VS_KW)(KEY, VS_SHAPE, dt)
            assert_close(got, np.asarray(want[f"{np.dtype(dt).name} {mode} {dist}"]), tol, tol, what=f"{mode} {dist}")
        assert_close(initializers.zeros(KEY, (2, 3), dt), np.zeros((2, 3), dt))
        assert_close(initializers.ones(KEY, (2, 3), dt), np.ones((2, 3), dt))
        assert_close(initializers.constant(-7.0)(KEY, (2, 3), dt), np.full((2, 3), -7.0, dt))
    # the other builders are variance_scaling with JAX's constants (compared above) or aliases
    assert initializers.xavier_uniform is initializers.glorot_uniform and initializers.kaiming_normal is initializers.he_normal
    for name, scale, mode, dist in (("lecun_uniform", 1.0, "fan_in", "uniform"), ("he_normal", 2.0, "fan_in", "truncated_normal")):
        got = getattr(initializers, name)(in_axis=0, out_axis=1)(KEY, (4, 3), np.float64)
        assert_close(got, initializers.variance_scaling(scale, mode, dist, in_axis=0, out_axis=1)(KEY, (4, 3), np.float64), 0, 0)
    # the names of jax.nn.initializers all exist
    for name in ("zeros", "ones", "constant", "uniform", "normal", "truncated_normal", "variance_scaling", "glorot_uniform",
                 "glorot_normal", "xavier_uniform", "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
                 "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal", "Initializer"):
        assert hasattr(jinit, name) and name in initializers.__all__


def test_initializers_defaults_jit_vmap():
    # dtype=None is float64 (JAX's default with x64); the builder's dtype is the default
    assert initializers.normal()(KEY, (2,)).dtype == qb.float64
    assert initializers.glorot_normal(dtype=qb.float32)(KEY, (2, 3)).dtype == qb.float32
    assert initializers.constant(3, dtype=qb.int32)(KEY, (2,)).dtype == qb.int32
    init = initializers.he_uniform()
    want = jax.jit(lambda k: (jinit.he_uniform()(k, (5, 3)), jax.vmap(lambda kk: jinit.lecun_normal()(kk, (4, 2)))(jax.random.split(k, 3))))(JKEY)
    assert_close(qb.jit(lambda k: init(k, (5, 3)))(KEY), np.asarray(want[0]), 1e-13, 1e-13)
    got = qb.vmap(lambda k: initializers.lecun_normal()(k, (4, 2)))(qb.random.split(KEY, 3))
    assert_close(got, np.asarray(want[1]), 1e-13, 1e-13)
    assert isinstance(initializers.uniform(), initializers.Initializer)


def test_initializers_errors():
    with pytest.raises(errors.InvalidArgumentError):
        initializers.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(errors.InvalidArgumentError):
        initializers.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(errors.ArgumentTypeError):
        initializers.variance_scaling("big", "fan_in", "normal")
    with pytest.raises(errors.ShapeError):  # 1-D weight with the default in_axis
        initializers.glorot_normal()(KEY, (5,))
    with pytest.raises(errors.ShapeError):
        initializers.glorot_normal(in_axis=4)(KEY, (5, 3))
    with pytest.raises(errors.ShapeError):
        initializers.normal()(KEY, (0, 3))
    with pytest.raises(errors.ArgumentTypeError):
        initializers.normal()(KEY, "shape")
    with pytest.raises(errors.ArgumentTypeError):
        initializers.normal()(KEY, (2, None))
    with pytest.raises(errors.DTypeError):
        initializers.normal()(KEY, (2,), qb.int32)
    with pytest.raises(errors.DTypeError):
        initializers.uniform(dtype="complex64")
    with pytest.raises(errors.ShapeError):
        initializers.orthogonal()(KEY, (4,))
    with pytest.raises(errors.ShapeError):
        initializers.delta_orthogonal()(KEY, (3, 3))
    with pytest.raises(errors.ShapeError):
        initializers.delta_orthogonal()(KEY, (3, 3, 4, 2))
    with pytest.raises(errors.ShapeError):
        initializers.normal()(qb.ones(3), (2,))
    with pytest.raises(errors.UnsupportedOperationError):
        initializers.zeros(KEY, (2,), out_sharding="x")
    with pytest.raises(errors.ArgumentTypeError):
        initializers.constant("seven")


# ---------------------------------------------------------------------------------------------
# optimizers

GRADS = [
    {"w": np.array([[0.3, -1.2, 0.5], [2.0, 0.0, -0.7]]), "b": [np.array([0.1, -0.4]), np.array(1.5)]},
    {"w": np.array([[-0.2, 0.9, 0.5], [1.0, 0.25, -0.1]]), "b": [np.array([0.0, 0.6]), np.array(-0.5)]},
    {"w": np.array([[0.05, 0.4, -2.5], [0.1, -0.3, 0.2]]), "b": [np.array([0.7, 0.2]), np.array(0.0)]},
]
P0 = {"w": np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]]), "b": [np.array([0.5, 0.25]), np.array(-1.0)]}


def _cast(t, dt):
    return jax.tree_util.tree_map(lambda x: np.asarray(x, dt), t)


def _opts(mod):
    return {
        "sgd": mod.sgd(0.1),
        "sgd_sched": mod.sgd(mod.exponential_decay(0.1, 2, 0.5)),
        "momentum": mod.momentum(0.1, 0.9),
        "nesterov": mod.nesterov(mod.inverse_time_decay(0.1, 2, 0.5), 0.8),
        "adagrad": mod.adagrad(0.2),
        "rmsprop": mod.rmsprop(0.05),
        "rmsprop_momentum": mod.rmsprop_momentum(0.05, gamma=0.8, momentum=0.7),
        "adam": mod.adam(0.1),
        "adam_poly": mod.adam(mod.polynomial_decay(0.1, 3, 0.01, power=2.0), b1=0.8, b2=0.99),
        "adamax": mod.adamax(0.1),
        "sm3": mod.sm3(0.3),
    }


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_optimizers_match_jax_three_steps(dtype):
    tol = 2e-6 if dtype == np.float32 else 1e-13
    qopts = _opts(optimizers)
    p0, grads = _cast(P0, dtype), [_cast(g, dtype) for g in GRADS]

    def jax_runs(p0, grads):  # every optimizer's 3 steps in one jit (the step index a Python int)
        out = {}
        for name, (ji, ju, jg) in _opts(jopt).items():
            js = ji(p0)
            for i, g in enumerate(grads):
                js = ju(i, g, js)
                out[(name, i)] = jg(js)
        return out

    wants = jax.jit(jax_runs)(p0, grads)
    for name in qopts:
        qi, qu, qg = qopts[name]
        qs = qi(_to_qb(p0))
        for i, g in enumerate(grads):
            qs = qu(i, _to_qb(g), qs)
            got, want = qg(qs), wants[(name, i)]
            for a, b in zip(qb.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                assert a.dtype == dtype, (name, a.dtype)
                assert_close(a, np.asarray(b), tol, tol, what=f"{name} step {i}")


def test_optimizers_under_jit():
    for name in ("adam", "sm3", "nesterov", "adagrad"):
        qi, qu, qg = _opts(optimizers)[name]
        ji, ju, jg = _opts(jopt)[name]
        step, jstep = qb.jit(qu), jax.jit(ju)
        qs, js = qi(_to_qb(P0)), ji(P0)
        for i, g in enumerate(GRADS):
            qs, js = step(i, _to_qb(g), qs), jstep(i, g, js)
        assert isinstance(qs, optimizers.OptimizerState)
        for a, b in zip(qb.tree_util.tree_leaves(qg(qs)), jax.tree_util.tree_leaves(jg(js))):
            assert_close(a, np.asarray(b), 1e-13, 1e-13, what=name)


def test_schedules_and_utilities():
    for qs, js in (
        (optimizers.exponential_decay(0.3, 4, 0.7), jopt.exponential_decay(0.3, 4, 0.7)),
        (optimizers.inverse_time_decay(0.3, 4, 0.7), jopt.inverse_time_decay(0.3, 4, 0.7)),
        (optimizers.inverse_time_decay(0.3, 4, 0.7, staircase=True), jopt.inverse_time_decay(0.3, 4, 0.7, staircase=True)),
        (optimizers.polynomial_decay(0.3, 5, 0.01, 1.5), jopt.polynomial_decay(0.3, 5, 0.01, 1.5)),
        (optimizers.piecewise_constant([2, 5], [0.3, 0.1, 0.01]), jopt.piecewise_constant([2, 5], [0.3, 0.1, 0.01])),
        (optimizers.make_schedule(0.25), jopt.make_schedule(0.25)),
    ):
        for i in (0, 1, 3, 5, 8):
            assert_close(np.asarray(to_np(qs(i)), np.float64), np.asarray(js(i), np.float64), 1e-14, 1e-14)
            if i < 5:  # (JAX under jit gives nan for 0.0 ** 1.5 in polynomial_decay)
                assert_close(qb.jit(qs)(i), np.asarray(jax.jit(js)(i)), 1e-14, 1e-14)
    tree = _to_qb(GRADS[0])
    assert_close(optimizers.l2_norm(tree), np.asarray(jopt.l2_norm(GRADS[0])))
    for m in (0.5, 10.0):
        _leaves_close(optimizers.clip_grads(tree, m), jopt.clip_grads(GRADS[0], m))
    # serialization round trip
    init, update, get = optimizers.momentum(0.1, 0.9)
    s = update(0, tree, init(_to_qb(P0)))
    marked = optimizers.unpack_optimizer_state(s)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    s2 = optimizers.pack_optimizer_state(marked)
    assert s2.tree_def == s.tree_def and s2.subtree_defs == s.subtree_defs
    _leaves_close(get(s2), _np_tree(get(s)))


def test_optimizer_errors():
    init, update, get = optimizers.adam(0.1)
    s = init(_to_qb(P0))
    with pytest.raises(errors.ArgumentTypeError):
        update(0, {"w": qb.ones((2, 3))}, s)
    with pytest.raises(errors.ArgumentTypeError):
        get({"not": "a state"})
    with pytest.raises(errors.ArgumentTypeError):
        optimizers.sgd("fast")
    with pytest.raises(errors.ArgumentTypeError):
        optimizers.sgd(qb.ones(3))
    with pytest.raises(errors.ArgumentTypeError):
        optimizers.momentum(0.1, None)
    with pytest.raises(errors.ArgumentTypeError):
        optimizers.adam(0.1, b1="x")
    with pytest.raises(errors.ShapeError):
        optimizers.piecewise_constant([1, 2], [0.1])
    with pytest.raises(errors.ArgumentTypeError):
        optimizers.pack_optimizer_state([1.0])
    with pytest.raises(errors.ArgumentTypeError):
        optimizers.exponential_decay("a", 1, 0.5)
    with pytest.raises(errors.ArgumentTypeError):
        init({"a": "text"})
    with pytest.raises(errors.ArgumentTypeError):
        optimizers.optimizer(3)


# ---------------------------------------------------------------------------------------------
# stax


def _np_tree(t):
    return qb.tree_util.tree_map(lambda x: x.numpy() if isinstance(x, qb.Tensor) else x, t)



def _stax_cases(s):
    """(layer, input_shape, input index, rng) cases, built from the module ``s`` (stax or jax's)."""
    return [
        (s.Conv(4, (3, 3), padding="SAME"), (-1, 6, 6, 3), 0, False),
        (s.Conv(2, (2, 3), strides=(2, 1)), (2, 6, 6, 3), 0, False),
        (s.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2), padding="SAME"), (2, 6, 6, 3), 0, False),
        (s.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"), (2, 6, 6, 3), 0, False),
        (s.ConvTranspose(2, (2, 2), strides=(2, 2)), (2, 6, 6, 3), 0, False),
        (s.Conv1DTranspose(2, (3,), strides=(2,), padding="SAME"), (2, 5, 3), 1, False),
        (s.MaxPool((2, 2), strides=(2, 2)), (-1, 6, 6, 3), 0, False),
        (s.AvgPool((3, 3), strides=(2, 2), padding="SAME"), (2, 6, 6, 3), 0, False),
        (s.SumPool((2, 3)), (2, 6, 6, 3), 0, False),
        (s.MaxPool((2, 2), spec="NCHW"), (2, 6, 6, 3), 0, False),
        (s.BatchNorm(), (2, 6, 6, 3), 0, False),
        (s.BatchNorm(axis=(0, 1), center=False), (2, 6, 6, 3), 0, False),
        (s.serial(s.Flatten, s.Dense(5), s.Gelu, s.Dense(3), s.LogSoftmax), (2, 6, 6, 3), 0, False),
        (s.serial(s.FanOut(2), s.parallel(s.Conv(3, (1, 1)), s.Identity), s.FanInSum), (2, 6, 6, 3), 0, False),
        (s.serial(s.FanOut(3), s.parallel(s.Tanh, s.Sigmoid, s.Elu), s.FanInConcat(axis=1)), (2, 6, 6, 3), 0, False),
        (s.serial(s.Softplus, s.LeakyRelu, s.Selu, s.Exp, s.Softmax, s.Relu), (2, 6, 6, 3), 0, False),
        (s.shape_dependent(lambda shp: s.Dense(shp[-1])), (2, 6, 6, 3), 0, False),
        # dropout: the same keep mask as JAX for the same key (rate is the keep probability, as JAX's)
        (s.serial(s.Dense(4), s.Dropout(0.6)), (3, 5), 2, True),
        (s.Dropout(0.6, mode="test"), (3, 5), 2, True),
    ]


INIT_CHECKED = (2, 13)  # JAX's init compiles slowly: its parameters are compared for these cases (and in the mnist test)


def test_stax_layers_match_jax():
    rs = np.random.RandomState(0)
    xs = [rs.randn(2, 6, 6, 3), rs.randn(2, 5, 3), rs.randn(3, 5)]
    cases, jcases = _stax_cases(stax), _stax_cases(jstax)
    jshapes = {}

    def jax_init(key):  # the output shapes are Python values, recorded while tracing
        out = []
        for j in INIT_CHECKED:
            shape, params = jcases[j][0][0](key, jcases[j][1])
            jshapes[j] = shape
            out.append(params)
        return out

    def jax_apply(all_params, rng, xs):
        return [apply(p, xs[ix], **({"rng": rng} if use_rng else {})) for p, ((_, apply), _, ix, use_rng) in zip(all_params, jcases)]

    jparams = dict(zip(INIT_CHECKED, jax.jit(jax_init)(JKEY)))
    qparams = []
    for j, ((init, _), shp, _, _) in enumerate(cases):
        shape, params = init(KEY, shp)
        if j in jparams:
            _leaves_close(params, jparams[j], 1e-13, 1e-13)
            assert tuple(shape) == tuple(int(d) for d in jshapes[j]), (j, shape, jshapes[j])
        else:
            assert tuple(shape) == _eval_out_shape(jcases[j], shp), (j, shape)
        qparams.append(params)
    want = jax.jit(jax_apply)(_np_tree(qparams), jax.random.PRNGKey(3), xs)
    for j, ((_, apply), _, ix, use_rng) in enumerate(cases):
        got = apply(qparams[j], qb.asarray(xs[ix]), **({"rng": qb.random.PRNGKey(3)} if use_rng else {}))
        _leaves_close(got, want[j], 1e-11, 1e-12)


def _eval_out_shape(jcase, shp):
    """JAX's init_fun output shape without drawing JAX's parameters: init under eval_shape."""
    (init, _), _, _, _ = jcase
    box = []

    def f(key):
        shape, p = init(key, shp)
        box.append(shape)
        return p

    jax.eval_shape(f, JKEY)
    return tuple(int(d) for d in box[0])


def test_stax_dtypes():
    # float32 parameters and inputs stay float32; float32 data through the default float64
    # parameters is promoted (as jnp.dot with x64)
    f32 = dict(W_init=stax.glorot(dtype=qb.float32), b_init=stax.randn(dtype=qb.float32))
    init, apply = stax.serial(stax.Conv(2, (2, 2), **f32), stax.BatchNorm(beta_init=initializers.zeros, gamma_init=initializers.ones), stax.Relu)
    _, params = init(KEY, (2, 4, 4, 1))
    x32 = np.random.RandomState(0).rand(2, 4, 4, 1).astype(np.float32)
    assert apply(params, qb.asarray(x32)).dtype == qb.float64  # BatchNorm's default float64 gamma/beta
    init, apply = stax.serial(stax.Conv(2, (2, 2), **f32), stax.MaxPool((2, 2)), stax.Flatten, stax.Dense(3, **f32), stax.Softmax)
    _, params = init(KEY, (2, 4, 4, 1))
    out = qb.jit(apply)(params, qb.asarray(x32))
    assert out.dtype == qb.float32 and out.shape == (2, 3)
    g = qb.grad(lambda p: qb.sum(apply(p, x32)[:, 0]))(params)
    assert all(leaf.dtype == qb.float32 for leaf in qb.tree_util.tree_leaves(g))
    _, p64 = stax.Dense(3)[0](KEY, (2, 4))
    assert stax.Dense(3)[1](p64, x32[:, :, 0, 0]).dtype == qb.float64


def test_stax_errors():
    with pytest.raises(errors.InvalidArgumentError):
        stax.Dropout(0.5)[1]((), qb.ones(3))
    with pytest.raises(errors.ArgumentTypeError):
        stax.Dense("ten")
    with pytest.raises(errors.ShapeError):
        stax.Dense(0)
    with pytest.raises(errors.ArgumentTypeError):
        stax.Dense(3)[0](KEY, None)
    with pytest.raises(errors.ArgumentTypeError):
        stax.Conv(3, 3)
    with pytest.raises(errors.ShapeError):
        stax.Conv(3, (3, 3), padding="FULL")
    with pytest.raises(errors.ShapeError):
        stax.Conv(3, (3, 3))[0](KEY, (1, 5, 5))
    with pytest.raises(errors.ArgumentTypeError):
        stax.GeneralConv(None, 3, (3, 3))
    with pytest.raises(errors.ShapeError):
        stax.GeneralConv(("NHWC", "HWIO", "NHWX"), 3, (3, 3))
    with pytest.raises(errors.ArgumentTypeError):
        stax.serial(stax.Relu, 3)
    with pytest.raises(errors.ArgumentTypeError):
        stax.elementwise("tanh")
    with pytest.raises(errors.ShapeError):
        stax.MaxPool((2, 2))[1]((), qb.ones((4, 4)))
    with pytest.raises(errors.ArgumentTypeError):
        stax.FanOut(None)


def test_mnist_classifier_flow():
    """JAX's examples/mnist_classifier.py on a small batch: a Conv + Dense net from stax,
    adam under jit, the loss decreasing, and the numbers equal to JAX's (float64)."""
    rs = np.random.RandomState(1)
    images = rs.rand(8, 6, 6, 1)
    labels = np.eye(4)[rs.randint(0, 4, size=8)]

    def make(s):
        return s.serial(s.Conv(4, (3, 3), strides=(2, 2), padding="SAME"), s.Relu, s.Flatten, s.Dense(8), s.Relu, s.Dense(4), s.LogSoftmax)

    def run(s, opt, np_, rnd, jit, grad, key, xs, ys):
        init_random_params, predict = make(s)

        def loss(params, batch):
            inputs, targets = batch
            preds = predict(params, inputs)
            return -np_.mean(np_.sum(preds * targets, axis=1))

        opt_init, opt_update, get_params = opt.adam(0.01)

        @jit
        def update(i, opt_state, batch):
            params = get_params(opt_state)
            return opt_update(i, grad(loss)(params, batch), opt_state)

        _, init_params = (init_random_params(key, (-1, 6, 6, 1)) if jit is qb.jit else (None, jit(lambda k: init_random_params(k, (-1, 6, 6, 1))[1])(key)))
        opt_state = opt_init(init_params)
        jloss = jit(loss)
        losses = [float(jloss(init_params, (xs, ys)))]
        for i in range(4):
            opt_state = update(i, opt_state, (xs, ys))
            losses.append(float(jloss(get_params(opt_state), (xs, ys))))
        return losses, get_params(opt_state)

    ql, qp = run(stax, optimizers, qb, qb.random, qb.jit, qb.grad, qb.random.PRNGKey(0), qb.array(images), qb.array(labels))
    jl, jp = run(jstax, jopt, jnp, jax.random, jax.jit, jax.grad, jax.random.PRNGKey(0), images, labels)
    assert all(b < a for a, b in zip(ql, ql[1:])), ql
    np.testing.assert_allclose(ql, jl, rtol=1e-10)
    _leaves_close(qp, jp, 1e-9, 1e-12)


# ---------------------------------------------------------------------------------------------
# docstring examples

import quabla.example_libraries as _el  # noqa: E402
from quabla import flatten_util as _fu  # noqa: E402

DOCTESTS = [t for m in (_fu, initializers, stax, optimizers, _el) for t in doctest.DocTestFinder().find(m) if t.examples]


def test_docstring_examples():
    failed = []
    for test in DOCTESTS:
        test.globs = {"qb": qb, "round": builtins.round}
        out = []
        r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        r.run(test, out=out.append)
        if r.failures:
            failed.append("".join(out))
    assert not failed, "\n".join(failed)
