"""quabla.scipy.spatial.transform (Rotation, Slerp) and quabla.scipy.cluster.vq against
jax.scipy.spatial.transform and jax.scipy.cluster.vq (x64): values eagerly and under jit,
Euler sequences with gimbal lock, gradients, vmap, float32, typed errors, docstrings."""

import builtins
import doctest
import warnings

import numpy as np
import pytest

import quabla as qb
import quabla.scipy.cluster as qcl
import quabla.scipy.cluster.vq as qvq
import quabla.scipy.spatial as qsp
import quabla.scipy.spatial.transform as qst
from breadth_util import assert_close
from quabla import errors

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.cluster.vq as jvq  # noqa: E402
import jax.scipy.spatial.transform as jst  # noqa: E402
from scipy.spatial.transform import Rotation as SR  # noqa: E402

R, JR = qst.Rotation, jst.Rotation
RNG = np.random.default_rng(7)
QUATS = RNG.normal(size=(6, 4))
QUATS[1] = [0.0, 0.0, 0.0, -2.0]  # the identity, negated
QUATS[2] = [1.0, -0.5, 0.2, -0.3]  # w < 0
QUATS[3] = [0.0, 1e-5, 0.0, 1.0]  # a tiny angle (the series branch)
QUATS[4] = [0.3, 0.9, -0.2, 1e-9]  # close to pi
SEQS = [a + b + c for a in "xyz" for b in "xyz" for c in "xyz" if a != b and b != c]
SEQS = SEQS + [s.upper() for s in SEQS]


def _maps(mod, q, v, qr, rv, q3, mats):
    """Every map of Rotation on the same data, for either library."""
    r = mod.Rotation.from_quat(q)
    out = {"from_quat": r.quat, "as_matrix": r.as_matrix(), "as_mrp": r.as_mrp(), "magnitude": r.magnitude(), "inv": r.inv().quat}
    for deg in (False, True):
        out[f"as_rotvec {deg}"] = r.as_rotvec(degrees=deg)
        out[f"from_rotvec {deg}"] = mod.Rotation.from_rotvec(rv * (57.0 if deg else 1.0), degrees=deg).quat
    for can in (False, True):
        for sf in (False, True):
            out[f"as_quat {can} {sf}"] = r.as_quat(canonical=can, scalar_first=sf)
    for inv in (False, True):
        out[f"apply {inv}"] = r.apply(v, inverse=inv)
        out[f"apply one vector {inv}"] = r.apply(v[0], inverse=inv)
        out[f"apply one rotation {inv}"] = r[2].apply(v, inverse=inv)
    out["mul"] = (r * mod.Rotation.from_quat(qr)).quat
    out["mul broadcast"] = (r * r[0]).quat
    out["from_matrix"] = mod.Rotation.from_matrix(mats).quat
    out["from_mrp"] = mod.Rotation.from_mrp(rv).quat
    out["batch (2, 3)"] = mod.Rotation.from_quat(q3).as_euler("zxz")
    return out


def test_maps_match_jax():
    v = RNG.normal(size=(6, 3))
    rv = np.concatenate([RNG.normal(size=(4, 3)), [[0.0, 0.0, 0.0], [1e-4, 0.0, -2e-4], [0.0, 3.0, 0.0]]])
    # Rotations by pi about x, y, z and about a diagonal, and generic ones: every candidate of
    # Shepperd's method in from_matrix is the largest once.
    mrv = np.array([[np.pi, 0, 0], [0, np.pi, 0], [0, 0, np.pi], [2.0, 2.0, 1.0], [0.1, -0.2, 0.3], [0.0, 0.0, 0.0]])
    mats = np.concatenate([SR.from_rotvec(mrv).as_matrix(), SR.from_quat(QUATS).as_matrix()])
    args = (QUATS, v, QUATS[::-1], rv, RNG.normal(size=(2, 3, 4)), mats)
    want = jax.jit(lambda *a: _maps(jst, *a))(*args)
    eager = _maps(qst, *[qb.array(a) for a in args])
    jitted = qb.jit(lambda *a: _maps(qst, *a))(*[qb.array(a) for a in args])
    assert set(eager) == set(want)
    for k in want:
        assert_close(eager[k], want[k], 1e-12, 1e-13, k)
        assert_close(jitted[k], want[k], 1e-12, 1e-13, "jit " + k)


def _euler_cases():
    a = RNG.uniform(-3.0, 3.0, size=(8, 3))
    a[:, 1] = RNG.uniform(0.1, 1.4, size=8)
    a[0] = [0.3, 0.0, -0.7]  # gimbal lock for symmetric sequences (middle 0)
    a[1] = [0.3, np.pi, -0.7]  # and at pi
    a[2] = [0.3, np.pi / 2, 1.1]  # gimbal lock for Tait-Bryan sequences
    a[3] = [-0.4, -np.pi / 2, 0.2]
    return a


def _wrapped(x, period):
    return (np.asarray(x) + period / 2) % period - period / 2


def test_euler_all_sequences_match_scipy():
    # All 24 sequences against SciPy (fast; JAX's conventions are SciPy's: the angles agree
    # modulo 2 pi, SciPy keeping +pi where JAX gives -pi).
    ang = _euler_cases()
    s, c = np.sin(0.35), np.cos(0.35)
    locked = np.array([[0, 0, s, c], [s, 0, 0, c], [0, s, 0, c], [c, s, 0, 0], [0, c, s, 0], [s, 0, c, 0],
                       [0.5, 0.5, 0.5, 0.5], [np.sqrt(0.5), 0, 0, np.sqrt(0.5)], [0, np.sqrt(0.5), 0, np.sqrt(0.5)]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns at gimbal lock
        for seq in SEQS:
            for deg in (False, True):
                x = ang * (180 / np.pi) if deg else ang
                q = R.from_euler(seq, qb.array(x), degrees=deg).quat
                assert_close(q, SR.from_euler(seq, x, degrees=deg).as_quat(), 1e-12, 1e-13, f"from_euler {seq} {deg}")
                qs = np.concatenate([q.numpy(), locked])
                got = R(qb.array(qs)).as_euler(seq, degrees=deg).numpy()
                want = SR.from_quat(qs).as_euler(seq, degrees=deg)
                period = 360.0 if deg else 2 * np.pi
                assert_close(_wrapped(got - want, period), np.zeros_like(want), 0, 1e-9 if deg else 1e-11, f"as_euler {seq} {deg}")


JAX_SEQS = ["xyz", "ZYX", "zxz", "YXY", "xzy", "ZXY"]


def test_euler_sequences_match_jax():
    ang = _euler_cases()
    s, c = np.sin(0.35), np.cos(0.35)
    locked = np.array([[0, 0, s, c], [s, 0, 0, c], [0, s, 0, c], [c, s, 0, 0], [0.5, 0.5, 0.5, 0.5], [np.sqrt(0.5), 0, 0, np.sqrt(0.5)]])
    for n, seq in enumerate(JAX_SEQS):
        deg = n == 1
        x = ang * (180 / np.pi) if deg else ang
        j = JR.from_euler(seq, x, degrees=deg)
        assert_close(R.from_euler(seq, qb.array(x), degrees=deg).quat, j.quat, 1e-12, 1e-13, f"from_euler {seq}")
        # as_euler of JAX's quaternions, so that both see the same gimbal cases; exactly locked ones too.
        qs = np.concatenate([np.asarray(j.quat), locked])
        tol = 1e-9 if deg else 1e-11
        assert_close(R(qb.array(qs)).as_euler(seq, degrees=deg), JR(jnp.asarray(qs)).as_euler(seq, degrees=deg), tol, tol, f"as_euler {seq}")


def test_euler_shapes_and_single_axis():
    assert_close(R.from_euler("z", 0.5).quat, JR.from_euler("z", 0.5).quat, 1e-15, 1e-15)
    col = np.array([[0.1], [0.2], [-0.3]])
    assert_close(R.from_euler("Y", qb.array(col)).quat, JR.from_euler("Y", col).quat, 1e-15, 1e-15)
    two = RNG.normal(size=(4, 2))
    assert_close(R.from_euler("xz", qb.array(two)).quat, JR.from_euler("xz", two).quat, 1e-14, 1e-15)
    assert_close(R.from_euler("XZ", qb.array(two)).quat, JR.from_euler("XZ", two).quat, 1e-14, 1e-15)
    assert R.from_euler("xyz", [1, 2, 3]).quat.shape == (4,)  # a list (JAX needs an array)
    with pytest.raises(errors.ShapeError):
        R.from_euler("z", qb.array([0.1, 0.2]))


def test_jit_pytree_and_vmap():
    ang = _euler_cases()

    @qb.jit
    def f(r, v):
        r2 = r * r.inv()[0]
        return r2, r2.apply(v), r.as_euler("ZXZ"), r.as_rotvec(), r.magnitude(), r.as_quat(canonical=True)

    def g(r, v):
        r2 = r * r.inv()[0]
        return r2, r2.apply(v), r.as_euler("ZXZ"), r.as_rotvec(), r.magnitude(), r.as_quat(canonical=True)

    v = RNG.normal(size=(8, 3))
    got = f(R.from_euler("xyz", qb.array(ang)), qb.array(v))
    want = jax.jit(lambda a, v: g(JR.from_euler("xyz", a), v))(ang, v)
    assert isinstance(got[0], R)
    assert_close(got[0].quat, want[0].quat, 1e-12, 1e-13, "jit rotation")
    for a, b in zip(got[1:], want[1:]):
        assert_close(a, b, 1e-11, 1e-12, "jit")
    leaves, tree = qb.tree_util.tree_flatten(R.identity(2))
    assert len(leaves) == 1 and isinstance(qb.tree_util.tree_unflatten(tree, leaves), R)
    # vmap over quaternions equals the batched maps.
    q = qb.array(QUATS)
    vm = qb.vmap(lambda x: R.from_quat(x).as_euler("zyx", degrees=True))(q)
    assert_close(vm, R.from_quat(q).as_euler("zyx", degrees=True), 1e-12, 1e-12, "vmap")
    vm = qb.vmap(lambda r: r.as_matrix())(R.from_quat(q))
    assert_close(vm, R.from_quat(q).as_matrix(), 1e-14, 1e-14, "vmap pytree")
    # A traced degrees flag (a jit argument) takes the where path.
    deg = qb.jit(lambda a, d: R.from_euler("xyz", a, degrees=d).as_rotvec(degrees=d))(qb.array(ang * 50), qb.array(True))
    assert_close(deg, R.from_euler("xyz", qb.array(ang * 50), degrees=True).as_rotvec(degrees=True), 1e-12, 1e-12, "traced degrees")
    # vmap of a Slerp over times.
    sl = qst.Slerp.init(qb.array([0.0, 1.0, 2.0]), R.from_rotvec(qb.array(ang[:3])))
    assert_close(qb.vmap(lambda t: sl(t).quat)(qb.array([0.5, 1.5])), sl(qb.array([0.5, 1.5])).quat, 1e-14, 1e-14, "vmap slerp")


def test_grads_match_jax():
    rv = np.array([0.3, -0.4, 0.5])
    x = np.array([1.0, 2.0, -0.5])

    def loss(mod):
        def f(v):
            r = mod.Rotation.from_rotvec(v)
            return (r.apply(x) ** 2 * np.array([1.0, 2.0, 3.0])).sum() + r.as_euler("XYZ").sum() + r.as_mrp().sum()
        return f

    assert_close(qb.grad(loss(qst))(qb.array(rv)), jax.jit(jax.grad(loss(jst)))(rv), 1e-10, 1e-12, "grad rotvec")

    def loss2(mod, np_):
        def f(q):
            r = mod.Rotation.from_quat(q)
            s = mod.Rotation.from_euler("zyx", np_.stack([q[0], q[1], q[2]]))
            return (r * s).as_rotvec().sum() + r.magnitude() + mod.Rotation.from_matrix(r.as_matrix()).as_quat(canonical=True).sum()
        return f

    q = np.array([0.2, -0.3, 0.4, 0.8])
    assert_close(qb.grad(loss2(qst, qb.numpy))(qb.array(q)), jax.jit(jax.grad(loss2(jst, jnp)))(q), 1e-10, 1e-12, "grad quat")
    # At the identity the small-angle branches have finite gradients (JAX's are NaN).
    g = qb.grad(lambda v: R.from_rotvec(v).as_rotvec().sum())(qb.array(np.zeros(3)))
    assert_close(g, np.ones(3), 1e-14, 1e-14, "grad at identity")
    gm = qb.grad(lambda q: R.from_quat(q).magnitude())(qb.array([0.0, 0.0, 0.0, 1.0]))
    assert np.all(np.isfinite(gm.numpy()))


def test_mean_and_concatenate():
    q = RNG.normal(size=(5, 4))
    w = np.array([0.5, 1.0, 2.0, 0.1, 1.5])
    for weights in (None, w):
        got = R.from_quat(qb.array(q)).mean(None if weights is None else qb.array(weights))
        want = JR.from_quat(q).mean(weights)
        assert got.single
        assert_close(got.as_matrix(), want.as_matrix(), 1e-10, 1e-12, "mean")  # sign-free
    a = RNG.normal(size=(3, 3)) * 0.3
    g = qb.grad(lambda a: R.from_rotvec(a).mean().magnitude())(qb.array(a))  # magnitude: sign-free
    assert_close(g, jax.jit(jax.grad(lambda a: JR.from_rotvec(a).mean().magnitude()))(a), 1e-8, 1e-10, "grad mean")
    c = R.concatenate([R.from_quat(qb.array(q[:2])), R.from_quat(qb.array(q[2])), R.identity(2)])
    assert_close(c.quat, np.concatenate([JR.from_quat(q[:3]).quat, np.tile([0.0, 0, 0, 1], (2, 1))]), 1e-15, 1e-15)
    assert len(c) == 5 and c[1:3].quat.shape == (2, 4) and c[qb.array([4, 0])].quat.shape == (2, 4)
    assert R.identity(3, dtype=qb.float32).quat.dtype == qb.float32
    rr = R.random(qb.random.PRNGKey(1), 1000)
    n = np.linalg.norm(rr.quat.numpy(), axis=-1)
    assert_close(n, np.ones(1000), 1e-12, 1e-12)
    # Uniform rotations: the mean of cos(angle) is -1/3 * ... E[trace(R)] = 0.
    assert abs(float(qb.numpy.mean(qb.numpy.trace(rr.as_matrix(), axis1=-2, axis2=-1)))) < 0.15


def test_slerp_matches_jax():
    ang = RNG.normal(size=(4, 3))
    kt = np.array([0.0, 0.5, 2.0, 3.0])
    t = np.array([-0.5, 0.0, 0.25, 0.5, 1.7, 3.0, 4.0])
    js = jax.jit(lambda k, a: jst.Slerp.init(k, JR.from_euler("zxy", a)))(kt, ang)
    s = qst.Slerp.init(qb.array(kt), R.from_euler("zxy", qb.array(ang)))
    assert_close(s.rotvecs, js.rotvecs, 1e-12, 1e-13, "rotvecs")
    want = jax.jit(lambda sl, tt: sl(tt).quat)(js, t)
    assert_close(s(qb.array(t)).quat, want, 1e-12, 1e-13, "slerp")
    assert_close(s(1.7).quat, want[4], 1e-12, 1e-13, "slerp scalar")
    assert s(1.7).single
    got = qb.jit(lambda sl, tt: sl(tt).as_quat())(s, qb.array(t))
    assert_close(got, want, 1e-12, 1e-13, "slerp jit")
    # Gradient through the key rotations and the times.
    f = lambda mod, a, tt: mod.Slerp.init(kt, mod.Rotation.from_rotvec(a))(tt).as_rotvec().sum()  # noqa: E731
    g = qb.grad(lambda a, tt: f(qst, a, tt), argnums=(0, 1))(qb.array(ang), qb.array(t[2:5]))
    gj = jax.jit(jax.grad(lambda a, tt: f(jst, a, tt), argnums=(0, 1)))(ang, t[2:5])
    assert_close(g, gj, 1e-9, 1e-11, "slerp grad")
    s32 = qst.Slerp.init(qb.array(kt), R.from_euler("zxy", qb.array(ang.astype(np.float32))))
    assert s32(qb.array(t)).quat.dtype == qb.float32


def test_float32_stays_float32():
    q = R.from_quat(qb.array(QUATS.astype(np.float32)))
    v = qb.array(np.ones((6, 3), np.float32))
    outs = [q.quat, q.as_matrix(), q.as_rotvec(), q.as_rotvec(degrees=True), q.as_mrp(), q.magnitude(), q.as_euler("xyz"),
            q.as_euler("ZXZ", degrees=True), q.apply(v), q.inv().quat, (q * q).quat, q.mean().quat, q.as_quat(True, True),
            R.from_matrix(q.as_matrix()).quat, R.from_rotvec(q.as_rotvec()).quat, R.from_mrp(q.as_mrp()).quat,
            R.from_euler("xyz", q.as_euler("xyz")).quat]
    for o in outs:
        assert o.dtype == qb.float32
    j = JR.from_quat(QUATS.astype(np.float32))
    assert_close(q.as_euler("xyz"), j.as_euler("xyz"), 2e-5, 2e-5)
    assert R.from_euler("xyz", qb.array(np.ones(3, np.int32))).quat.dtype == qb.float32  # int32 -> float32, as JAX's
    assert R.from_euler("xyz", [1, 2, 3]).quat.dtype == qb.float64


def test_vq_matches_jax():
    obs = RNG.normal(size=(7, 3))
    cb = RNG.normal(size=(4, 3))
    obs[0] = cb[2]  # a zero distance
    for o, c in ((obs, cb), (obs[:, 0], cb[:, 0]), (obs.astype(np.float32), cb.astype(np.float32))):
        codes, d = qvq.vq(qb.array(o), qb.array(c))
        jc, jd = jvq.vq(o, c)
        assert codes.dtype == qb.int32
        assert_close(codes, np.asarray(jc).astype(np.int32), what="codes")
        assert_close(d, jd, 1e-6 if o.dtype == np.float32 else 1e-13, 1e-6 if o.dtype == np.float32 else 1e-14, "dists")
        assert d.dtype == (qb.float32 if o.dtype == np.float32 else qb.float64)
    # Ties: the first nearest code.
    codes, _ = qvq.vq(qb.array([[0.0], [1.0]]), qb.array([[1.0], [-1.0], [1.0]]))
    assert codes.tolist() == [0, 0]
    jc, jd = qb.jit(qvq.vq)(qb.array(obs), qb.array(cb))
    assert_close(jd, jvq.vq(obs, cb)[1], 1e-13, 1e-14, "jit")
    f = lambda mod, o, c: mod.vq(o, c)[1].sum()  # noqa: E731
    g = qb.grad(lambda o, c: f(qvq, o, c), argnums=(0, 1))(qb.array(obs[1:]), qb.array(cb))
    gj = jax.grad(lambda o, c: f(jvq, o, c), argnums=(0, 1))(obs[1:], cb)
    assert_close(g, gj, 1e-12, 1e-13, "grad")
    gz = qb.grad(lambda o: qvq.vq(o, qb.array(cb))[1].sum())(qb.array(obs[:1]))
    assert_close(gz, np.zeros((1, 3)), 0, 0, "grad at a zero distance")
    ints = qvq.vq(qb.array(np.array([[1, 2]], np.int32)), qb.array(np.array([[1, 1], [5, 5]], np.int32)))[1]
    assert ints.dtype == qb.float32 and ints.tolist() == [1.0]


BAD = [
    (lambda: R.from_quat(None), errors.ArgumentTypeError),
    (lambda: R.from_quat("abcd"), errors.ArgumentTypeError),
    (lambda: R.from_quat(qb.array([1.0, 2.0, 3.0])), errors.ShapeError),
    (lambda: R.from_quat(1.0), errors.ShapeError),
    (lambda: R.from_matrix(qb.eye(4)), errors.ShapeError),
    (lambda: R.from_rotvec(qb.ones((2, 4))), errors.ShapeError),
    (lambda: R.from_rotvec(qb.ones(3), degrees="yes"), errors.ArgumentTypeError),
    (lambda: R.from_mrp([[1.0, 2.0], [3.0]]), errors.QuablaError),
    (lambda: R.from_euler("xxz", qb.ones(3)), errors.InvalidArgumentError),
    (lambda: R.from_euler("xYz", qb.ones(3)), errors.InvalidArgumentError),
    (lambda: R.from_euler("xyzx", qb.ones(4)), errors.InvalidArgumentError),
    (lambda: R.from_euler("", qb.ones(1)), errors.InvalidArgumentError),
    (lambda: R.from_euler(3, qb.ones(3)), errors.ArgumentTypeError),
    (lambda: R.from_euler("xyz", qb.ones(2)), errors.ShapeError),
    (lambda: R.from_euler("xyz", None), errors.ArgumentTypeError),
    (lambda: R.identity().as_euler("xy"), errors.InvalidArgumentError),
    (lambda: R.identity().as_euler("abc"), errors.InvalidArgumentError),
    (lambda: R.identity().as_euler(None), errors.ArgumentTypeError),
    (lambda: R.identity()[0], errors.ArgumentTypeError),
    (lambda: len(R.identity()), TypeError),
    (lambda: R.identity(2) * 3, errors.ArgumentTypeError),
    (lambda: R.identity(2) * R.identity(3), errors.ShapeError),
    (lambda: R.identity(2).apply(qb.ones((3, 3))), errors.ShapeError),
    (lambda: R.identity(2).apply(qb.ones(4)), errors.ShapeError),
    (lambda: R.identity(2).apply(qb.ones(3), inverse=None), errors.ArgumentTypeError),
    (lambda: R.identity().mean(), errors.ShapeError),
    (lambda: R.identity(2).mean(qb.ones(3)), errors.ShapeError),
    (lambda: R.identity(2).mean(qb.ones((2, 1))), errors.ShapeError),
    (lambda: R.identity(-1), errors.InvalidArgumentError),
    (lambda: R.identity("3"), errors.ArgumentTypeError),
    (lambda: R.identity(dtype=qb.int32), errors.DTypeError),
    (lambda: R.identity(dtype="nope"), errors.DTypeError),
    (lambda: R.random(None), errors.QuablaError),
    (lambda: R.concatenate(R.identity()), errors.ArgumentTypeError),
    (lambda: R.concatenate([]), errors.InvalidArgumentError),
    (lambda: R.concatenate([R.identity(), 1]), errors.ArgumentTypeError),
    (lambda: R(None).as_matrix(), errors.ArgumentTypeError),
    (lambda: qst.Slerp.init([0.0, 1.0], R.identity()), errors.ShapeError),
    (lambda: qst.Slerp.init([0.0, 1.0], "r"), errors.ArgumentTypeError),
    (lambda: qst.Slerp.init([0.0, 1.0, 2.0], R.identity(2)), errors.ShapeError),
    (lambda: qst.Slerp.init([[0.0, 1.0]], R.identity(2)), errors.ShapeError),
    (lambda: qst.Slerp.init([0.0, 1.0], R.identity(2))(qb.ones((2, 2))), errors.ShapeError),
    (lambda: qst.Slerp.init([0.0, 1.0], R.identity(2))("t"), errors.ArgumentTypeError),
    (lambda: qvq.vq(qb.ones((3, 2)), qb.ones((4,))), errors.ShapeError),
    (lambda: qvq.vq(qb.ones((3, 2)), qb.ones((4, 3))), errors.ShapeError),
    (lambda: qvq.vq(qb.ones((2, 3, 2)), qb.ones((2, 4, 2))), errors.ShapeError),
    (lambda: qvq.vq(None, qb.ones(3)), errors.ArgumentTypeError),
    (lambda: qvq.vq(qb.ones(2), "x"), errors.QuablaError),
]


def test_typed_errors():
    for n, (f, err) in enumerate(BAD):
        with pytest.raises(err):
            f()
        try:
            f()
        except errors.QuablaError:
            pass
        except TypeError as e:  # only len() of a single rotation, which must be a TypeError
            assert n == [i for i, b in enumerate(BAD) if b[1] is TypeError][0], e


def test_docstring_examples():
    mods = (qst, qvq, qsp, qcl)
    tests = [t for m in mods for t in doctest.DocTestFinder().find(m) if t.examples]
    assert len(tests) >= 25
    for t in tests:
        t.globs = {"qb": qb, "round": builtins.round, "np": np}
        out = []
        r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        r.run(t, out=out.append)
        assert r.failures == 0, "".join(out)
    assert set(qst.__all__) == {"Rotation", "Slerp"} and qvq.__all__ == ["vq"]
